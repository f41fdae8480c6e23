//! Exclusive locks that two commands must not share: a `--verify-state` record and a
//! metadata tree's marker are each held by one run at a time. A second run is refused
//! before it touches anything, naming the process that holds the lock (read from
//! /proc/locks, which lists each flock with its holder's pid and the file's device and
//! inode), so the user knows which run to wait for.
//!
//! It locks and reads /proc/locks; it never creates, writes or removes a file.

use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;

/// A lock held until it is dropped (or the process ends, however it ends).
#[derive(Debug)]
pub struct Held {
    _lock: Flock<File>,
}

/// Why a lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another open file description holds it: another run (its pid when /proc/locks
    /// names it).
    #[error("{}", busy_text(*.holder_pid))]
    Busy { holder_pid: Option<u32> },
    #[error("cannot be locked ({0})")]
    Io(#[source] io::Error),
}

fn busy_text(holder_pid: Option<u32>) -> String {
    match holder_pid {
        Some(pid) if pid == std::process::id() => format!("is in use by another job of this command (pid {pid})"),
        Some(pid) => format!("is in use by another run (pid {pid})"),
        None => "is in use by another run (its pid is not listed in /proc/locks)".to_string(),
    }
}

/// Takes an exclusive lock on `file` without waiting: `Busy` with the holder's pid when
/// another run holds it.
pub fn exclusive(file: File) -> Result<Held, LockError> {
    let id = file.metadata().map(|m| (m.dev(), m.ino())).ok();
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(Held { _lock: lock }),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
            Err(LockError::Busy { holder_pid: id.and_then(|(dev, ino)| holder_pid(dev, ino)) })
        }
        Err((_, e)) => Err(LockError::Io(io::Error::from(e))),
    }
}

/// The pid holding a flock on the file (`dev`, `ino`), from /proc/locks. The kernel lists
/// the locks a page at a time, each page from a fresh walk by position: a lock released
/// before ours between two pages moves ours back into the page already read, and it is
/// missed. So the list is read whole a few times until it names the file.
fn holder_pid(dev: u64, ino: u64) -> Option<u32> {
    const READS: usize = 4;
    (0..READS).find_map(|_| {
        let text = std::fs::read_to_string("/proc/locks").ok()?;
        text.lines().find_map(|line| flock_holder(line, dev, ino))
    })
}

/// A line of /proc/locks (`1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF`): its pid when
/// it is a held flock (not a waiter, `->`) of the file `dev`, `ino`.
fn flock_holder(line: &str, dev: u64, ino: u64) -> Option<u32> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.get(1) != Some(&"FLOCK") {
        return None;
    }
    let pid: u32 = fields.get(4)?.parse().ok()?;
    let mut id = fields.get(5)?.split(':');
    let major = u64::from_str_radix(id.next()?, 16).ok()?;
    let minor = u64::from_str_radix(id.next()?, 16).ok()?;
    let inode: u64 = id.next()?.parse().ok()?;
    let wanted = (nix::sys::stat::major(dev), nix::sys::stat::minor(dev));
    ((major, minor) == wanted && inode == ino).then_some(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("record");
        std::fs::write(&path, b"x").unwrap();
        let first = exclusive(File::open(&path).unwrap()).unwrap();
        // A second open file description, as a second run has.
        let err = exclusive(File::open(&path).unwrap()).unwrap_err();
        let LockError::Busy { holder_pid } = &err else { panic!("{err}") };
        // /proc/locks names a lock by the device and inode the kernel locked; under an
        // overlay (a container's root) or a sandboxed /proc that is not the pair stat
        // gives, and the holder cannot be found: the refusal must then say so.
        let meta = std::fs::metadata(&path).unwrap();
        let key = format!(
            "{:02x}:{:02x}:{} ",
            nix::sys::stat::major(meta.dev()),
            nix::sys::stat::minor(meta.dev()),
            meta.ino()
        );
        // Read as the code reads it, a few times: other tests take and release locks
        // meanwhile, and a lock can be missed by one reading (holder_pid).
        let listed = (0..4).any(|_| {
            let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
            locks.lines().any(|l| l.contains(" FLOCK ") && l.contains(&key))
        });
        if listed {
            assert_eq!(*holder_pid, Some(std::process::id()));
            assert!(err.to_string().contains(&format!("pid {}", std::process::id())), "{err}");
        } else {
            crate::stderr_line!("/proc/locks does not list this file's lock as {key}: the holder is not named");
            assert_eq!(*holder_pid, None);
            assert!(err.to_string().contains("not listed in /proc/locks"), "{err}");
        }
        drop(first);
        exclusive(File::open(&path).unwrap()).unwrap();
    }

    #[test]
    fn proc_locks_lines_are_read_for_flocks_of_the_file_only() {
        let dev = nix::sys::stat::makedev(0xfd, 1);
        assert_eq!(flock_holder("1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF", dev, 1234), Some(4242));
        assert_eq!(flock_holder("1: FLOCK  ADVISORY  WRITE 4242 fd:01:1235 0 EOF", dev, 1234), None);
        assert_eq!(flock_holder("1: POSIX  ADVISORY  WRITE 4242 fd:01:1234 0 EOF", dev, 1234), None);
        assert_eq!(flock_holder("1: -> FLOCK  ADVISORY  WRITE 77 fd:01:1234 0 EOF", dev, 1234), None);
        assert_eq!(flock_holder("2: FLOCK  ADVISORY  WRITE 9 08:01:1234 0 EOF", dev, 1234), None);
    }
}
