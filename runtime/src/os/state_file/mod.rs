//! The state file's OS half (`crate::state` has the rules): the lock file's identity and the
//! durable replacement of the file. The lock itself is `std::fs::File::try_lock`, which is
//! `flock` on Unix and `LockFileEx` on Windows; symlinks (and Windows junctions) are resolved by
//! `std::fs` alike on every OS.
//!
//! One interface:
//!
//! - `same_file(&held, path) -> io::Result<bool>`: whether `path` still names the file `held` is
//!   open on (its holder may have removed it and another process created a new one); an error of
//!   kind `NotFound` when nothing is there;
//! - `replace(&tmp, &real, &dir) -> io::Result<()>`: `tmp` renamed over `real`, and the rename
//!   durable before it returns.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::{replace, same_file};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::{replace, same_file};
