//! A path relative to a tree's root, NUL-terminated in a fixed buffer for the `*at`
//! system calls and io_uring requests: built without allocation, one byte or number at a
//! time. What the names are is the tree's business (`io/metadata/tree.rs`); this only holds
//! them.

/// Longest relative path: 16 levels of `d` and up to 10 digits, and a file name.
const PATH_BYTES: usize = 16 * 12 + 32;

/// A NUL-terminated relative path in a fixed buffer (`.` when empty).
pub struct RelPath {
    buf: [u8; PATH_BYTES],
    len: usize,
}

impl Default for RelPath {
    fn default() -> Self {
        RelPath { buf: [0; PATH_BYTES], len: 0 }
    }
}

impl RelPath {
    /// The path as a C string, for the kernel (`.` for the root itself).
    pub(super) fn c_ptr(&self) -> *const libc::c_char {
        self.buf.as_ptr().cast()
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("?")
    }

    /// Empties the path, to build another.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends one byte; a path that would not fit with its NUL stops growing.
    pub fn push_byte(&mut self, b: u8) {
        if self.len + 1 < PATH_BYTES {
            self.buf[self.len] = b;
            self.len += 1;
        }
    }

    /// Appends `n` in decimal.
    pub fn push_number(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for &d in &digits[i..] {
            self.push_byte(d);
        }
    }

    /// Ends the path with its NUL (an empty path becomes `.`, the root).
    pub fn terminate(&mut self) {
        if self.len == 0 {
            self.push_byte(b'.');
        }
        self.buf[self.len] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_built_and_terminated_without_overflowing_its_buffer() {
        let mut p = RelPath::default();
        p.terminate();
        assert_eq!(p.as_str(), ".");
        p.clear();
        p.push_byte(b'd');
        p.push_number(0);
        p.push_byte(b'/');
        p.push_byte(b'f');
        p.push_number(18_446_744_073_709_551_615);
        p.terminate();
        assert_eq!(p.as_str(), "d0/f18446744073709551615");
        assert_eq!(p.buf[p.len], 0);
        p.clear();
        for _ in 0..PATH_BYTES * 2 {
            p.push_byte(b'x');
        }
        p.terminate();
        assert_eq!(p.as_str().len(), PATH_BYTES - 1, "the NUL always has its place");
        assert_eq!(p.buf[PATH_BYTES - 1], 0);
    }
}
