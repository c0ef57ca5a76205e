//! The clocks the runtime and its supervisor share: wall-clock milliseconds for event lines, and
//! absolute `CLOCK_MONOTONIC` nanoseconds for deadlines that cross a process boundary (Unix, where
//! the supervisor runs).

#[cfg(unix)]
use std::time::{Duration, Instant};
use std::time::{SystemTime, UNIX_EPOCH};

#[cfg(unix)]
use nix::time::{clock_gettime, ClockId};

/// Wall-clock milliseconds (for `ts_ms`, so that lines of several processes can be merged).
pub fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0))
}

/// `CLOCK_MONOTONIC` now, in nanoseconds (the clock `Instant` reads on Linux).
#[cfg(unix)]
pub(crate) fn monotonic_ns() -> u64 {
    clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map(|t| {
            let secs = u64::try_from(t.tv_sec()).unwrap_or(0);
            let nanos = u64::try_from(t.tv_nsec()).unwrap_or(0);
            secs.saturating_mul(1_000_000_000).saturating_add(nanos)
        })
        .unwrap_or(0)
}

/// An `Instant` as absolute `CLOCK_MONOTONIC` nanoseconds, never later than the true value (the
/// clock is read before the `Instant` it is compared with).
#[cfg(unix)]
pub(crate) fn instant_to_ns(at: Instant) -> u64 {
    let mono = monotonic_ns();
    let now = Instant::now();
    match at.checked_duration_since(now) {
        Some(ahead) => mono.saturating_add(u64::try_from(ahead.as_nanos()).unwrap_or(u64::MAX)),
        None => mono.saturating_sub(u64::try_from(now.duration_since(at).as_nanos()).unwrap_or(u64::MAX)),
    }
}

/// Absolute `CLOCK_MONOTONIC` nanoseconds as an `Instant`, never later than the true value.
#[cfg(unix)]
pub(crate) fn ns_to_instant(ns: u64) -> Instant {
    let now = Instant::now();
    let mono = monotonic_ns();
    match ns.checked_sub(mono) {
        Some(ahead) => now + Duration::from_nanos(ahead),
        None => now.checked_sub(Duration::from_nanos(mono - ns)).unwrap_or(now),
    }
}
