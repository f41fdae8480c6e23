//! Laying a file out to its size with real written data. Holes and unwritten
//! extents are never read from the device (the filesystem answers with zeros
//! from memory), so a benchmark over them would measure nothing; fallocate
//! alone is therefore not enough.

use crate::data;
use crate::error::RunError;
use crate::rng::Rng;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

const CHUNK_BYTES: u64 = 1 << 20;
/// Layouts at least this large show a progress bar on a terminal.
const PROGRESS_FROM_BYTES: u64 = 64 << 20;

/// Why a layout stopped early.
pub enum LayoutStop {
    Failed(RunError),
    Interrupted { laid_out_bytes: u64 },
}

/// Writes random, per-block-unique data from `from_bytes` to `to_bytes`, then
/// syncs it so that write-back does not run into the measurement.
pub fn extend(
    file: &File,
    path: &Path,
    from_bytes: u64,
    to_bytes: u64,
    seed: u64,
    show_progress: bool,
    stop: &AtomicUsize,
) -> Result<u64, LayoutStop> {
    let total = to_bytes.saturating_sub(from_bytes);
    let bar = if show_progress && total >= PROGRESS_FROM_BYTES {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "laying out {msg} {bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .expect("valid template"),
        );
        bar.set_message(path.display().to_string());
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut rng = Rng::new(seed, 0x1a70_0700);
    let mut chunk = vec![0u8; CHUNK_BYTES.min(total.max(1)) as usize];
    let mut offset = from_bytes;
    while offset < to_bytes {
        if stop.load(Ordering::Relaxed) != 0 {
            bar.abandon();
            return Err(LayoutStop::Interrupted { laid_out_bytes: offset - from_bytes });
        }
        let len = (to_bytes - offset).min(chunk.len() as u64) as usize;
        data::fill_random(&mut chunk[..len], &mut rng);
        data::stamp_layout_chunk(&mut chunk[..len], offset);
        if let Err(source) = file.write_all_at(&chunk[..len], offset) {
            bar.abandon();
            let laid = offset - from_bytes;
            return Err(LayoutStop::Failed(RunError::Other(format!(
                "lay out {} at offset {offset}: {source} ({laid} of {total} bytes laid out{})",
                path.display(),
                if source.raw_os_error() == Some(libc::ENOSPC) { "; the filesystem is full" } else { "" }
            ))));
        }
        offset += len as u64;
        bar.set_position(offset - from_bytes);
    }
    if let Err(source) = file.sync_data() {
        return Err(LayoutStop::Failed(RunError::Target { op: "sync layout of", path: path.to_path_buf(), source }));
    }
    bar.finish_and_clear();
    Ok(total)
}
