//! The building blocks of the I/O loop that know nothing of the rest of the crate: the
//! monotonic clock, the pseudo-random generator and the completion wait's spin. Nothing
//! here may import another module of the crate but the kernel calls of `base/sys/` (every
//! layer uses them), and nothing here is `unsafe`: the clock's read, the I/O buffers'
//! memory and the start line's futex are kernel calls, in `base/sys/`.

pub mod clock;
pub mod rng;
pub mod spin_wait;
