//! The leader-only command of the command line (`tenure run ... -- CMD ARGS...`) as processes:
//! the runtime's side ([`command`]), the supervisor process it starts ([`supervisor`]) and its
//! watchdog. What differs between operating systems (on Linux, the guard that leads the command's
//! process group) is in `crate::os::process`. The rules are in `docs/command.md`.
//!
//! Layering: this tree depends on the runtime library (the [`Handle`](crate::Handle), its events
//! and clocks) and the command line depends on it; nothing in the library depends on it, so a
//! library user (Python, Node.js, Rust) who runs no command runs none of this.

#[cfg(unix)]
pub(crate) mod command;
#[cfg(unix)]
pub(crate) mod supervisor;
#[cfg(unix)]
pub(crate) mod watchdog;

// Where the command cannot be supervised (`crate::os::process::LEADER_COMMAND`), the same names
// stand for no command: the command line refuses `-- CMD` there, so no runner is ever made.
#[cfg(windows)]
pub(crate) mod unsupervised;
#[cfg(windows)]
pub(crate) use unsupervised as command;
#[cfg(windows)]
pub(crate) use unsupervised as supervisor;
