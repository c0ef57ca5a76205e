//! The node's pseudo-random number generator.
//!
//! SplitMix64, written out here rather than taken from a crate on purpose: the cross-host scenario
//! files in `tests/scenarios/` pin the exact outputs of a node for a given seed, so the random
//! stream must never change under a dependency upgrade.

/// A small deterministic PRNG (SplitMix64).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub(crate) struct Rng {
    state: u64,
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `[lo, hi]` (inclusive). `lo > hi` yields `lo`.
    pub(crate) fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        lo + self.next_u64() % (span + 1)
    }
}

/// The operating system's random source failed (feature `getrandom`).
#[cfg(feature = "getrandom")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedError;

#[cfg(feature = "getrandom")]
impl core::fmt::Display for SeedError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the operating system's random source failed; no seed for the election timers")
    }
}

#[cfg(feature = "getrandom")]
impl core::error::Error for SeedError {}

/// A seed from the operating system's random source (feature `getrandom`): the one source every
/// std binding uses.
///
/// There is deliberately no fallback: two nodes with the same fixed seed would draw identical
/// election timeouts and split every vote, so a failing source is an error the host must see.
#[cfg(feature = "getrandom")]
pub fn os_seed() -> Result<u64, SeedError> {
    let mut buf = [0u8; 8];
    getrandom::fill(&mut buf).map_err(|_| SeedError)?;
    Ok(u64::from_le_bytes(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_stable() {
        // Pinned values: the scenario files depend on them.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut r = Rng::new(42);
        let a = r.range_inclusive(150, 300);
        assert!((150..=300).contains(&a));
    }
}
