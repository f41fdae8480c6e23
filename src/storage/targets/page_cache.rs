//! How much of the region a run addresses sits in the page cache, and dropping it.
//!
//! A buffered read of a cached page never reaches the device: a run right after
//! layout reads memory, the same command an hour later (once idle pages are evicted)
//! reads the disk, and the figures alone cannot tell the two apart. So the share of the
//! region's pages in the page cache (its residency) is measured on every target when
//! the window opens and when it closes, and recorded (`targets[].page_cache`).
//!
//! Residency comes from cachestat(2) (Linux 6.5+: the kernel counts the cached pages
//! of a range of the file, without touching them), else from mincore(2) over a
//! read-only shared mapping of the region, mapped a chunk at a time (mincore never
//! faults a page in). Where neither works the residency is unknown (null), never
//! guessed. Block devices are measured the same way, through the device's own page
//! cache.
//!
//! Before the window the region's cached pages are dropped (as fio does by default,
//! `invalidate=1`): the file's dirty pages are written first (fdatasync), then
//! posix_fadvise(POSIX_FADV_DONTNEED) on the region. The kernel cannot drop dirty pages
//! or pages another process maps, so residency is measured again right after the drop
//! and a drop that left pages behind is said. That is `--cache drop`, the default;
//! `--cache keep` leaves the cache as it is (fio's `invalidate=0`), and `--cache warm`
//! reads the whole region through the cache first and measures how much of it stayed
//! (a region larger than the memory free for the cache cannot stay whole). O_DIRECT runs are invalidated too: their reads do not use the cache, but the kernel
//! writes back dirty pages and drops the cached pages of every range a direct I/O
//! covers, which would otherwise happen inside the window. Files on a memory filesystem
//! (tmpfs) are not: the page cache is where their data lives.

use crate::workload::spec::CacheMode;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Mutex;

/// A residency at or above this share, at the start of a buffered read run that was not
/// invalidated, is a warning: the run reads mostly memory.
pub const WARM_FRACTION: f64 = 0.5;
/// A drop that leaves more than this share resident is said (dirty or mapped pages).
pub const DROP_LEFT_FRACTION: f64 = 0.01;
/// A warmed region with less than this share resident is a warning: it did not fit.
pub const WARM_FULL_FRACTION: f64 = 0.9;
/// Warming reads the region this many bytes at a time.
const WARM_CHUNK_BYTES: usize = 4 << 20;
/// mincore(2) maps and inspects the region this many bytes at a time.
const MINCORE_CHUNK_BYTES: u64 = 1 << 30;

/// What was measured and done to the page cache for one target (`targets[].page_cache`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageCache {
    /// The state asked for before the window (`--cache`): `drop`, `warm` or `keep`; null in
    /// results of versions before the flag.
    #[serde(default)]
    pub mode: Option<CacheMode>,
    /// Bytes measured: the target's first `blocks` × block size bytes, the region the run addresses.
    pub region_bytes: u64,
    /// How residency was measured: `cachestat` or `mincore`; null when neither worked.
    pub method: Option<String>,
    /// Share of the region's pages in the page cache when the window opened (null: unknown).
    pub start_resident_fraction: Option<f64>,
    /// Share of the region's pages in the page cache when the window closed (null: unknown).
    pub end_resident_fraction: Option<f64>,
    /// The region's cached pages were dropped before the window (fdatasync, then
    /// posix_fadvise POSIX_FADV_DONTNEED).
    pub invalidated: bool,
    /// Share still resident right after the drop (dirty or mapped pages cannot be
    /// dropped); null when not invalidated or unknown.
    pub after_invalidate_resident_fraction: Option<f64>,
    /// Why the cache was not dropped (`--cache keep` or `warm`, a memory filesystem), or why
    /// the drop failed.
    pub not_invalidated: Option<String>,
    /// `--cache warm`: share resident right after the region was read into the cache;
    /// null otherwise or unknown.
    #[serde(default)]
    pub after_warm_resident_fraction: Option<f64>,
    /// `--cache warm`: why the region is not all in the cache (it does not fit in the memory
    /// free for the cache, or less than 90 % stayed, or the read failed); null when it is.
    #[serde(default)]
    pub warm_shortfall: Option<String>,
    /// The run used O_DIRECT: its I/Os do not go through the page cache, so residency does
    /// not affect its figures.
    pub direct: bool,
    /// Why residency is unknown, when it is.
    pub unknown_reason: Option<String>,
}

/// How residency was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Cachestat,
    Mincore,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Cachestat => "cachestat",
            Method::Mincore => "mincore",
        }
    }
}

/// A residency measured: the share of the region's pages in the page cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Residency {
    pub fraction: f64,
    pub method: Method,
}

/// The share `cached` of `pages`, as a fraction in [0, 1] (an empty region is not cached).
pub fn fraction(cached: u64, pages: u64) -> f64 {
    if pages == 0 { 0.0 } else { (cached as f64 / pages as f64).clamp(0.0, 1.0) }
}

/// The system's page size in bytes.
pub fn page_size() -> u64 {
    crate::base::sys::page_cache::page_size()
}

/// Pages of a region of `region_bytes` bytes from offset 0 (a partial last page counts).
pub fn region_pages(region_bytes: u64, page_bytes: u64) -> u64 {
    region_bytes.div_ceil(page_bytes.max(1))
}

/// The residency of the first `region_bytes` of `file`: cachestat(2) where the kernel has
/// it, else mincore(2); an error names why neither worked.
pub fn measure(file: &File, region_bytes: u64) -> Result<Residency, String> {
    measure_with(|| cachestat_fraction(file, region_bytes), || mincore_fraction(file, region_bytes))
}

/// The decision of `measure`, given its two methods: the first that works, else the reasons
/// both failed (never a guess).
pub fn measure_with(
    cachestat: impl FnOnce() -> io::Result<f64>,
    mincore: impl FnOnce() -> Result<f64, String>,
) -> Result<Residency, String> {
    let cachestat_error = match cachestat() {
        Ok(fraction) => return Ok(Residency { fraction, method: Method::Cachestat }),
        Err(e) => e,
    };
    match mincore() {
        Ok(fraction) => Ok(Residency { fraction, method: Method::Mincore }),
        Err(mincore_error) => Err(format!("cachestat: {cachestat_error}; mincore: {mincore_error}")),
    }
}

/// The cached share of the first `region_bytes` of `file` by cachestat(2) (Linux 6.5+).
pub fn cachestat_fraction(file: &File, region_bytes: u64) -> io::Result<f64> {
    let pages = region_pages(region_bytes, page_size());
    if pages == 0 {
        return Ok(0.0);
    }
    Ok(fraction(crate::base::sys::page_cache::cached_pages(file, region_bytes)?, pages))
}

/// The cached share of the first `region_bytes` of `file` by mincore(2) over a read-only
/// shared mapping, a chunk at a time. Mapping and mincore never fault a page in.
///
/// mincore answers for a file's pages only to a caller that owns the file or may write
/// it (otherwise the kernel says every page is resident): that is checked first.
pub fn mincore_fraction(file: &File, region_bytes: u64) -> Result<f64, String> {
    let page = page_size();
    let pages = region_pages(region_bytes, page);
    if pages == 0 {
        return Ok(0.0);
    }
    trust_mincore(file)?;
    let mut cached = 0u64;
    let mut vec = Vec::new();
    let mut offset = 0u64;
    while offset < region_bytes {
        let len = (region_bytes - offset).min(MINCORE_CHUNK_BYTES);
        let chunk_pages = region_pages(len, page) as usize;
        vec.clear();
        vec.resize(chunk_pages, 0u8);
        crate::base::sys::page_cache::resident_pages(file, offset, len, &mut vec)?;
        cached += vec.iter().filter(|b| **b & 1 != 0).count() as u64;
        offset += len;
    }
    Ok(fraction(cached, pages))
}

/// mincore tells the truth about a file's pages only to its owner, to a caller that may
/// write it, or to root (CAP_SYS_ADMIN).
fn trust_mincore(file: &File) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let euid = nix::unistd::geteuid().as_raw();
    if euid == 0 {
        return Ok(());
    }
    let meta = file.metadata().map_err(|e| format!("fstat: {e}"))?;
    if meta.uid() == euid {
        return Ok(());
    }
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    match nix::unistd::access(path.as_str(), nix::unistd::AccessFlags::W_OK) {
        Ok(()) => Ok(()),
        Err(_) => Err("the kernel answers mincore only to the file's owner or a writer".to_string()),
    }
}

/// fio's fadvise_hint: tells the kernel how the run walks `file` (`random` or not), so
/// that readahead does not pull into the cache what a random run never asks for.
pub fn advise_order(file: &File, random: bool) -> Result<(), String> {
    use nix::fcntl::PosixFadviseAdvice::{POSIX_FADV_RANDOM, POSIX_FADV_SEQUENTIAL};
    let (advice, name) = if random {
        (POSIX_FADV_RANDOM, "POSIX_FADV_RANDOM")
    } else {
        (POSIX_FADV_SEQUENTIAL, "POSIX_FADV_SEQUENTIAL")
    };
    nix::fcntl::posix_fadvise(file, 0, 0, advice).map_err(|e| format!("posix_fadvise({name}): {e}"))
}

/// Drops the cached pages of the first `region_bytes` of `file`: its dirty data written
/// first (fdatasync: dirty pages cannot be dropped), then POSIX_FADV_DONTNEED.
pub fn invalidate(file: &File, region_bytes: u64) -> Result<(), String> {
    file.sync_data().map_err(|e| format!("fdatasync: {e}"))?;
    let len = libc::off_t::try_from(region_bytes).unwrap_or(libc::off_t::MAX);
    nix::fcntl::posix_fadvise(file, 0, len, nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED)
        .map_err(|e| format!("posix_fadvise(POSIX_FADV_DONTNEED): {e}"))
}

/// Reads the first `region_bytes` of `file` through the page cache, `WARM_CHUNK_BYTES` at
/// a time, telling `progress` the bytes read so far. Stops early (returning the bytes read)
/// once `stop` is set; an error names the offset.
pub fn warm(
    file: &File,
    region_bytes: u64,
    stop: &std::sync::atomic::AtomicUsize,
    mut progress: impl FnMut(u64),
) -> Result<u64, String> {
    use std::os::unix::fs::FileExt;
    let len = libc::off_t::try_from(region_bytes).unwrap_or(libc::off_t::MAX);
    // Advice only: the kernel may start reading ahead of the loop below.
    let _ = nix::fcntl::posix_fadvise(file, 0, len, nix::fcntl::PosixFadviseAdvice::POSIX_FADV_WILLNEED);
    let mut buf = vec![0u8; WARM_CHUNK_BYTES.min(usize::try_from(region_bytes).unwrap_or(usize::MAX)).max(1)];
    let mut offset = 0u64;
    while offset < region_bytes {
        if stop.load(std::sync::atomic::Ordering::Relaxed) != 0 {
            break;
        }
        let want = (region_bytes - offset).min(buf.len() as u64) as usize;
        match file.read_at(&mut buf[..want], offset) {
            Ok(0) => break,
            Ok(n) => offset += n as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("read at offset {offset}: {e}")),
        }
        progress(offset);
    }
    Ok(offset)
}

/// Why a region of `region_bytes` cannot all stay in the page cache, given the memory free
/// for it (`room_bytes`: MemAvailable, or the room under a memory cgroup's limit, whichever
/// is less); `None` when it fits or the room is unknown.
pub fn does_not_fit(region_bytes: u64, room_bytes: Option<(u64, String)>) -> Option<String> {
    let (room, what) = room_bytes?;
    (region_bytes > room).then(|| {
        format!(
            "the region ({}) is larger than the memory free for the page cache ({what}: {})",
            crate::base::units::display::bytes(region_bytes),
            crate::base::units::display::bytes(room)
        )
    })
}

/// What a target's run is, as far as dropping its cache goes.
#[derive(Clone, Copy, Debug)]
pub struct Situation {
    /// `--cache` as given.
    pub mode: CacheMode,
    /// The file is on a memory filesystem (tmpfs, ramfs): its data lives in the page cache.
    pub memory_backed: bool,
}

/// Whether to drop the region's cache before the window: `Ok` to drop it, or why not.
/// O_DIRECT runs are dropped too (fio's default): the kernel would otherwise write back
/// and drop the cached pages each direct I/O covers inside the window.
pub fn should_invalidate(s: Situation) -> Result<(), &'static str> {
    if s.mode == CacheMode::Keep {
        Err("--cache keep")
    } else if s.mode == CacheMode::Warm {
        Err("--cache warm")
    } else if s.memory_backed {
        Err("a memory filesystem keeps its files in the page cache: there is nothing to drop to")
    } else {
        Ok(())
    }
}

/// A target's page-cache record, filled in before the run and at the window's edges.
#[derive(Debug, Default)]
pub struct PageCacheProbe {
    facts: Mutex<PageCache>,
    /// The target is not touched (an engine that moves no bytes): nothing is measured and
    /// the result has no page-cache record for it.
    untouched: bool,
}

impl PageCacheProbe {
    pub fn new(facts: PageCache) -> Self {
        Self { facts: Mutex::new(facts), untouched: false }
    }

    /// The probe of a target the run never touches.
    pub fn untouched() -> Self {
        Self { facts: Mutex::new(PageCache::default()), untouched: true }
    }

    /// What was measured and done, as recorded in the result (`None` for a target the
    /// run never touched).
    pub fn facts(&self) -> Option<PageCache> {
        if self.untouched {
            return None;
        }
        Some(self.facts.lock().map(|f| f.clone()).unwrap_or_else(|p| p.into_inner().clone()))
    }

    fn record(&self, file: &File, at_start: bool) {
        if self.untouched {
            return;
        }
        let region_bytes = self.facts.lock().unwrap_or_else(|p| p.into_inner()).region_bytes;
        self.store(measure(file, region_bytes), at_start);
    }

    /// Records a measurement: a figure and its method, or null and why.
    fn store(&self, measured: Result<Residency, String>, at_start: bool) {
        let mut facts = self.facts.lock().unwrap_or_else(|p| p.into_inner());
        let value = match measured {
            Ok(r) => {
                facts.method.get_or_insert_with(|| r.method.name().to_string());
                Some(r.fraction)
            }
            Err(why) => {
                facts.unknown_reason.get_or_insert(why);
                None
            }
        };
        if at_start {
            facts.start_resident_fraction = value;
        } else {
            facts.end_resident_fraction = value;
        }
    }
}

/// The run's targets as far as their page cache goes: the descriptor to measure through
/// and the record to fill.
pub trait Probed {
    fn page_cache_file(&self) -> &File;
    fn page_cache_probe(&self) -> &PageCacheProbe;
}

/// Measures every target's residency as the window opens.
pub fn at_window_start<T: Probed>(targets: &[T]) {
    for t in targets {
        t.page_cache_probe().record(t.page_cache_file(), true);
    }
}

/// Measures every target's residency as the window closes.
pub fn at_window_end<T: Probed>(targets: &[T]) {
    for t in targets {
        t.page_cache_probe().record(t.page_cache_file(), false);
    }
}

/// The share of several regions together, each `(share, region_bytes)`, weighted by
/// their bytes; unknown (`None`) when any share is, or when there is none.
pub fn combined_share(parts: impl IntoIterator<Item = (Option<f64>, u64)>) -> Option<f64> {
    let (mut weighted, mut total_bytes, mut any) = (0.0, 0u64, false);
    for (share, bytes) in parts {
        weighted += share? * bytes as f64;
        total_bytes = total_bytes.saturating_add(bytes);
        any = true;
    }
    any.then(|| if total_bytes == 0 { 0.0 } else { weighted / total_bytes as f64 })
}

/// Share as people read it: "100%", "37%", "0.4%", "0.0%".
pub fn percent(f: f64) -> String {
    let p = 100.0 * f;
    if f >= 1.0 {
        "100%".into()
    } else if p >= 99.5 {
        ">99%".into()
    } else if p >= 10.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn fractions_and_pages() {
        assert_eq!(region_pages(0, 4096), 0);
        assert_eq!(region_pages(1, 4096), 1);
        assert_eq!(region_pages(8192, 4096), 2);
        assert_eq!(region_pages(8193, 4096), 3);
        assert_eq!(fraction(0, 0), 0.0);
        assert_eq!(fraction(3, 4), 0.75);
        assert_eq!(fraction(9, 4), 1.0, "a large folio counted whole never exceeds the region");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.0), "0.0%");
        assert_eq!(percent(0.37), "37%");
        assert_eq!(percent(0.004), "0.4%");
        assert_eq!(percent(0.996), ">99%");
    }

    #[test]
    fn neither_method_working_is_unknown_never_a_guess() {
        let r = measure_with(
            || Err(io::Error::from_raw_os_error(libc::ENOSYS)),
            || Err("mmap: No such device".to_string()),
        );
        let why = r.expect_err("unknown, not a figure");
        assert!(why.contains("cachestat") && why.contains("mincore") && why.contains("No such device"), "{why}");
    }

    #[test]
    fn cachestat_first_then_mincore() {
        let r = measure_with(|| Ok(0.25), || panic!("mincore is not asked when cachestat works")).unwrap();
        assert_eq!(r, Residency { fraction: 0.25, method: Method::Cachestat });
        let r = measure_with(|| Err(io::Error::from_raw_os_error(libc::ENOSYS)), || Ok(0.5)).unwrap();
        assert_eq!(r, Residency { fraction: 0.5, method: Method::Mincore });
    }

    #[test]
    fn invalidation_decision() {
        let s = Situation { mode: CacheMode::Drop, memory_backed: false };
        assert_eq!(should_invalidate(s), Ok(()));
        assert_eq!(should_invalidate(Situation { mode: CacheMode::Keep, ..s }), Err("--cache keep"));
        assert_eq!(should_invalidate(Situation { mode: CacheMode::Warm, ..s }), Err("--cache warm"));
        assert!(should_invalidate(Situation { memory_backed: true, ..s }).unwrap_err().contains("memory"));
    }

    #[test]
    fn unknown_residency_is_recorded_as_null_with_its_reason() {
        let neither = || {
            measure_with(|| Err(io::Error::from_raw_os_error(libc::ENOSYS)), || Err("mmap: No such device".to_string()))
        };
        let probe = PageCacheProbe::new(PageCache { region_bytes: 1 << 20, ..PageCache::default() });
        probe.store(neither(), true);
        probe.store(neither(), false);
        let facts = probe.facts().expect("a measured target");
        assert_eq!(facts.start_resident_fraction, None);
        assert_eq!(facts.end_resident_fraction, None);
        assert_eq!(facts.method, None);
        assert!(facts.unknown_reason.as_deref().is_some_and(|r| r.contains("mincore")), "{facts:?}");
        let json = serde_json::to_value(&facts).unwrap();
        assert!(json["start_resident_fraction"].is_null() && json["method"].is_null(), "{json}");
    }

    #[test]
    fn shares_combine_by_bytes_and_unknown_stays_unknown() {
        assert_eq!(combined_share([]), None);
        assert_eq!(combined_share([(Some(1.0), 1 << 20), (Some(0.0), 3 << 20)]), Some(0.25));
        assert_eq!(combined_share([(Some(1.0), 1 << 20), (None, 3 << 20)]), None);
        assert_eq!(combined_share([(Some(0.5), 0)]), Some(0.0));
    }

    #[test]
    fn a_region_larger_than_the_room_does_not_fit() {
        assert_eq!(does_not_fit(10 << 20, None), None, "unknown room: no claim");
        assert_eq!(does_not_fit(10 << 20, Some((20 << 20, "MemAvailable".into()))), None);
        let why = does_not_fit(30 << 20, Some((20 << 20, "MemAvailable".into()))).unwrap();
        assert!(why.contains("MemAvailable") && why.contains("larger than"), "{why}");
    }

    /// Warming reads the region back into the cache after a drop, and stops when told.
    #[test]
    fn warming_brings_a_dropped_region_back() {
        use std::sync::atomic::AtomicUsize;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("warm.dat");
        let region = 6u64 << 20;
        let mut f = File::options().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        f.write_all(&vec![0x33u8; region as usize]).unwrap();
        invalidate(&f, region).unwrap();
        let before = mincore_fraction(&f, region).unwrap();
        let mut seen = Vec::new();
        let read = warm(&f, region, &AtomicUsize::new(0), |n| seen.push(n)).unwrap();
        assert_eq!(read, region);
        assert_eq!(seen.last(), Some(&region), "progress reaches the end: {seen:?}");
        assert!(mincore_fraction(&f, region).unwrap() > 0.9, "warmed (was {before})");
        assert_eq!(warm(&f, region, &AtomicUsize::new(1), |_| ()).unwrap(), 0, "stopped before the first read");
    }

    /// Both methods agree on a file written (cached), dropped (not cached) and read back.
    #[test]
    fn both_methods_see_a_file_cached_dropped_and_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cached.dat");
        let region = 4u64 << 20;
        let mut f = File::options().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        f.write_all(&vec![0x5au8; region as usize]).unwrap();
        let after_write = mincore_fraction(&f, region).unwrap();
        assert!(after_write > 0.9, "just written: {after_write}");
        invalidate(&f, region).unwrap();
        let dropped = mincore_fraction(&f, region).unwrap();
        // tmpfs keeps its files in memory: nothing can be dropped there.
        let memory_fs = dropped > 0.9;
        if !memory_fs {
            assert!(dropped < 0.1, "dropped: {dropped}");
        }
        let mut back = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut back).unwrap();
        let read = mincore_fraction(&f, region).unwrap();
        assert!(read > 0.9, "read back: {read}");
        if let Ok(by_cachestat) = cachestat_fraction(&f, region) {
            assert!((by_cachestat - read).abs() < 0.01, "cachestat {by_cachestat} vs mincore {read}");
            invalidate(&f, region).unwrap();
            if !memory_fs {
                assert!(cachestat_fraction(&f, region).unwrap() < 0.1);
            }
        }
        // A region longer than the file: its pages past the end are not cached, and
        // mapping them faults nothing in (no SIGBUS).
        let beyond = mincore_fraction(&f, 2 * region).unwrap();
        assert!(beyond <= 0.5 + 1e-9, "{beyond}");
    }
}
