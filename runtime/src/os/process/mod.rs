//! The leader-only command's supervision and the watchdog's proof of death, as far as they differ
//! between operating systems (`crate::process` has the rules, `docs/command.md` the contract).
//!
//! One interface, in every implementation:
//!
//! - `LEADER_COMMAND: Result<(), &str>`: whether `-- CMD` can be supervised here (`Err`: why not;
//!   the command line refuses the option, naming it);
//! - `DEATH_PROOF: Result<(), &str>`: whether the watchdog can be given a proof of this process's
//!   death, which the death notice needs (`Err`: why not; the death notice is off by default with
//!   a warning, and refused when asked for);
//!
//! the supervisor's channel, one protocol of lines on every OS (`crate::process::supervisor` has
//! it), carried by a Unix socket on Unix and by anonymous pipes on Windows:
//!
//! - the runtime's side: `spawn_supervisor(cmd)` gives `Orders` (`send`, `send_with` a
//!   descriptor or handle, `close`), `Reports` (read) and the supervisor's `Child`;
//! - the supervisor's side: `supervisor_link()` gives an `OrderSource` (`recv`: bytes and the
//!   `Attachment`s that came with them, kept only if `keep_received_fds()`) and a `ReportSink`
//!   (write); `ignore_stop_requests()`;
//! - `is_socket`, `into_udp`, `watch_death`: what the watchdog does with attachments (the node's
//!   socket, the runtime's death proof); `own_death_proof()` makes the latter;
//!
//! the command's tree, which the supervisor alone can end however it dies:
//!
//! - `spawn_tree(cmd)` gives the command's `Child` and its `Tree` (`id`, `command_pid`, `stop`,
//!   `kill`, `ended`); `status_text(status)`; `become_subreaper()`;
//! - `end_tree(id, supervisor)`, `kill_tree(id, supervisor)`: the runtime's backstop for a
//!   supervisor that is stopped;
//!
//! and on Linux the guard (`guard.rs`) that ends the command's whole tree when the supervisor
//! dies, and the subreaper that catches what escapes it; on macOS a guard that ends the command's
//! process group (`kqueue_guard.rs`); on Windows a Job Object that only the supervisor holds.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(target_os = "linux")]
mod guard;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::*;

#[cfg(target_os = "macos")]
mod kqueue_guard;
#[cfg(all(unix, not(target_os = "linux")))]
mod macos;
#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) use macos::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;
