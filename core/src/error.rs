//! Errors returned by [`crate::Node`]'s input methods.

use alloc::string::String;
use core::fmt;

/// A host call that the node refused. The node's state is unchanged when one is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A peer id that is empty, longer than [`crate::MAX_ID_LEN`] bytes, or contains whitespace or
    /// a control character.
    InvalidPeer {
        /// The id given.
        peer: String,
    },
    /// The operation names this node itself where only another node makes sense.
    SelfPeer,
    /// The peer is not in this node's view.
    UnknownPeer {
        /// The id given.
        peer: String,
    },
    /// Only the leader can do this.
    NotLeader,
    /// A broadcast payload that would not fit in one message.
    PayloadTooLarge {
        /// Payload size in bytes.
        size: usize,
        /// Largest payload accepted.
        max: usize,
    },
    /// `confirm_leader` for a term in which no confirmation is pending (already answered, timed
    /// out, or superseded).
    NoPendingConfirm {
        /// The term given.
        term: u64,
    },
    /// `leader_handler_failed` for a term this node is not leading.
    NotLeaderInTerm {
        /// The term given.
        term: u64,
    },
    /// `join` would grow the view beyond `max_peers`.
    ViewFull {
        /// The id given.
        peer: String,
        /// The cap.
        max_peers: u32,
    },
}

impl Error {
    /// A stable snake_case code, identical in every binding.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidPeer { .. } => "invalid_peer",
            Error::SelfPeer => "self_peer",
            Error::UnknownPeer { .. } => "unknown_peer",
            Error::NotLeader => "not_leader",
            Error::PayloadTooLarge { .. } => "payload_too_large",
            Error::NoPendingConfirm { .. } => "no_pending_confirm",
            Error::NotLeaderInTerm { .. } => "not_leader_in_term",
            Error::ViewFull { .. } => "view_full",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidPeer { peer } => {
                write!(
                    f,
                    "invalid peer id \"{peer}\": must be 1 to {} bytes without whitespace or control characters",
                    crate::MAX_ID_LEN
                )
            }
            Error::SelfPeer => write!(f, "the peer named is this node itself"),
            Error::UnknownPeer { peer } => write!(f, "unknown peer \"{peer}\": not in this node's view"),
            Error::NotLeader => write!(f, "this node is not the leader"),
            Error::PayloadTooLarge { size, max } => {
                write!(f, "payload of {size} bytes is larger than the maximum of {max} bytes")
            }
            Error::NoPendingConfirm { term } => {
                write!(f, "no leadership confirmation is pending for term {term}")
            }
            Error::NotLeaderInTerm { term } => write!(f, "this node is not the leader of term {term}"),
            Error::ViewFull { peer, max_peers } => {
                write!(f, "cannot join \"{peer}\": the view already holds max_peers ({max_peers}) peers")
            }
        }
    }
}

impl core::error::Error for Error {}
