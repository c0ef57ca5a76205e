//! Two five-node clusters, one of tenure nodes and one of raft-rs nodes (election only: empty
//! log, pre-vote and check-quorum on), each run over an in-memory network until a leader is
//! established and heartbeats flow, then taken apart so that one follower and the leader can be
//! measured on exactly the messages they handle in steady state.
//!
//! Both sides pay for the bytes: tenure decodes and encodes its wire format inside
//! `handle_message`/`poll_output_ref`; the raft-rs side decodes the protobuf heartbeat, steps,
//! processes `Ready` (persisting into `MemStorage`), advances, and encodes the response.

pub mod raft_side;
pub mod tenure_side;

/// Cluster size used by the comparison.
pub const NODES: usize = 5;
