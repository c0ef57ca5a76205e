//! Everything the runtime asks of the operating system that differs between Linux, macOS and
//! Windows: one small interface per mechanism, one implementation per OS chosen at compile time.
//! The rest of the runtime names the interface only (`os::probe::Refusals`, ...), never an OS.
//!
//! | Mechanism | Interface | Linux | macOS | Windows |
//! |---|---|---|---|---|
//! | Refused-port probe | [`probe::Refusals`] | the node socket's error queue (`IP_RECVERR`) | a connected probe socket's `ECONNREFUSED` | a connected probe socket's `WSAECONNRESET` |
//! | Graceful stop | [`signals::StopSignals`] | SIGTERM, SIGINT | SIGTERM, SIGINT | console control events |
//! | State-file lock and write | [`state_file`] | `flock`; device and inode; directory fsync | as Linux | `LockFileEx`; volume and file index; `MOVEFILE_WRITE_THROUGH` |
//! | Leader-only command, watchdog | [`process`] | supervisor over a Unix socket, guard (`PR_SET_PDEATHSIG`), subreaper; pidfd death proof | supervisor over a Unix socket, guard (kqueue `EVFILT_PROC`); no death proof | supervisor over pipes, Job Object (`KILL_ON_JOB_CLOSE`); process-handle death proof |
//!
//! What each OS guarantees as a result is in docs/platforms.md ("OS × guarantee").

pub(crate) mod probe;
pub(crate) mod process;
pub(crate) mod signals;
pub(crate) mod state_file;
