//! # tenure-sim — a deterministic simulator for the tenure core
//!
//! Runs many real [`tenure::Node`]s over a seeded, simulated network with a simulated clock that
//! jumps from event to event (nothing ever sleeps), injects faults (loss, duplication, reordering,
//! symmetric and one-way partitions, crashes, restarts with and without durable state, pauses,
//! membership changes, host denials, failing handlers, transfers, broadcasts) and checks the
//! protocol's invariants after every step (see [`check`]). Everything is reproducible from one
//! `u64` seed.
//!
//! It also produces the cross-host test data every binding replays: `tests/scenarios/*.json`
//! ([`scenario`], [`record`]) and `tests/vectors/*.json` ([`vectors`]).

pub mod adversary;
pub mod check;
pub mod clock;
pub mod compat;
pub mod fuzz;
pub mod manual;
pub mod random;
pub mod record;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod vectors;
pub mod watchdog;

pub use check::{Violation, L1_FAILOVER_BOUND_RTTS, L1_FAILOVER_ROUNDS, L1_SETTLE_BOUND_ELECTION_TIMEOUTS};
pub use sim::{HostPolicy, NetConfig, Sim};

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Parses lower- or upper-case hex; `None` on odd length or a non-hex digit.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    s.as_bytes().chunks(2).map(|p| Some(digit(p[0])? << 4 | digit(p[1])?)).collect()
}
