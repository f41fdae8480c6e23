//! `{rank}` and `{host}` in a path: replaced by this process's rank and host
//! name, so that one command line gives every rank of a job its own files
//! (`/data/t.{rank}.dat`, `--json r.{host}.json`). A job of one is rank 0 on
//! this host, so the same command line works with or without MPI. Other
//! braces are left as they are.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The placeholders, as users write them.
const RANK: &str = "{rank}";
const HOST: &str = "{host}";

/// A host name made safe to stand inside a file name: anything but letters, digits,
/// '-', '_' and '.' becomes '_', and a leading '.' or '-' too, so that a host name such
/// as `a/../../b` or `..` can never climb out of the directory the user named.
fn file_name_safe(host: &str) -> String {
    let mut safe: String =
        host.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    if safe.starts_with(['.', '-']) || safe.is_empty() {
        safe.replace_range(..safe.chars().next().map_or(0, char::len_utf8), "_");
        if safe.is_empty() {
            safe.push('_');
        }
    }
    safe
}

/// `path` with `{rank}` and `{host}` replaced (the host name made file-name safe).
pub fn substitute(path: &Path, rank: u32, host: &str) -> PathBuf {
    let bytes = path.as_os_str().as_bytes();
    let rank = rank.to_string();
    let host = file_name_safe(host);
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(RANK.as_bytes()) {
            out.extend_from_slice(rank.as_bytes());
            i += RANK.len();
        } else if rest.starts_with(HOST.as_bytes()) {
            out.extend_from_slice(host.as_bytes());
            i += HOST.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

/// Whether `path` has a placeholder.
#[cfg(test)]
fn has_placeholder(path: &Path) -> bool {
    let bytes = path.as_os_str().as_bytes();
    [RANK, HOST].iter().any(|p| bytes.windows(p.len()).any(|w| w == p.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_host_names_stay_inside_the_directory() {
        for host in ["a/../../b", "..", ".", "-rf", "", "x\0y", "../etc/passwd", "h\nost"] {
            let p = substitute(Path::new("/data/r.{host}.json"), 0, host);
            assert_eq!(p.parent(), Some(Path::new("/data")), "{host:?} gave {}", p.display());
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(!name.contains('/') && name.starts_with("r."), "{host:?}: {name}");
            let alone = substitute(Path::new("/data/{host}"), 0, host);
            assert_eq!(alone.parent(), Some(Path::new("/data")), "{host:?} gave {}", alone.display());
            assert!(!matches!(alone.file_name().and_then(|n| n.to_str()), Some("." | "..")));
        }
        assert_eq!(file_name_safe("node-01.cluster"), "node-01.cluster");
    }

    #[test]
    fn replaces_rank_and_host_everywhere_and_nothing_else() {
        let p = substitute(Path::new("/data/{host}/t.{rank}.{rank}.dat"), 7, "node3");
        assert_eq!(p, Path::new("/data/node3/t.7.7.dat"));
        assert_eq!(substitute(Path::new("/x/{ranks}/{}/{RANK}"), 1, "h"), Path::new("/x/{ranks}/{}/{RANK}"));
        assert_eq!(substitute(Path::new("{rank"), 1, "h"), Path::new("{rank"));
        assert!(has_placeholder(Path::new("a{host}")) && !has_placeholder(Path::new("a{hos}t")));
        // Bytes that are not UTF-8 pass through.
        let odd = PathBuf::from(OsString::from_vec(b"/t\xff.{rank}".to_vec()));
        assert_eq!(substitute(&odd, 2, "h").as_os_str().as_bytes(), b"/t\xff.2");
    }
}
