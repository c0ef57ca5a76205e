//! The command line's graceful stop: what the OS calls "stop now" (a service manager's stop, a
//! Ctrl-C), delivered to a thread as one item per request.
//!
//! One interface, [`StopSignals`]:
//!
//! - `StopSignals::new() -> io::Result<StopSignals>`: registered before the runtime starts (from
//!   then on a stop request is never the OS's default action, which ends the process without a
//!   handover);
//! - `signals.forever()`: an endless iterator, one item per stop request, blocking between them;
//! - `StopSignals::NAMES`: what they are called on this OS (for the message when registering
//!   failed).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::StopSignals;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::StopSignals;
