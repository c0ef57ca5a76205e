//! The leader-only command of the command line (`tenure run ... -- CMD ARGS...`) as processes:
//! the runtime's side ([`command`]), the supervisor process it starts ([`supervisor`]) and its
//! watchdog. What differs between operating systems (the channel to the supervisor, the command's
//! tree, on Linux the guard that leads the command's process group) is in `crate::os::process`.
//! The rules are in `docs/command.md`.
//!
//! Layering: this tree depends on the runtime library (the [`Handle`](crate::Handle), its events
//! and clocks) and the command line depends on it; nothing in the library depends on it, so a
//! library user (Python, Node.js, Rust) who runs no command runs none of this.

pub(crate) mod command;
pub(crate) mod supervisor;
pub(crate) mod watchdog;
