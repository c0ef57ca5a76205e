//! The leader-only command of the command line (`tenure run ... -- CMD ARGS...`) as processes:
//! the runtime's side ([`command`]), the supervisor process it starts ([`supervisor`]) and, on
//! Linux, the guard that leads the command's process group ([`guard`]). The rules are in
//! `docs/command.md`.
//!
//! Layering: this tree depends on the runtime library (the [`Handle`](crate::Handle), its events
//! and clocks) and the command line depends on it; nothing in the library depends on it, so a
//! library user (Python, Node.js, Rust) who runs no command runs none of this.

pub(crate) mod command;
#[cfg(target_os = "linux")]
mod guard;
pub(crate) mod supervisor;
pub(crate) mod watchdog;
