//! Errors returned by [`crate::Node`]'s input methods.

use alloc::string::String;
use core::fmt;

use crate::text::Text;

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
    /// `proclaim` of a value longer than [`crate::MAX_VALUE_LEN`] bytes.
    ValueTooLong {
        /// Its length in bytes.
        len: usize,
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
            Error::ValueTooLong { .. } => "value_too_long",
        }
    }
}

impl Error {
    /// The English message for this error, with the values that caused it (what `Display`
    /// writes), built without `core::fmt`.
    pub fn message(&self) -> String {
        match self {
            Error::InvalidPeer { peer } => Text::new("invalid peer id ")
                .q(peer)
                .s(": must be 1 to ")
                .size(crate::MAX_ID_LEN)
                .s(" bytes without whitespace or control characters")
                .done(),
            Error::SelfPeer => String::from("the peer named is this node itself"),
            Error::UnknownPeer { peer } => Text::new("unknown peer ").q(peer).s(": not in this node's view").done(),
            Error::NotLeader => String::from("this node is not the leader"),
            Error::PayloadTooLarge { size, max } => Text::new("payload of ")
                .size(*size)
                .s(" bytes is larger than the maximum of ")
                .size(*max)
                .s(" bytes")
                .done(),
            Error::NoPendingConfirm { term } => {
                Text::new("no leadership confirmation is pending for term ").n(*term).done()
            }
            Error::NotLeaderInTerm { term } => Text::new("this node is not the leader of term ").n(*term).done(),
            Error::ViewFull { peer, max_peers } => Text::new("cannot join ")
                .q(peer)
                .s(": the view already holds max_peers (")
                .n(*max_peers)
                .s(") peers")
                .done(),
            Error::ValueTooLong { len } => crate::config::value_too_long(*len),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn messages_carry_the_values_without_formatting() {
        let e = Error::ViewFull { peer: "n9".into(), max_peers: 64 };
        assert_eq!(e.message(), "cannot join \"n9\": the view already holds max_peers (64) peers");
        assert_eq!(e.to_string(), e.message());
        let e = Error::PayloadTooLarge { size: 70_000, max: 65_000 };
        assert_eq!(e.message(), "payload of 70000 bytes is larger than the maximum of 65000 bytes");
        assert_eq!(
            Error::NotLeaderInTerm { term: u64::MAX }.message(),
            "this node is not the leader of term 18446744073709551615"
        );
    }
}
