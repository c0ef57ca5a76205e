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
//! and on Unix, where the supervisor runs:
//!
//! - `own_death_proof()`: the descriptor handed to the watchdog (Linux: a pidfd of this process);
//! - `RECV_FLAGS`, `keep_received_fds()`: how the supervisor receives descriptors (close-on-exec,
//!   so that the command never inherits one) and whether it keeps them;
//! - `guard_spawn(cmd)`, `command_pid(guard)`, `become_subreaper()`, `kill_orphans()`,
//!   `end_tree_by_guard(guard)`: the guard that ends the command's whole tree when the supervisor
//!   dies, and the subreaper that catches what escapes it (Linux; elsewhere the command's process
//!   group is all there is).

#[cfg(target_os = "linux")]
mod guard;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::*;

#[cfg(all(unix, not(target_os = "linux")))]
mod macos;
#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) use macos::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;
