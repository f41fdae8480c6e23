//! What writes put on disk, read back from real files: with the default pattern (`unique`)
//! every 512-byte sector is unique and no record from 8 KiB to 1 MiB compresses (zlib and
//! zstd), whatever engine, block size and queue depth wrote it, and for files laid out by
//! read runs too; each block holds exactly the data of the write drawn for it (seed,
//! offset, sequence), also when the queued engines prepare the next writes' data ahead of
//! their slots freeing; the ratio settings give their ratios. And on btrfs with
//! `compress-force=zstd`, compsize witnesses it (root only).

use crate::common::*;
use iopulse::testing::data::{Pattern, RandomPool, unique};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;

const CHUNK: usize = 4096;
const SECTOR: usize = 512;

/// What no storage can shrink: every 512-byte sector of `data` distinct from every other
/// (hashed, equal hashes compared byte by byte), and every record of 8 KiB, 128 KiB and
/// 1 MiB (each alone, as a compressing filesystem or array stores it) compressing to at
/// least 99 % of its size with zlib (level 6) and with zstd (level 3).
fn assert_irreducible(data: &[u8], what: &str) {
    assert!(data.len() >= 2 << 20 && data.len().is_multiple_of(1 << 20), "{what}: {} bytes", data.len());
    let mut seen: HashMap<u64, usize> = HashMap::with_capacity(data.len() / SECTOR);
    for (i, sector) in data.chunks(SECTOR).enumerate() {
        let h = chunk_hash(sector);
        if let Some(&j) = seen.get(&h) {
            assert_ne!(sector, &data[j * SECTOR..(j + 1) * SECTOR], "{what}: sector {i} repeats sector {j}");
        }
        seen.insert(h, i);
    }
    for record in [8usize << 10, 128 << 10, 1 << 20] {
        for (i, r) in data.chunks(record).enumerate() {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
            z.write_all(r).unwrap();
            let zlib = z.finish().unwrap().len();
            let zstd = zstd::bulk::compress(r, 3).unwrap().len();
            for (name, n) in [("zlib", zlib), ("zstd", zstd)] {
                assert!(
                    n as f64 >= 0.99 * r.len() as f64,
                    "{what}: {name} compressed record {i} of {record} bytes to {n} bytes"
                );
            }
        }
    }
}

/// The data of write `sequence` at `offset_bytes` with the default pattern of a run whose
/// largest write is `bs` (seed 7): `unique`.
fn unique_data(buf: &mut [u8], bs: u64, offset_bytes: u64, sequence: u64) {
    iopulse::testing::data::fill(buf, Pattern::Unique, 7, offset_bytes, sequence, unique::period_bytes(bs));
}

/// Writes a zeroed file of `size` bytes once, sequentially, with the default pattern;
/// asserts every block was written; returns the file's bytes.
fn write_once(engine: &str, size: &str, bs: &str, depth: &str, extra: &[&str]) -> Vec<u8> {
    let dir = temp_dir();
    let len = iopulse::testing::units::parse_size(size).expect("size");
    let f = zero_file(dir.path(), "w.dat", len);
    let fs = path_str(&f);
    let mut args = vec![
        fs.as_str(),
        "--engine",
        engine,
        "--block-size",
        bs,
        "--queue-depth",
        depth,
        "--duration",
        "0",
        "--write-percent",
        "100",
        "--seed",
        "7",
    ];
    args.extend_from_slice(extra);
    let r = run_json(&args);
    let bs_bytes = iopulse::testing::units::parse_size(bs).expect("bs");
    assert_eq!(u64_at(&r, &["write", "ops"]), len / bs_bytes, "{engine}: every block written once");
    std::fs::read(&f).expect("read back")
}

/// Asserts that block i of `data` (blocks of `bs` bytes, written in one sequential pass by
/// worker 0) holds write i+1's default data.
fn assert_blocks_hold_their_writes(data: &[u8], bs: usize, what: &str) {
    let mut want = vec![0u8; bs];
    for (i, block) in data.chunks(bs).enumerate() {
        unique_data(&mut want, bs as u64, (i * bs) as u64, i as u64 + 1);
        assert!(block == want.as_slice(), "{what}: block {i} is not write {}", i + 1);
    }
}

fn engines() -> Vec<&'static str> {
    ["sync", "libaio", "io_uring", "mmap"].into_iter().filter(|e| engine_available(e)).collect()
}

/// Every engine's default data is irreducible at 4 KiB QD 1 (32 writes in each 128 KiB
/// record, one buffer position for the inline engines), 64 KiB at QD 8 and 1 MiB at QD 4,
/// sequentially, and at 4 KiB in a random order: the sectors all unique, no record of 8 KiB,
/// 128 KiB or 1 MiB compressing below 99 %. Before the `unique` pattern, sync and mmap's
/// `keyed` data failed at 512 bytes (87 % duplicates) and in 128 KiB records (23x).
#[test]
fn default_data_of_every_engine_and_size_is_irreducible() {
    for engine in engines() {
        for (bs, depth, extra) in
            [("4k", "1", &[][..]), ("64k", "8", &[]), ("1m", "4", &[]), ("4k", "8", &["--random"])]
        {
            let data = write_once(engine, "8m", bs, depth, extra);
            assert_irreducible(&data, &format!("{engine} bs {bs} QD {depth} {extra:?}"));
        }
    }
}

/// A file laid out for a read run holds the default data too (sequence 0 of each offset,
/// regenerated here), irreducible: with sync (buffered) and with io_uring O_DIRECT, and
/// with 1 MiB blocks (whose period is the block). The result says what it wrote.
#[test]
fn a_file_laid_out_for_a_read_run_is_irreducible() {
    for (engine, extra) in [("sync", &[][..]), ("io_uring", &["--direct"][..]), ("sync", &["--block-size", "1m"])] {
        if !engine_available(engine) {
            continue;
        }
        let dir = temp_dir();
        let f = dir.path().join("new.dat");
        let fs = path_str(&f);
        let mut args = vec![fs.as_str(), "--file-size", "8m", "--duration", "50ms", "--engine", engine, "--seed", "7"];
        args.extend_from_slice(extra);
        let r = run_json(&args);
        assert_eq!(u64_at(&r, &["write", "ops"]), 0, "a read run");
        assert_eq!(r["write_data"]["pattern"], "unique", "{engine} {extra:?}: {}", r["write_data"]);
        assert_eq!(r["write_data"]["reducibility"], "irreducible");
        let data = std::fs::read(&f).unwrap();
        assert_eq!(data.len(), 8 << 20);
        let bs = if extra.contains(&"1m") { 1 << 20 } else { 4096 };
        assert_eq!(u64_at(&r, &["write_data", "period_bytes"]), unique::period_bytes(bs));
        let mut want = vec![0u8; data.len()];
        unique_data(&mut want, bs, 0, 0);
        assert!(data == want, "{engine} {extra:?}: the layout is not the unique data of sequence 0");
        assert_irreducible(&data, &format!("layout by {engine} {extra:?}"));
    }
}

/// Each block holds the data of the write drawn for it: block i of a sequential pass is
/// write i+1 of worker 0 (its sequence), regenerated here from (seed, offset, sequence).
/// With queued engines at depth 8 the data is generated ahead; a block with the wrong
/// write's data, or a slot reused before its write finished, would show.
#[test]
fn each_block_holds_the_data_of_its_own_write() {
    for engine in engines() {
        for (bs, depth) in [(4096usize, "8"), (131072, "8"), (131072, "1"), (1 << 20, "4"), (3 << 12, "8")] {
            let bs_text = bs.to_string();
            let data = write_once(engine, "12m", &bs_text, depth, &[]);
            assert_blocks_hold_their_writes(&data, bs, &format!("{engine} bs {bs} QD {depth}"));
        }
    }
}

/// Every engine defaults to `unique` and the result says what was written and what it can
/// be reduced to; `random` (every byte fresh, cut from the pool) and `keyed` on request, and
/// `random` when ratios shape the data.
#[test]
fn every_engine_writes_unique_data_unless_asked_otherwise_and_the_result_says_so() {
    let pool = RandomPool::new(7);
    for engine in engines().into_iter().chain(["null"]) {
        let dir = temp_dir();
        let f = zero_file(dir.path(), "k.dat", 1 << 20);
        let fs = path_str(&f);
        let common =
            [fs.as_str(), "--engine", engine, "--block-size", "64k", "--duration", "0", "--write-percent", "100"];
        let r = run_json(&[&common[..], &["--seed", "7"]].concat());
        assert_eq!(r["spec"]["write_pattern"], "unique", "{engine}");
        let d = &r["write_data"];
        assert_eq!((d["pattern"].as_str(), d["reducibility"].as_str()), (Some("unique"), Some("irreducible")), "{d}");
        assert_eq!((d["verified"].as_bool(), d["period_bytes"].as_u64()), (Some(false), Some(1 << 20)), "{d}");
        let r = run_json(&[&common[..], &["--seed", "7", "--write-pattern", "keyed"]].concat());
        assert_eq!(r["write_data"]["reducibility"], "records_compress", "{engine}");
        let r = run_json(&[&common[..], &["--seed", "7", "--compress-ratio", "2"]].concat());
        assert_eq!(r["spec"]["write_pattern"], "random", "{engine}: ratios shape random data");
        assert_eq!(r["write_data"]["reducibility"], "as_asked", "{engine}");
        let r = run_json(&[&common[..], &["--seed", "7", "--write-pattern", "random"]].concat());
        assert_eq!(r["write_data"]["reducibility"], "irreducible", "{engine}");
        assert!(r["write_data"].get("period_bytes").is_none(), "{engine}: {}", r["write_data"]);
        if engine == "null" {
            continue;
        }
        let data = std::fs::read(&f).unwrap();
        let mut want = vec![0u8; 65536];
        for (i, block) in data.chunks(65536).enumerate() {
            pool.fill(&mut want, (i * 65536) as u64, i as u64 + 1);
            assert!(block == want.as_slice(), "{engine} --write-pattern random: block {i}");
        }
    }
    // A read-only run on a file that exists writes nothing: no write data to speak of.
    let dir = temp_dir();
    let f = zero_file(dir.path(), "r.dat", 1 << 20);
    let r = run_json(&[&path_str(&f), "--duration", "0", "--force"]);
    assert!(r.get("write_data").is_none(), "{}", r["write_data"]);
}

/// Requests drawn ahead stop at the ops limit: `--ops N` writes exactly the first N
/// blocks of a sequential pass, each with its own write's data, and nothing after them.
#[test]
fn the_ops_limit_writes_exactly_that_many_blocks() {
    for engine in engines() {
        let data = write_once_limited(engine, 1000);
        let mut want = vec![0u8; CHUNK];
        for (i, block) in data.chunks(CHUNK).enumerate() {
            if i < 1000 {
                unique_data(&mut want, CHUNK as u64, (i * CHUNK) as u64, i as u64 + 1);
                assert!(block == want.as_slice(), "{engine}: block {i} is not write {}", i + 1);
            } else {
                assert!(block.iter().all(|&b| b == 0), "{engine}: block {i}, past the limit, was written");
            }
        }
    }
}

fn write_once_limited(engine: &str, ops: u64) -> Vec<u8> {
    let dir = temp_dir();
    let f = zero_file(dir.path(), "l.dat", 8 << 20);
    let fs = path_str(&f);
    let ops_text = ops.to_string();
    let r = run_json(&[
        &fs,
        "--engine",
        engine,
        "--queue-depth",
        "16",
        "--ops",
        &ops_text,
        "--write-percent",
        "100",
        "--seed",
        "7",
    ]);
    assert_eq!(u64_at(&r, &["write", "ops"]), ops, "{engine}");
    std::fs::read(&f).expect("read back")
}

/// A run stopped by its deadline counts as covered only blocks its writes reached:
/// requests drawn ahead but never issued are taken back.
#[test]
fn a_timed_run_covers_only_blocks_it_wrote() {
    for engine in ["libaio", "io_uring"].into_iter().filter(|e| engine_available(e)) {
        let dir = temp_dir();
        let f = zero_file(dir.path(), "t.dat", 256 << 20);
        let fs = path_str(&f);
        let r = run_json(&[
            &fs,
            "--engine",
            engine,
            "--queue-depth",
            "16",
            "--duration",
            "200ms",
            "--write-percent",
            "100",
            "--direct",
        ]);
        let ops = u64_at(&r, &["write", "ops"]);
        let data = std::fs::read(&f).unwrap();
        let written = data.chunks(CHUNK).filter(|c| c.iter().any(|&b| b != 0)).count() as u64;
        let covered = u64_at(&r, &["coverage", "blocks_accessed"]);
        assert!(ops > 0 && ops < 65536, "{engine}: {ops} writes (the pass must stop by the deadline)");
        // Writes completing after the deadline reach the file uncounted: the batch reaped past
        // it and those drained (at most two depths; the same before drawing ahead).
        assert!(written >= ops && written <= ops + 32, "{engine}: {written} blocks on disk, {ops} counted");
        assert!(covered >= ops && covered <= written, "{engine}: {covered} covered, {written} on disk, {ops} counted");
    }
}

fn chunk_hash(chunk: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    chunk.hash(&mut h);
    h.finish()
}

/// `--dedupe-ratio 3`: a 64 MiB file holds three 4 KiB chunks for each distinct one
/// (3.0 ± 0.1), with every engine; the ratio asked is recorded in the result's spec.
#[test]
fn dedupe_ratio_3_gives_three_chunks_written_per_distinct_chunk() {
    for engine in engines() {
        let data = write_once(engine, "64m", "128k", "8", &["--dedupe-ratio", "3"]);
        let distinct: std::collections::HashSet<u64> = data.chunks(CHUNK).map(chunk_hash).collect();
        let ratio = (data.len() / CHUNK) as f64 / distinct.len() as f64;
        assert!((ratio - 3.0).abs() <= 0.1, "{engine}: dedupe ratio {ratio:.3}");
    }
}

/// `--compress-ratio 2`: gzip at its default level halves a 64 MiB file (2.0 ± 0.2), and
/// the data still does not dedupe (every chunk distinct).
#[test]
fn compress_ratio_2_halves_the_file_under_gzip() {
    for engine in engines() {
        let data = write_once(engine, "64m", "1m", "4", &["--compress-ratio", "2"]);
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&data).unwrap();
        let ratio = data.len() as f64 / z.finish().unwrap().len() as f64;
        assert!((ratio - 2.0).abs() <= 0.2, "{engine}: compress ratio {ratio:.3}");
        let distinct: std::collections::HashSet<u64> = data.chunks(CHUNK).map(chunk_hash).collect();
        assert_eq!(distinct.len(), data.len() / CHUNK, "{engine}: a chunk repeats");
    }
}

/// Both together, and recorded: dedupe 2 and compress 4 over 32 MiB, and the spec in the
/// JSON result says what was asked.
#[test]
fn dedupe_and_compress_ratios_combine_and_are_recorded() {
    let dir = temp_dir();
    let f = zero_file(dir.path(), "c.dat", 32 << 20);
    let fs = path_str(&f);
    let r = run_json(&[
        &fs,
        "--engine",
        "sync",
        "--block-size",
        "64k",
        "--duration",
        "0",
        "--write-percent",
        "100",
        "--dedupe-ratio",
        "2",
        "--compress-ratio",
        "4",
    ]);
    assert_eq!(r["spec"]["reducibility"]["dedupe_ratio"], 2.0);
    assert_eq!(r["spec"]["reducibility"]["compress_ratio"], 4.0);
    let data = std::fs::read(&f).unwrap();
    let distinct: std::collections::HashSet<u64> = data.chunks(CHUNK).map(chunk_hash).collect();
    let dedupe = (data.len() / CHUNK) as f64 / distinct.len() as f64;
    assert!((dedupe - 2.0).abs() <= 0.1, "dedupe ratio {dedupe:.3}");
    // What a deduplicating, compressing array stores: each distinct chunk, compressed alone.
    let mut seen = std::collections::HashSet::new();
    let (mut before, mut after) = (0usize, 0usize);
    for chunk in data.chunks(CHUNK) {
        if seen.insert(chunk_hash(chunk)) {
            let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            z.write_all(chunk).unwrap();
            before += chunk.len();
            after += z.finish().unwrap().len();
        }
    }
    let compress = before as f64 / after as f64;
    assert!(compress > 3.3 && compress <= 4.0, "compress ratio of distinct chunks {compress:.3}");
}

/// The memory plan counts what a worker drawing ahead really holds: twice the depth in
/// buffers for a queued engine's writes (verified ones too), the depth for reads, the
/// pool of random bytes for unverified random writes (32 KiB blocks: every total of slots
/// stays below the 1 MiB from which buffers are whole huge pages), and for `unique` writes
/// the area: two periods of 1 MiB (4 x 16 x 32 KiB rounded up to periods) on top of the 16
/// buffers.
#[test]
fn the_memory_plan_counts_the_spare_slots_of_a_worker_drawing_ahead() {
    let block = 32u64 << 10;
    for engine in ["libaio", "io_uring"].into_iter().filter(|e| engine_available(e)) {
        let dir = temp_dir();
        let f = zero_file(dir.path(), "m.dat", 16 << 20);
        let fs = path_str(&f);
        let buffers = |extra: &[&str]| {
            let mut args = vec![fs.as_str(), "--engine", engine, "--block-size", "32k", "--queue-depth", "8"];
            args.extend_from_slice(&["--ops", "64", "--seed", "3"]);
            args.extend_from_slice(extra);
            u64_at(&run_json(&args), &["memory", "buffers_bytes"])
        };
        assert_eq!(buffers(&[]), 8 * block, "{engine}: reads hold the depth's buffers");
        assert_eq!(buffers(&["--write-percent", "100", "--verify"]), 16 * block, "{engine}: verified writes");
        let random = buffers(&["--write-percent", "100", "--write-pattern", "random"]);
        assert!(
            random >= 16 * block + (256 << 10) && random <= 16 * block + (512 << 10),
            "{engine}: random writes hold 16 buffers and the pool, planned {random}"
        );
        assert_eq!(buffers(&["--write-percent", "100"]), 16 * block + (2 << 20), "{engine}: unique writes");
        // 1 MiB blocks at QD 2: a period per slot, no private buffers (a page each).
        let args = [fs.as_str(), "--engine", engine, "--block-size", "1m", "--queue-depth", "2"];
        let big = u64_at(
            &run_json(&[&args[..], &["--write-percent", "100", "--ops", "8"]].concat()),
            &["memory", "buffers_bytes"],
        );
        assert_eq!(big, 4 * 4096 + (4 << 20), "{engine}: 1 MiB unique writes at QD 2");
        assert_eq!(buffers(&["--write-percent", "100", "--write-pattern", "zeros"]), 8 * block, "{engine}: zeros");
    }
}

/// Large sequential O_DIRECT writes (16 MiB blocks, as streaming-write benchmarks use) hold
/// their memory: the process's peak resident set after five passes over the file is that
/// of one pass, and near the plan.
#[test]
fn large_sequential_writes_do_not_grow_in_memory() {
    let dir = temp_dir();
    let f = zero_file(dir.path(), "big.dat", 64 << 20);
    let fs = path_str(&f);
    let peak = |ops: &str| {
        let r = run_json(&[&fs, "--block-size", "16m", "--write-percent", "100", "--direct", "--ops", ops]);
        assert_eq!(u64_at(&r, &["write", "ops"]).to_string(), ops);
        (u64_at(&r, &["memory", "peak_resident_bytes"]), u64_at(&r, &["memory", "total_bytes"]))
    };
    let (one_pass, planned) = peak("4");
    let (five_passes, _) = peak("20");
    assert!(
        five_passes <= one_pass + (8 << 20),
        "peak resident grew with the run's length: {one_pass} bytes after one pass, {five_passes} after five"
    );
    assert!(five_passes <= planned + (64 << 20), "peak resident {five_passes} bytes, far above the plan of {planned}");
}

/// Streaming writes over a file four times larger than the memory they may use: a memory
/// cgroup of 96 MiB (its page cache included) and a 384 MiB file, 16 MiB blocks, one pass,
/// buffered through the page cache (sync) and O_DIRECT (io_uring, two in flight). Neither
/// run is killed or fails, each writes every block with its own write's data, and the
/// process's resident set stays near its plan while the cgroup reclaims the page cache.
#[test]
fn streaming_writes_over_a_file_larger_than_memory_hold_their_memory() {
    let what = "16 MiB writes over a file four times its memory cgroup";
    let Some(group) = crate::common::root::MemoryCgroup::new(96 << 20, what) else { return };
    let block = 16usize << 20;
    for (engine, extra) in [("sync", &[][..]), ("io_uring", &["--direct", "--queue-depth", "2"][..])] {
        if !engine_available(engine) {
            continue;
        }
        let dir = temp_dir();
        let f = zero_file(dir.path(), "stream.dat", 24 * block as u64);
        let json = dir.path().join("r.json");
        let (fs, js) = (path_str(&f), path_str(&json));
        let mut cmd = iopulse();
        cmd.args([&fs, "--engine", engine, "--block-size", "16m", "--write-percent", "100", "--duration", "0"]);
        cmd.args(["--seed", "7", "--quiet", "--json", &js]).args(extra);
        group.confine(&mut cmd);
        let (code, _, stderr) = run_command(&mut cmd);
        assert_eq!(code, 0, "{engine}: {stderr}");
        let r = read_json(&json);
        assert_eq!(u64_at(&r, &["write", "ops"]), 24, "{engine}: every block written once");
        let (peak, planned) = (u64_at(&r, &["memory", "peak_resident_bytes"]), u64_at(&r, &["memory", "total_bytes"]));
        assert!(peak <= planned + (32 << 20), "{engine}: peak resident {peak} bytes, plan {planned}");
        let data = std::fs::read(&f).expect("read back");
        assert_blocks_hold_their_writes(&data, block, engine);
    }
}

/// A writer whose buffers add up to 1 MiB or more (here 8 MiB) gets them on transparent huge pages
/// where the kernel gives them on request, and the result says how much memory was on
/// huge pages as the window opened (`memory.huge_page_bytes`, and the Memory line).
#[test]
fn buffers_of_a_mib_or_more_are_on_huge_pages_and_the_result_says_so() {
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if !(thp.contains("[always]") || thp.contains("[madvise]")) {
        eprintln!("SKIP: huge-page buffers: transparent huge pages are off here ({})", thp.trim());
        return;
    }
    let Some(engine) = ["io_uring", "libaio"].into_iter().find(|e| engine_available(e)) else {
        eprintln!("SKIP: huge-page buffers: no queued engine here");
        return;
    };
    let dir = temp_dir();
    let f = zero_file(dir.path(), "h.dat", 32 << 20);
    let json = dir.path().join("r.json");
    // A queued engine drawing ahead at QD 4 with 1 MiB blocks: 8 MiB of buffers.
    let mut cmd = iopulse();
    cmd.args([&path_str(&f), "--engine", engine, "--block-size", "1m", "--queue-depth", "4"]);
    cmd.args(["--write-percent", "100", "--ops", "64"]);
    cmd.args(["--json", &path_str(&json)]);
    let (code, stdout, stderr) = run_command(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    let r = read_json(&json);
    let buffers = u64_at(&r, &["memory", "buffers_bytes"]);
    let huge = u64_at(&r, &["memory", "huge_page_bytes"]);
    assert!(buffers >= 4 << 20, "planned buffers {buffers}");
    assert!(huge >= 2 << 20, "{huge} bytes on huge pages for {buffers} bytes of buffers");
    let memory_line = stdout.lines().find(|l| l.starts_with("Memory")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(memory_line.contains("on huge pages"), "{memory_line}");
}

/// With `--verify` the ratios hold too (duplicates by whole blocks, the header inside the
/// random part), and the result's produced dedupe ratio is what the file shows.
#[test]
fn ratios_hold_with_verify_and_the_result_says_what_was_produced() {
    for engine in engines() {
        let dir = temp_dir();
        let f = zero_file(dir.path(), "v.dat", 64 << 20);
        let fs = path_str(&f);
        let r = run_json(&[
            &fs,
            "--engine",
            engine,
            "--block-size",
            "16k",
            "--queue-depth",
            "8",
            "--duration",
            "0",
            "--write-percent",
            "100",
            "--verify",
            "--dedupe-ratio",
            "3",
            "--compress-ratio",
            "2",
        ]);
        let data = std::fs::read(&f).unwrap();
        let distinct: std::collections::HashSet<u64> = data.chunks(CHUNK).map(chunk_hash).collect();
        let dedupe = (data.len() / CHUNK) as f64 / distinct.len() as f64;
        assert!((dedupe - 3.0).abs() <= 0.1, "{engine}: dedupe ratio {dedupe:.3}");
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&data).unwrap();
        let compress = data.len() as f64 / z.finish().unwrap().len() as f64;
        // gzip sees the duplicates too (within its 32 KiB window): at least the ratio asked.
        assert!(compress >= 1.8, "{engine}: compress ratio {compress:.3}");
        let d = &r["data_reduction"];
        assert_eq!(d["dedupe_ratio_asked"], 3.0, "{engine}: {d}");
        assert_eq!(u64_at(d, &["chunks_written"]), (data.len() / CHUNK) as u64, "{engine}: {d}");
        let produced = d["dedupe_ratio_produced"].as_f64().unwrap();
        assert!((produced - dedupe).abs() <= 0.05, "{engine}: produced {produced:.3}, the file shows {dedupe:.3}");
        assert!((d["compress_ratio_produced"].as_f64().unwrap() - 2.0).abs() < 0.01, "{engine}: {d}");
        // And the file verifies with the same flags.
        let (code, _, stderr) = run(&[
            &fs,
            "--duration",
            "0",
            "--verify",
            "--dedupe-ratio",
            "3",
            "--compress-ratio",
            "2",
            "--block-size",
            "16k",
        ]);
        assert_eq!(code, 0, "{engine}: verification of the reduced file failed: {stderr}");
    }
}

/// The real witness: on btrfs mounted with `compress-force=zstd` (it compresses every
/// extent it writes, in 128 KiB units), compsize finds every file iopulse wrote or laid out
/// with its default data stored whole: at least 99 % of its size on disk. A file written
/// with `--compress-ratio 2` takes about half, and one of `keyed` 4 KiB writes far less: the
/// witness tells reducible data when it sees it.
#[test]
fn btrfs_with_compress_force_zstd_stores_default_data_whole() {
    let what = "the btrfs compress-force=zstd witness";
    let Some(btrfs) = crate::common::root::btrfs(1 << 30, "compress-force=zstd", what) else { return };
    let dir = btrfs.mount.path();
    fn write(engine: &'static str, bs: &'static str, depth: &'static str) -> Vec<&'static str> {
        vec![
            "--engine",
            engine,
            "--block-size",
            bs,
            "--queue-depth",
            depth,
            "--write-percent",
            "100",
            "--duration",
            "0",
        ]
    }
    let mut cases: Vec<(String, Vec<&str>, bool, f64, f64)> = Vec::new();
    for engine in engines() {
        cases.push((format!("{engine} 4 KiB QD 1"), write(engine, "4k", "1"), true, 0.99, 1.01));
    }
    for engine in ["io_uring", "libaio"].into_iter().filter(|e| engine_available(e)) {
        cases.push((format!("{engine} 64 KiB QD 8"), write(engine, "64k", "8"), true, 0.99, 1.01));
        cases.push((format!("{engine} 1 MiB QD 4"), write(engine, "1m", "4"), true, 0.99, 1.01));
    }
    cases.push(("layout (sync)".into(), vec!["--duration", "10ms"], false, 0.99, 1.01));
    if engine_available("io_uring") {
        cases.push((
            "layout (io_uring, O_DIRECT)".into(),
            vec!["--engine", "io_uring", "--direct", "--duration", "10ms"],
            false,
            0.99,
            1.01,
        ));
    }
    let mut ratio2 = write("sync", "64k", "1");
    ratio2.extend(["--compress-ratio", "2"]);
    cases.push(("--compress-ratio 2".into(), ratio2, true, 0.45, 0.60));
    let mut keyed = write("sync", "4k", "1");
    keyed.extend(["--write-pattern", "keyed"]);
    cases.push(("keyed 4 KiB writes (the control)".into(), keyed, true, 0.0, 0.2));
    for (i, (name, flags, existing, low, high)) in cases.iter().enumerate() {
        let f = if *existing { zero_file(dir, &format!("{i}.dat"), 16 << 20) } else { dir.join(format!("{i}.dat")) };
        let fs = path_str(&f);
        let mut args = vec![fs.as_str(), "--file-size", "16m", "--seed", "7", "--quiet"];
        args.extend(flags.iter().copied());
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{name}: {stderr}");
        let Some((disk, uncompressed)) = crate::common::root::compsize(&f, what) else { return };
        assert_eq!(uncompressed, 16 << 20, "{name}: compsize saw {uncompressed} bytes");
        let share = disk as f64 / uncompressed as f64;
        assert!(share >= *low && share <= *high, "{name}: {disk} of {uncompressed} bytes on disk ({share:.3})");
    }
}

/// Deduplicating storage stores a sector once however many files hold it: files laid out
/// together by one run (here per-worker files) and files written by two runs without
/// `--seed` share no 512-byte sector. (Layout used one seed for every file, and runs
/// without `--seed` wrote the data of seed 0: four files laid out together were four
/// copies of one.)
#[test]
fn files_laid_out_together_and_runs_one_after_another_share_no_sector() {
    let sectors = |path: &std::path::Path| -> std::collections::HashSet<u64> {
        std::fs::read(path).unwrap().chunks(512).map(chunk_hash).collect()
    };
    let dir = temp_dir();
    let base = path_str(&dir.path().join("t.dat"));
    run_ok(&[
        &base,
        "--threads",
        "2",
        "--file-distribution",
        "per-worker",
        "--file-size",
        "1m",
        "--duration",
        "50ms",
        "--quiet",
    ]);
    let (a, b) = (sectors(&dir.path().join("t.dat.0")), sectors(&dir.path().join("t.dat.1")));
    assert_eq!(a.len(), 2048, "the first file's own sectors are unique");
    assert!(a.is_disjoint(&b), "{} sectors of the second file repeat the first's", a.intersection(&b).count());
    // Two write runs, one after the other, on two files.
    let (x, y) = (path_str(&dir.path().join("x.dat")), path_str(&dir.path().join("y.dat")));
    for f in [&x, &y] {
        run_ok(&[f, "--file-size", "1m", "--duration", "0", "--write-percent", "100", "--quiet"]);
    }
    let (x, y) = (sectors(std::path::Path::new(&x)), sectors(std::path::Path::new(&y)));
    assert!(x.is_disjoint(&y), "{} sectors written by the second run repeat the first's", x.intersection(&y).count());
}
