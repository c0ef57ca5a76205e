//! Failover and scale measurements for tenure over a lean, deterministic simulated network.
//!
//! [`sim::Sim`] runs real [`tenure::Node`]s with a microsecond clock (nodes see whole
//! milliseconds, like a host with a millisecond monotonic clock), one-way delays of half a round
//! trip with ±20 % uniform jitter, and an event queue; [`trial`] measures one leaderless gap;
//! [`stats`] summarises; [`plot`] draws the distributions to a PNG without any system font.

pub mod plot;
pub mod sim;
pub mod stats;

pub use sim::{elect_large, trial, Fault, LargeElection, TrialSetup};
