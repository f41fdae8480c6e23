//! The building blocks of the I/O loop that know nothing of the rest of the crate: the
//! monotonic clock, the pseudo-random generator, aligned I/O buffers and the start line's
//! wake word. Nothing here may import another module of the crate: every layer uses them.

pub mod buffer;
pub mod clock;
pub mod futex;
pub mod rng;
pub mod spin_wait;
