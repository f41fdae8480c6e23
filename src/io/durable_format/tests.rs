use super::read::{decode, decode_header};
use super::*;
use std::sync::Arc;

/// The record's file as `storage::durable_record` opens it (read and write, created),
/// without its lock: this layer opens no path of its own.
fn open(path: &std::path::Path) -> File {
    std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).unwrap()
}

fn header() -> RecordHeader {
    RecordHeader {
        block_size_bytes: 4096,
        pattern_id: 1,
        seed: 7,
        durability: Durability::Flushes,
        targets: vec![
            RecordTarget {
                path: "/a".into(),
                blocks: 3000,
                identity: Some(TargetIdentity { size_bytes: 3000 * 4096, dev: 1, ino: 2, rdev: 0 }),
            },
            RecordTarget {
                path: "/b".into(),
                blocks: 10,
                identity: Some(TargetIdentity { size_bytes: 10 * 4096, dev: 0, ino: 0, rdev: 259 }),
            },
        ],
        workers: vec![
            vec![Extent { target: 0, first_block: 0, blocks: 4 }],
            vec![Extent { target: 0, first_block: 4, blocks: 2996 }, Extent { target: 1, first_block: 0, blocks: 10 }],
        ],
    }
}

/// Worker 1's writer: its files are /a from block 0 and /b from block 3000 of the
/// concatenation; its region starts at block 4.
fn writer(file: Arc<File>) -> RecordWriter {
    let h = header();
    let (extents, files) = worker_geometry(&[(0, 0, 3000), (1, 3000, 10)], 4, 3006);
    assert_eq!(extents, h.workers[1]);
    assert_eq!(
        files,
        vec![
            WriterFile { region_start: 0, blocks: 2996, page_base: 0 },
            WriterFile { region_start: 2996, blocks: 10, page_base: 3 }
        ]
    );
    assert_eq!(worker_geometry(&[(0, 0, 3000), (1, 3000, 10)], 0, 4).0, h.workers[0]);
    RecordWriter::new(file, &h, 1, files, 5 << 32, 0)
}

fn section_of(bytes: &[u8], worker: usize) -> usize {
    let (h, len) = decode_header(bytes).unwrap();
    sections(len as u64, &h.workers).0[worker] as usize
}

#[test]
fn each_flush_writes_only_its_files_changed_pages_and_the_newest_copies_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let file = create(&Arc::new(open(&path)), &header()).unwrap();
    let mut w = writer(Arc::clone(&file));
    let mut table = vec![0u32; 3006];
    for (i, block) in [5u64, 2000, 2997].into_iter().enumerate() {
        table[block as usize] = i as u32 + 1;
        w.note_write(if block >= 2996 { 1 } else { 0 }, block);
    }
    // A flush of /a: its two changed pages, not /b's.
    w.flushed(0, &table).unwrap();
    let r = decode(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(r.slots[0], None);
    let s = r.slots[1].as_ref().unwrap();
    assert_eq!((s.generation, s.high_water, s.sequence_base, s.cut_short), (1, 3, 5 << 32, false));
    assert_eq!((s.table[5], s.table[2000], s.table[2997]), (1, 2, 0));
    // Then /b, and /a's first page again: each page's newest copy is read.
    table[5] = 4;
    w.note_write(0, 5);
    w.flushed(1, &table).unwrap();
    let s = decode(&std::fs::read(&path).unwrap()).unwrap().slots[1].clone().unwrap();
    assert_eq!((s.generation, s.table[5], s.table[2997]), (2, 1, 3));
    w.flushed(0, &table).unwrap();
    let s = decode(&std::fs::read(&path).unwrap()).unwrap().slots[1].clone().unwrap();
    assert_eq!((s.generation, s.table[5], s.table[2000], s.table[2997]), (3, 4, 2, 3));
    assert!(!s.cut_short);
}

#[test]
fn a_cut_update_leaves_each_pages_previous_copy_and_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let file = create(&Arc::new(open(&path)), &header()).unwrap();
    let mut w = writer(Arc::clone(&file));
    let mut table = vec![0u32; 3006];
    for (block, seq) in [(5u64, 1u32), (2000, 2)] {
        table[block as usize] = seq;
        w.note_write(0, block);
    }
    w.flushed(0, &table).unwrap();
    let good = std::fs::read(&path).unwrap();
    for (block, seq) in [(5u64, 3u32), (2000, 4)] {
        table[block as usize] = seq;
        w.note_write(0, block);
    }
    w.flushed(0, &table).unwrap();
    let after = std::fs::read(&path).unwrap();
    let section = section_of(&good, 1);
    // Update 2 wrote page 0 and page 1 into their copies 1 and the summary into copy 0.
    // Worker 1 has 4 table pages: copies 0 then copies 1.
    let page = |p: usize, k: usize| section + (2 + 4 * k + p) * PAGE_BYTES as usize;
    let summary0 = section;
    let mut cut = good.clone();
    // Only page 0's new copy landed (its summary and page 1's did not).
    cut[page(0, 1)..page(0, 1) + PAGE_BYTES as usize]
        .copy_from_slice(&after[page(0, 1)..page(0, 1) + PAGE_BYTES as usize]);
    let s = decode(&cut).unwrap().slots[1].clone().unwrap();
    assert!(s.cut_short);
    assert_eq!((s.generation, s.table[5], s.table[2000]), (1, 3, 2));
    // The summary landed, page 1's copy is torn half way: page 1's previous copy is read.
    let mut cut = after.clone();
    cut[page(1, 1) + 2048..page(1, 1) + PAGE_BYTES as usize]
        .copy_from_slice(&good[page(1, 1) + 2048..page(1, 1) + PAGE_BYTES as usize]);
    cut[page(1, 1) + 100] ^= 1;
    let r = decode(&cut).unwrap();
    let s = r.slots[1].clone().unwrap();
    assert_eq!((s.cut_short, r.damaged_slots, s.generation), (true, 1, 1));
    assert_eq!((s.table[5], s.table[2000]), (3, 2));
    // Pages whole, the summary page lost: still cut short, the pages are used.
    let mut cut = after.clone();
    cut[summary0..summary0 + PAGE_BYTES as usize].fill(0);
    let s = decode(&cut).unwrap().slots[1].clone().unwrap();
    assert_eq!((s.cut_short, s.table[5], s.table[2000]), (true, 3, 4));
    // Only the summary landed: cut short, the pages before it are read.
    let mut cut = good.clone();
    cut[summary0..summary0 + PAGE_BYTES as usize].copy_from_slice(&after[summary0..summary0 + PAGE_BYTES as usize]);
    let s = decode(&cut).unwrap().slots[1].clone().unwrap();
    assert_eq!((s.cut_short, s.generation, s.table[5], s.table[2000]), (true, 1, 1, 2));
    // All of it: whole.
    let s = decode(&after).unwrap().slots[1].clone().unwrap();
    assert_eq!((s.cut_short, s.generation), (false, 2));
}

#[test]
fn a_truncated_or_foreign_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    create(&Arc::new(open(&path)), &header()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let e = decode(&bytes[..bytes.len() - 1]).unwrap_err().to_string();
    assert!(e.contains("truncated"), "{e}");
    let e = decode(b"hello world, this is not a record at all; nothing here is a record").unwrap_err();
    assert!(matches!(e, RecordError::NotARecord(_)), "{e}");
    let mut bad = bytes.clone();
    bad[20] ^= 1;
    assert!(decode(&bad).unwrap_err().to_string().contains("checksum"));
    let (h, _) = decode_header(&bytes).unwrap();
    assert_eq!(h, header());
}
