//! The filesystem I/O suite: what plain reads and writes of a given transfer
//! size cost on the filesystem under test, with criterion's throughput report.
//!
//! Groups (one transfer = one system call of that size, except parallel):
//! - `buffered_write`: sequential `pwrite`s through the page cache, wrapping over a file;
//! - `buffered_read`: sequential `pread`s of a file that sits in the page cache;
//! - `buffered_random_read`: `pread`s at random 4 KiB-aligned offsets of that file;
//! - `direct_io_write`, `direct_io_read`: the same with O_DIRECT (skipped, with a
//!   message, where the filesystem refuses O_DIRECT);
//! - `parallel_buffered_write`: 1, 2, 4, 8 and 16 threads, each writing its own
//!   file; one iteration is one transfer per thread.
//!
//! Environment:
//! - `IOPULSE_BENCH_DIR`: where the files go (default: the system temp dir). A
//!   fresh `iopulse-bench-*` directory is made inside it and removed at the end,
//!   on panic, and on SIGINT/SIGTERM/SIGHUP.
//! - `IOPULSE_BENCH_SIZES`: transfer sizes, e.g. `4k,1m` (default 4k,64k,1m,16m,64m).
//! - `IOPULSE_BENCH_PARALLEL_SIZES`: per-thread transfer sizes of the parallel
//!   group (default 64k,1m).
//!
//! Bytes per iteration are one transfer (at most 64 MiB; 16 MiB for the
//! parallel group by default), so `cargo bench --bench filesystem_io -- --quick`
//! finishes in a few minutes.

use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput, measurement::WallTime};
use iopulse::testing::Rng;
use iopulse::testing::SlotBuffers;
use std::fs::{File, OpenOptions};
use std::hint::black_box;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const ALIGN: usize = 4096;
/// Smallest region a sequential writer wraps over, so small transfers do not hit one page.
const MIN_REGION: u64 = 64 * MIB;
/// Region of each parallel writer's file.
const PARALLEL_REGION: u64 = 16 * MIB;
const THREADS: [usize; 5] = [1, 2, 4, 8, 16];

/// The benchmark directory: removed when dropped (end of run, or unwinding from a
/// panic) and by the signal thread on SIGINT/SIGTERM/SIGHUP.
struct BenchDir {
    dir: Option<tempfile::TempDir>,
}

impl BenchDir {
    fn create() -> Self {
        let base = std::env::var_os("IOPULSE_BENCH_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new()
            .prefix("iopulse-bench-")
            .tempdir_in(&base)
            .unwrap_or_else(|e| panic!("cannot create a benchmark directory in {}: {e}", base.display()));
        let path = dir.path().to_path_buf();
        std::thread::Builder::new()
            .name("bench-signals".into())
            .spawn(move || {
                use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
                let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
                    eprintln!("warning: no signal handler: files in {} are removed only at the end", path.display());
                    return;
                };
                if let Some(signal) = signals.forever().next() {
                    let _ = std::fs::remove_dir_all(&path);
                    eprintln!("\ninterrupted: removed {}", path.display());
                    std::process::exit(128 + signal);
                }
            })
            .expect("signal thread");
        Self { dir: Some(dir) }
    }

    fn path(&self) -> &Path {
        self.dir.as_ref().expect("bench dir").path()
    }
}

impl Drop for BenchDir {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let path = dir.path().to_path_buf();
            if let Err(e) = dir.close() {
                eprintln!("warning: could not remove {}: {e}", path.display());
            }
        }
    }
}

/// "4k,64k,1m" → bytes. Powers of two, like iopulse's own sizes.
fn sizes_from_env(var: &str, default: &[u64]) -> Vec<u64> {
    let Ok(text) = std::env::var(var) else { return default.to_vec() };
    text.split(',')
        .map(|s| {
            let s = s.trim().to_ascii_lowercase();
            let (digits, mult) = match s.chars().last() {
                Some('k') => (&s[..s.len() - 1], KIB),
                Some('m') => (&s[..s.len() - 1], MIB),
                Some('g') => (&s[..s.len() - 1], 1024 * MIB),
                _ => (&s[..], 1),
            };
            let n: u64 = digits.parse().unwrap_or_else(|_| panic!("{var}: cannot read size {s:?} (e.g. 4k, 1m)"));
            assert!(n > 0 && (n * mult).is_multiple_of(512), "{var}: {s} must be a positive multiple of 512 bytes");
            n * mult
        })
        .collect()
}

fn label(bytes: u64) -> String {
    match bytes {
        b if b >= MIB && b % MIB == 0 => format!("{}MiB", b / MIB),
        b if b >= KIB && b % KIB == 0 => format!("{}KiB", b / KIB),
        b => format!("{b}B"),
    }
}

/// An aligned buffer of random bytes (aligned so O_DIRECT accepts it).
fn random_buffer(len: u64, seed: u64) -> SlotBuffers {
    let mut buf = SlotBuffers::new(1, len as usize, ALIGN).expect("allocate buffer");
    Rng::new(seed, 0xbe4c).fill_bytes(buf.slot_mut(0));
    buf
}

fn open(path: &Path, direct: bool, create: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .custom_flags(if direct { libc::O_DIRECT } else { 0 })
        .open(path)
}

/// Writes `len` bytes of random data to a new file (buffered, flushed to the device).
fn lay_out(path: &Path, len: u64) -> File {
    let file = open(path, false, true).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    let chunk = random_buffer(len.min(8 * MIB), 0x1a70);
    let mut at = 0;
    while at < len {
        let n = chunk.slot(0).len().min((len - at) as usize);
        file.write_all_at(&chunk.slot(0)[..n], at).unwrap_or_else(|e| panic!("lay out {}: {e}", path.display()));
        at += n as u64;
    }
    file.sync_all().expect("fsync layout");
    file
}

/// Whether the directory's filesystem accepts O_DIRECT; `Err` says why not.
fn direct_probe(dir: &Path) -> Result<(), String> {
    let path = dir.join("direct-probe.dat");
    let result = (|| {
        let file = open(&path, true, true).map_err(|e| format!("open with O_DIRECT: {e}"))?;
        let buf = random_buffer(ALIGN as u64, 1);
        file.write_all_at(buf.slot(0), 0).map_err(|e| format!("O_DIRECT write: {e}"))?;
        Ok(())
    })();
    let _ = std::fs::remove_file(&path);
    result
}

/// A file that sequential transfers walk through, wrapping at the end.
struct Cursor {
    at: u64,
    region: u64,
}

impl Cursor {
    fn next(&mut self, len: u64) -> u64 {
        if self.at + len > self.region {
            self.at = 0;
        }
        let at = self.at;
        self.at += len;
        at
    }
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    // Every iteration is at least one system call and possibly milliseconds of device
    // time: flat sampling, few samples, bounded time.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
}

/// The shared file that the read groups read from, laid out on first use.
struct ReadFile {
    path: PathBuf,
    len: u64,
    laid_out: bool,
}

impl ReadFile {
    fn ensure(&mut self) -> &Path {
        if !self.laid_out {
            drop(lay_out(&self.path, self.len));
            // Into the page cache once, so the buffered groups start warm.
            let file = open(&self.path, false, false).expect("open read file");
            let mut buf = vec![0u8; 8 * MIB as usize];
            let mut at = 0;
            while at < self.len {
                at += file.read_at(&mut buf, at).expect("warm read file") as u64;
            }
            self.laid_out = true;
        }
        &self.path
    }
}

fn buffered_and_direct(c: &mut Criterion, dir: &Path, sizes: &[u64], read_file: &mut ReadFile) {
    let direct = direct_probe(dir);
    if let Err(why) = &direct {
        println!("SKIP direct_io_write, direct_io_read: {} refuses O_DIRECT ({why})", dir.display());
    }
    for (name, is_direct) in [("buffered_write", false), ("direct_io_write", true)] {
        if is_direct && direct.is_err() {
            continue;
        }
        let mut g = c.benchmark_group(name);
        configure(&mut g);
        for &size in sizes {
            let region = size.max(MIN_REGION);
            g.throughput(Throughput::Bytes(size));
            let path = dir.join(format!("{name}-{}.dat", label(size)));
            // Set up on first use (criterion calls the closure once per sample, and not
            // at all when a filter excludes the bench).
            let mut state = None;
            g.bench_function(BenchmarkId::from_parameter(label(size)), |b| {
                let (file, buf, cursor) = state.get_or_insert_with(|| {
                    drop(lay_out(&path, region));
                    let file = open(&path, is_direct, false).expect("open write file");
                    (file, random_buffer(size, size), Cursor { at: 0, region })
                });
                b.iter(|| file.write_all_at(buf.slot(0), cursor.next(size)).expect("write"));
            });
            drop(state);
            let _ = std::fs::remove_file(&path);
        }
        g.finish();
    }

    for (name, is_direct, random) in
        [("buffered_read", false, false), ("buffered_random_read", false, true), ("direct_io_read", true, false)]
    {
        if is_direct && direct.is_err() {
            continue;
        }
        let mut g = c.benchmark_group(name);
        configure(&mut g);
        for &size in sizes {
            g.throughput(Throughput::Bytes(size));
            let len = read_file.len;
            let slots = (len - size) / ALIGN as u64 + 1;
            let mut state = None;
            g.bench_function(BenchmarkId::from_parameter(label(size)), |b| {
                let (file, buf, rng, cursor) = state.get_or_insert_with(|| {
                    let file = open(read_file.ensure(), is_direct, false).expect("open read file");
                    let buf = SlotBuffers::new(1, size as usize, ALIGN).expect("buffer");
                    (file, buf, Rng::new(size, 0x5eed), Cursor { at: 0, region: len })
                });
                b.iter(|| {
                    let at = if random { rng.below(slots) * ALIGN as u64 } else { cursor.next(size) };
                    let n = file.read_at(buf.slot_mut(0), at).expect("read");
                    assert_eq!(n as u64, size, "short read at {at}");
                    black_box(buf.slot(0)[0])
                });
            });
        }
        g.finish();
    }
}

/// Persistent writer threads, one file each, started together per batch of iterations.
struct WriterPool {
    start: Arc<Barrier>,
    done: Arc<Barrier>,
    batch: Arc<AtomicU64>,
    quit: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl WriterPool {
    fn new(dir: &Path, threads: usize, size: u64) -> Self {
        let start = Arc::new(Barrier::new(threads + 1));
        let done = Arc::new(Barrier::new(threads + 1));
        let batch = Arc::new(AtomicU64::new(0));
        let quit = Arc::new(AtomicBool::new(false));
        let region = size.max(PARALLEL_REGION);
        let handles = (0..threads)
            .map(|t| {
                let path = dir.join(format!("parallel-{threads}x{}-{t}.dat", label(size)));
                let file = lay_out(&path, region);
                let (start, done, batch, quit) = (start.clone(), done.clone(), batch.clone(), quit.clone());
                std::thread::Builder::new()
                    .name(format!("bench-writer-{t}"))
                    .spawn(move || {
                        let buf = random_buffer(size, t as u64);
                        let mut cursor = Cursor { at: 0, region };
                        loop {
                            start.wait();
                            if quit.load(Ordering::Relaxed) {
                                break;
                            }
                            for _ in 0..batch.load(Ordering::Relaxed) {
                                file.write_all_at(buf.slot(0), cursor.next(size)).expect("parallel write");
                            }
                            done.wait();
                        }
                        drop(file);
                        let _ = std::fs::remove_file(&path);
                    })
                    .expect("writer thread")
            })
            .collect();
        Self { start, done, batch, quit, threads: handles }
    }

    /// Every thread writes `iters` transfers; returns the time until the last finished.
    fn run(&self, iters: u64) -> Duration {
        self.batch.store(iters, Ordering::Relaxed);
        let t0 = Instant::now();
        self.start.wait();
        self.done.wait();
        t0.elapsed()
    }
}

impl Drop for WriterPool {
    fn drop(&mut self) {
        self.quit.store(true, Ordering::Relaxed);
        self.start.wait();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn parallel_buffered_write(c: &mut Criterion, dir: &Path, sizes: &[u64]) {
    let mut g = c.benchmark_group("parallel_buffered_write");
    configure(&mut g);
    for &size in sizes {
        for threads in THREADS {
            g.throughput(Throughput::Bytes(size * threads as u64));
            let mut pool = None;
            g.bench_function(BenchmarkId::new(format!("{threads}t"), label(size)), |b| {
                let pool = pool.get_or_insert_with(|| WriterPool::new(dir, threads, size));
                b.iter_custom(|iters| pool.run(iters));
            });
            drop(pool);
        }
    }
    g.finish();
}

fn main() {
    let dir = BenchDir::create();
    println!("filesystem_io: files in {}", dir.path().display());
    let sizes = sizes_from_env("IOPULSE_BENCH_SIZES", &[4 * KIB, 64 * KIB, MIB, 16 * MIB, 64 * MIB]);
    let parallel_sizes = sizes_from_env("IOPULSE_BENCH_PARALLEL_SIZES", &[64 * KIB, MIB]);
    let max = sizes.iter().copied().max().unwrap_or(MIB);
    let mut read_file = ReadFile {
        path: dir.path().join("read.dat"),
        len: (4 * max).max(MIN_REGION).next_multiple_of(ALIGN as u64),
        laid_out: false,
    };

    let mut c = Criterion::default().configure_from_args();
    buffered_and_direct(&mut c, dir.path(), &sizes, &mut read_file);
    parallel_buffered_write(&mut c, dir.path(), &parallel_sizes);
    c.final_summary();
    drop(dir);
}
