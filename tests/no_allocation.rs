//! The hot loop allocates nothing after the start: a counting global allocator sees
//! the same number of allocations for a run of a thousand I/Os and for a run of a
//! million (set-up, merging and the report allocate the same whatever the count; an
//! allocation per I/O, or per batch, would add thousands).
//!
//! One test only in this file, and a test binary of its own (not tests/it/): the counter
//! is process-wide, so no other test may allocate in this process while it counts.

use iopulse::testing::Cluster;
use iopulse::testing::Diagnostics;
use iopulse::testing::run;
use iopulse::testing::run::StartLine;
use iopulse::testing::{replay_spec_of, spec_of};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is forwarded as it is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `realloc` is forwarded as it is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Allocations made by one run of `args` (library calls, in this process).
fn allocations_of(args: &[&str]) -> (u64, u64) {
    let spec = if args[0] == "replay" {
        replay_spec_of(args[1..].iter().copied()).unwrap()
    } else {
        spec_of(args.iter().copied()).unwrap()
    };
    // As a command does: the run's ledger (its record among it) judged before it runs.
    run::judge_ledger(&spec).unwrap();
    let cluster = Cluster::join().unwrap();
    let start_line = StartLine::new(&cluster, None);
    let diag = Diagnostics::silent();
    let stop = Arc::new(AtomicUsize::new(0));
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let outcome = run::run(&spec, &diag, stop, &start_line).unwrap();
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    let ops = outcome.result.figures.read.ops + outcome.result.figures.write.ops;
    (after - before, ops)
}

#[test]
fn the_loop_allocates_nothing_per_io() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.dat");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let t = target.to_str().unwrap();
    // Unpaced and paced (the one loop with each policy), queued and inline engines. Queued
    // engines with writes draw requests ahead into spare slots (the write path of random
    // data), also with the data shaped by ratios.
    for engine in [
        &["--engine", "null", "--queue-depth", "32"][..],
        &["--engine", "null", "--queue-depth", "8", "--dedupe-ratio", "3", "--compress-ratio", "2"][..],
        &["--engine", "sync"][..],
        &["--engine", "null", "--queue-depth", "8", "--rate-iops", "2000000"][..],
        &["--engine", "sync", "--think-time", "1us", "--think-every", "1000"][..],
    ] {
        let mut few = vec![t, "--ops", "1000", "--random", "--write-percent", "30", "--seed", "1"];
        few.extend_from_slice(engine);
        let mut many = few.clone();
        many[2] = "200000";
        // A first run warms lazily initialised state (thread-locals, caches) up.
        allocations_of(&few);
        let (a_few, ops_few) = allocations_of(&few);
        let (a_many, ops_many) = allocations_of(&many);
        assert_eq!((ops_few, ops_many), (1000, 200_000), "{engine:?}");
        assert!(
            a_many.abs_diff(a_few) <= 16,
            "{engine:?}: {a_few} allocations for 1,000 I/Os, {a_many} for 200,000: the loop allocates"
        );
    }
    // A replay (timed, and as fast as possible) recording --write-iolog: the schedule and
    // the log's table are made before the start line, whatever their length.
    let trace = |n: u64| {
        let path = dir.path().join(format!("trace-{n}.iolog"));
        let mut text = format!("fio version 3 iolog\n0 {t} add\n");
        for i in 0..n {
            // Every I/O due at once: the timed policy runs without waiting.
            let op = if i % 3 == 0 { "write" } else { "read" };
            text.push_str(&format!("0 {t} {op} {} 4096\n", (i * 7919 % 256) * 4096));
        }
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (few_trace, many_trace) = (trace(1000), trace(200_000));
    let log = dir.path().join("out.iolog");
    let log = log.to_str().unwrap();
    for extra in [&["--engine", "null"][..], &["--engine", "sync", "--as-fast-as-possible"][..]] {
        let args = |trace: &str| {
            let mut a = vec!["replay", trace, t, "--write-iolog", log];
            a.extend_from_slice(extra);
            a.iter().map(|s| s.to_string()).collect::<Vec<String>>()
        };
        let (few, many) = (args(&few_trace), args(&many_trace));
        let few: Vec<&str> = few.iter().map(String::as_str).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        allocations_of(&few);
        let (a_few, ops_few) = allocations_of(&few);
        let (a_many, ops_many) = allocations_of(&many);
        assert_eq!((ops_few, ops_many), (1000, 200_000), "replay {extra:?}");
        assert!(
            a_many.abs_diff(a_few) <= 16,
            "replay {extra:?}: {a_few} allocations for 1,000 I/Os, {a_many} for 200,000: the loop allocates"
        );
    }
    // `--verify-state`: a page noted per write, the record updated at each flush or every N
    // writes durable at completion. On a tmpfs of the test's own where it may mount one (its
    // flushes cost nothing; a record is an output, never written under /dev, /dev/shm
    // included), else in the temporary directory with fewer I/Os.
    let scratch = Scratch::new();
    let (target, state) = (scratch.dir.path().join("r.dat"), scratch.dir.path().join("r.state"));
    let many_ops = if scratch.mounted { "100000" } else { "20000" };
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let (t, s) = (target.to_str().unwrap(), state.to_str().unwrap());
    for durability in [&["--fdatasync-every", "4"][..], &["--sync-writes", "dsync", "--verify-state-every", "8"][..]] {
        let mut few = vec![t, "--ops", "1000", "--random", "--write-percent", "100", "--seed", "1", "--engine", "sync"];
        few.extend_from_slice(&["--verify", "--verify-state", s]);
        few.extend_from_slice(durability);
        let mut many = few.clone();
        many[2] = many_ops;
        allocations_of(&few);
        let (a_few, ops_few) = allocations_of(&few);
        let (a_many, ops_many) = allocations_of(&many);
        assert_eq!((ops_few, ops_many), (1000, many_ops.parse().unwrap()), "{durability:?}");
        assert!(
            a_many.abs_diff(a_few) <= 16,
            "{durability:?}: {a_few} allocations for 1,000 I/Os, {a_many} for {many_ops}: the record allocates"
        );
    }
}

/// A temporary directory, with a tmpfs mounted on it when this process may (root), unmounted
/// (lazily) and removed when dropped, however the test ends.
struct Scratch {
    dir: tempfile::TempDir,
    mounted: bool,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let mounted = nix::unistd::geteuid().is_root()
            && std::process::Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=64m", "tmpfs"])
                .arg(dir.path())
                .status()
                .is_ok_and(|s| s.success());
        Scratch { dir, mounted }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.mounted {
            let _ = std::process::Command::new("umount").arg("-l").arg(self.dir.path()).status();
        }
    }
}
