//! Per-host clocks that drift: each host's monotonic millisecond clock runs at a rate within ±ρ
//! of real (simulated) time, piecewise constant, and never goes back.
//!
//! `local(t) = base_local + ⌊(t − base_real) · (10⁶ + rate_ppm) / 10⁶⌋` for real time `t ≥
//! base_real`. A rate change re-bases the clock at the instant of the change, so the clock stays
//! continuous. A clock survives its node's crashes and restarts (it is the host's clock).

/// One host's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    base_real: u64,
    base_local: u64,
    rate_ppm: i64,
}

impl Default for Clock {
    fn default() -> Self {
        Clock::exact()
    }
}

const PPM: i128 = 1_000_000;

impl Clock {
    /// A clock that reads real time exactly.
    pub fn exact() -> Clock {
        Clock { base_real: 0, base_local: 0, rate_ppm: 0 }
    }

    /// A clock that reads `offset` at real time `now` and runs at `1 + rate_ppm/10⁶` from then on.
    pub fn drifting(now: u64, offset: u64, rate_ppm: i64) -> Clock {
        Clock { base_real: now, base_local: now + offset, rate_ppm: rate_ppm.clamp(-999_999, 999_999) }
    }

    /// The rate, in parts per million away from real time.
    pub fn rate_ppm(&self) -> i64 {
        self.rate_ppm
    }

    /// Changes the rate from real instant `now` on (the reading stays continuous).
    pub fn set_rate(&mut self, now: u64, rate_ppm: i64) {
        let local = self.local(now);
        self.base_real = now.max(self.base_real);
        self.base_local = local;
        self.rate_ppm = rate_ppm.clamp(-999_999, 999_999);
    }

    /// The clock's reading at real instant `real`.
    pub fn local(&self, real: u64) -> u64 {
        let dt = i128::from(real.saturating_sub(self.base_real));
        let adv = dt * (PPM + i128::from(self.rate_ppm)) / PPM;
        self.base_local.saturating_add(u64::try_from(adv).unwrap_or(u64::MAX))
    }

    /// The first real instant at which the clock reads `local` or more (`base_real` if it already
    /// does there).
    pub fn real_at(&self, local: u64) -> u64 {
        if local <= self.base_local {
            return self.base_real;
        }
        let need = i128::from(local - self.base_local) * PPM;
        let k = PPM + i128::from(self.rate_ppm);
        // Smallest dt with ⌊dt·k/10⁶⌋ ≥ local − base_local, i.e. dt·k ≥ need.
        let dt = (need + k - 1) / k;
        self.base_real.saturating_add(u64::try_from(dt).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::Clock;

    #[test]
    fn real_at_inverts_local() {
        for rate in [-10_000i64, -1, 0, 1, 7_777, 10_000] {
            let mut c = Clock::drifting(5, 1234, rate);
            c.set_rate(400, -rate / 2);
            for l in c.local(400)..3000u64 {
                let r = c.real_at(l);
                assert!(c.local(r) >= l, "rate {rate}: local({r}) = {} < {l}", c.local(r));
                assert!(r == 400 || c.local(r - 1) < l, "rate {rate}: {r} is not the first instant for {l}");
            }
        }
    }

    #[test]
    fn rate_stays_within_bounds_over_any_interval() {
        let c = Clock::drifting(0, 0, 10_000);
        assert_eq!(c.local(1000), 1010);
        let s = Clock::drifting(0, 0, -10_000);
        assert_eq!(s.local(1000), 990);
    }
}
