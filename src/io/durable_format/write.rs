//! Writing the record: its header made durable before the first I/O (in the file the run
//! holds locked: `durable_record::open_locked`), and each worker's pages updated in place
//! after each flush. Allocates nothing once a writer is made.

use super::*;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// Writes the record of a run into its file (open and locked for the run:
/// `durable_record::open_locked`): emptied, sized, its header durable, no update written
/// yet. Returns the open file each worker's `RecordWriter` shares.
pub fn create(file: &Arc<File>, header: &RecordHeader) -> io::Result<Arc<File>> {
    let head = encode_header(header);
    let (_, len_bytes) = sections(head.len() as u64, &header.workers);
    file.set_len(0)?;
    file.set_len(len_bytes)?;
    file.write_all_at(&head, 0)?;
    file.sync_all()?;
    Ok(Arc::clone(file))
}

/// One of a worker's files, as its writer addresses it: where the file's blocks start in
/// the worker's table (`region_start`: a worker-region block), how many of them the table
/// covers (0: none of the worker's region lies in it), and its first page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterFile {
    pub region_start: u64,
    pub blocks: u64,
    pub page_base: u32,
}

/// One worker's writer of its section. Everything it uses is sized at its start: noting a
/// write and recording an update allocate nothing.
pub struct RecordWriter {
    file: Arc<File>,
    worker: u32,
    section_at: u64,
    /// The worker's files, by its file index.
    files: Vec<WriterFile>,
    /// Per page: the copy holding its newest version (`NO_COPY`: none yet).
    copy: Vec<u8>,
    /// Per page: written to since its last update.
    dirty: Vec<bool>,
    /// Per file: its dirty pages (capacity: the file's pages, so a push never grows it).
    dirty_pages: Vec<Vec<u32>>,
    /// Pages written at once (up to `RUN_PAGES`).
    buf: Vec<u8>,
    /// Table pages of the worker (a bank of copies).
    pages: u64,
    generation: u64,
    sequence_base: u64,
    /// Writes completed (noted).
    completed: u64,
    durability: Durability,
    /// With writes durable at completion: an update after every this many (0: at flushes only).
    every_writes: u64,
    since_update: u64,
}

impl RecordWriter {
    /// `every_writes`: with writes durable at completion, an update after every this many
    /// completed writes (0: only at flushes).
    pub fn new(
        file: Arc<File>,
        header: &RecordHeader,
        worker: u32,
        files: Vec<WriterFile>,
        sequence_base: u64,
        every_writes: u64,
    ) -> Self {
        let head_len = encode_header(header).len() as u64;
        let (starts, _) = sections(head_len, &header.workers);
        let pages = worker_pages(&header.workers[worker as usize]) as usize;
        let dirty_pages =
            files.iter().map(|f| Vec::with_capacity(pages_of(f.blocks) as usize)).collect::<Vec<Vec<u32>>>();
        Self {
            file,
            worker,
            section_at: starts[worker as usize],
            files,
            copy: vec![NO_COPY; pages],
            dirty: vec![false; pages],
            dirty_pages,
            buf: vec![0u8; RUN_PAGES.min(pages.max(1)) * PAGE_BYTES as usize],
            pages: pages as u64,
            generation: 0,
            sequence_base,
            completed: 0,
            durability: header.durability,
            every_writes,
            since_update: 0,
        }
    }

    /// A write to `region_block` of the worker's file `file` completed. Returns whether an
    /// update is due (writes durable at completion, every N of them).
    #[inline]
    pub fn note_write(&mut self, file: u32, region_block: u64) -> bool {
        self.completed += 1;
        let f = self.files[file as usize];
        let page = f.page_base + ((region_block - f.region_start) / ENTRIES_PER_PAGE) as u32;
        if !self.dirty[page as usize] {
            self.dirty[page as usize] = true;
            self.dirty_pages[file as usize].push(page);
        }
        self.since_update += 1;
        self.every_writes != 0 && self.since_update >= self.every_writes
    }

    /// A flush of the worker's file `file` completed, with every write before it: records
    /// what it made durable (`table`: the low 32 bits of each block's last completed
    /// write). With writes durable at completion, every file's changed pages are recorded.
    pub fn flushed(&mut self, file: u32, table: &[u32]) -> io::Result<()> {
        if self.durability.at_completion() { self.update(None, table) } else { self.update(Some(file), table) }
    }

    /// Every completed write is durable (the record is kept at the worker's end too).
    pub fn durable_at_completion(&self) -> bool {
        self.durability.at_completion()
    }

    /// Records every completed write (writes durable at completion): every N of them, and
    /// at the worker's end.
    pub fn checkpoint(&mut self, table: &[u32]) -> io::Result<()> {
        if self.dirty_pages.iter().all(Vec::is_empty) {
            return Ok(());
        }
        self.update(None, table)
    }

    /// Writes the changed pages of `only` (every file: `None`), then the summary, then
    /// fdatasync. Pages are written in order, those that land next to each other in one
    /// write (every page changed at each update alternates its copies in step: they all
    /// land in one bank).
    fn update(&mut self, only: Option<u32>, table: &[u32]) -> io::Result<()> {
        self.generation += 1;
        self.since_update = 0;
        let mut written = 0u32;
        let (mut run_at, mut run_pages) = (0u64, 0usize);
        for f in 0..self.files.len() {
            if only.is_some_and(|o| o as usize != f) {
                continue;
            }
            let wf = self.files[f];
            self.dirty_pages[f].sort_unstable();
            for i in 0..self.dirty_pages[f].len() {
                let page = self.dirty_pages[f][i];
                let copy = if self.copy[page as usize] == 0 { 1 } else { 0 };
                let at = self.section_at + (2 + u64::from(copy) * self.pages + u64::from(page)) * PAGE_BYTES;
                if run_pages == RUN_PAGES || (run_pages > 0 && at != run_at + run_pages as u64 * PAGE_BYTES) {
                    self.file.write_all_at(&self.buf[..run_pages * PAGE_BYTES as usize], run_at)?;
                    run_pages = 0;
                }
                if run_pages == 0 {
                    run_at = at;
                }
                let b = &mut self.buf[run_pages * PAGE_BYTES as usize..(run_pages + 1) * PAGE_BYTES as usize];
                encode_page(b, &wf, page, table, self.generation, self.sequence_base, self.worker);
                run_pages += 1;
                self.copy[page as usize] = copy;
                self.dirty[page as usize] = false;
                written += 1;
            }
            self.dirty_pages[f].clear();
        }
        if run_pages > 0 {
            self.file.write_all_at(&self.buf[..run_pages * PAGE_BYTES as usize], run_at)?;
        }
        let flush_unix_ns =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let b = &mut self.buf[..PAGE_BYTES as usize];
        b.fill(0);
        b[..8].copy_from_slice(&SUMMARY_MAGIC);
        b[8..16].copy_from_slice(&self.generation.to_le_bytes());
        b[16..24].copy_from_slice(&flush_unix_ns.to_le_bytes());
        b[24..32].copy_from_slice(&self.sequence_base.to_le_bytes());
        b[32..40].copy_from_slice(&self.completed.to_le_bytes());
        b[40..44].copy_from_slice(&written.to_le_bytes());
        b[44..48].copy_from_slice(&self.worker.to_le_bytes());
        seal(b);
        let at = self.section_at + (self.generation % 2) * PAGE_BYTES;
        self.file.write_all_at(b, at)?;
        self.file.sync_data()
    }
}

/// Page `page` (of file `wf`) of a worker's table, from `table`, into `b`.
pub(super) fn encode_page(
    b: &mut [u8],
    wf: &WriterFile,
    page: u32,
    table: &[u32],
    generation: u64,
    base: u64,
    worker: u32,
) {
    let first = wf.region_start + u64::from(page - wf.page_base) * ENTRIES_PER_PAGE;
    let end = (first + ENTRIES_PER_PAGE).min(wf.region_start + wf.blocks);
    b.fill(0);
    b[..8].copy_from_slice(&PAGE_MAGIC);
    b[8..16].copy_from_slice(&generation.to_le_bytes());
    b[16..24].copy_from_slice(&base.to_le_bytes());
    b[24..28].copy_from_slice(&page.to_le_bytes());
    b[28..32].copy_from_slice(&worker.to_le_bytes());
    for (dst, &s) in b[FIXED_BYTES..].chunks_exact_mut(4).zip(&table[first as usize..end as usize]) {
        dst.copy_from_slice(&s.to_le_bytes());
    }
    seal(b);
}

/// A worker's extents and its writer's files: `files` are the worker's files as (target,
/// first block among the worker's files' blocks laid end to end, blocks), and its region
/// is `region_blocks` from `region_first_block` there.
pub fn worker_geometry(
    files: &[(u32, u64, u64)],
    region_first_block: u64,
    region_blocks: u64,
) -> (Vec<Extent>, Vec<WriterFile>) {
    let (mut extents, mut writer_files) = (Vec::new(), Vec::with_capacity(files.len()));
    let region_end = region_first_block + region_blocks;
    let mut page_base = 0u32;
    for &(target, first, blocks) in files {
        let (lo, hi) = (first.max(region_first_block), (first + blocks).min(region_end));
        if hi <= lo {
            writer_files.push(WriterFile { region_start: 0, blocks: 0, page_base });
            continue;
        }
        extents.push(Extent { target, first_block: lo - first, blocks: hi - lo });
        writer_files.push(WriterFile { region_start: lo - region_first_block, blocks: hi - lo, page_base });
        page_base += pages_of(hi - lo) as u32;
    }
    (extents, writer_files)
}
