//! The clocks the runtime and its supervisor share: wall-clock milliseconds for event lines, and
//! absolute monotonic nanoseconds for deadlines that cross a process boundary (to the supervisor):
//! `CLOCK_MONOTONIC` on Unix, `QueryPerformanceCounter` on Windows — in each case the clock
//! `Instant` reads, and one for the whole host.

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

/// `QueryPerformanceCounter` now, in nanoseconds (the clock `Instant` reads on Windows).
#[cfg(windows)]
#[allow(unsafe_code)]
pub(crate) fn monotonic_ns() -> u64 {
    use windows_sys::Win32::System::Performance::{QueryPerformanceCounter, QueryPerformanceFrequency};
    let (mut count, mut frequency) = (0i64, 0i64);
    // SAFETY: both write one i64; they cannot fail on Windows XP and later.
    unsafe {
        QueryPerformanceCounter(&mut count);
        QueryPerformanceFrequency(&mut frequency);
    }
    let (Ok(count), Ok(frequency)) = (u128::try_from(count), u128::try_from(frequency)) else { return 0 };
    if frequency == 0 {
        return 0;
    }
    u64::try_from(count * 1_000_000_000 / frequency).unwrap_or(u64::MAX)
}

/// An `Instant` as absolute monotonic nanoseconds, never later than the true value (the
/// clock is read before the `Instant` it is compared with).
pub(crate) fn instant_to_ns(at: Instant) -> u64 {
    let mono = monotonic_ns();
    let now = Instant::now();
    match at.checked_duration_since(now) {
        Some(ahead) => mono.saturating_add(u64::try_from(ahead.as_nanos()).unwrap_or(u64::MAX)),
        None => mono.saturating_sub(u64::try_from(now.duration_since(at).as_nanos()).unwrap_or(u64::MAX)),
    }
}

/// Absolute monotonic nanoseconds as an `Instant`, never later than the true value.
pub(crate) fn ns_to_instant(ns: u64) -> Instant {
    let now = Instant::now();
    let mono = monotonic_ns();
    match ns.checked_sub(mono) {
        Some(ahead) => now + Duration::from_nanos(ahead),
        None => now.checked_sub(Duration::from_nanos(mono - ns)).unwrap_or(now),
    }
}
