//! # tenure — embeddable, sans-IO leader election
//!
//! One coordinator among a group of nodes, with a clean start/stop signal: Raft-style terms,
//! votes, pre-vote, check-quorum and heartbeats, without a replicated log. The core never does
//! I/O, never reads a clock and never spawns a thread: the host moves opaque byte strings between
//! nodes, passes the time of a monotonic millisecond clock into every call, polls
//! [`Node::poll_output_ref`] (borrowed, allocation-free) or [`Node::poll_output`] (owned) after
//! every input and wakes the node at [`Node::poll_timeout`].
//!
//! Start with [`Node`] and [`Config`]; `docs/protocol.md` explains the rules and guarantees,
//! `docs/wire.md` the bytes.
#![no_std]
// No unsafe code in the product; the unit tests' allocation counter (counting.rs) is the one exception.
#![cfg_attr(not(test), forbid(unsafe_code))]
#![cfg_attr(test, deny(unsafe_code))]
#![deny(missing_docs)]

extern crate alloc;

mod config;
#[cfg(test)]
#[allow(unsafe_code)]
mod counting;
mod error;
mod fence;
mod inspect;
mod node;
mod rng;
mod text;
mod vecmap;
pub mod wire;

pub use config::{
    Config, ConfigError, ConfigWarning, DurableState, ValidConfig, DEFAULT_CONFIRM_LEADER,
    DEFAULT_ELECTION_TIMEOUT_MAX, DEFAULT_ELECTION_TIMEOUT_MIN, DEFAULT_GHOST_TTL, DEFAULT_HEARTBEAT_INTERVAL,
    DEFAULT_MAX_CLOCK_DRIFT_PPM, DEFAULT_MAX_PEERS, DEFAULT_MIN_CLUSTER_SIZE, DEFAULT_PRE_VOTE, MAX_CLOCK_DRIFT_PPM,
    MAX_DURATION_MS, MAX_ID_LEN,
};
pub use error::Error;
pub use fence::{FenceChecker, FenceVerdict};
pub use inspect::Inspect;
#[cfg(feature = "bug-injection")]
pub use node::Bug;
pub use node::{Event, Node, Output, OutputRef, PeerDownReason, Role, PREEMPT_BACKOFF_FACTOR};
#[cfg(feature = "getrandom")]
pub use rng::{os_seed, SeedError};
pub use wire::{DropReason, MAX_MESSAGE_SIZE, MAX_TERM, MAX_TERM_JUMP, MAX_VALUE_LEN};

// The README's Rust example is compiled as a doctest, so it cannot go stale (errors convert into
// `Box<dyn Error>` with `?`).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// The crate version, which is the version of the whole project (every binding checks it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
