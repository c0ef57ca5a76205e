//! Why an inbound message was dropped: the names and texts are constant tables, so a binding
//! that reports a drop links no formatting code.

/// Why an inbound message was dropped. Counted per reason in [`crate::Inspect::dropped_by_reason`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DropReason {
    /// Larger than [`MAX_MESSAGE_SIZE`](super::MAX_MESSAGE_SIZE).
    Oversized,
    /// Not a tenure message, or a body that does not decode.
    Malformed,
    /// A tenure message of a version this core does not speak.
    UnknownVersion,
    /// A message for another cluster id.
    WrongCluster,
    /// Missing, unexpected or invalid authentication tag.
    BadMac,
    /// The sender named inside the message is not the peer the host says it came from.
    SenderMismatch,
    /// A message that claims to come from this node itself.
    FromSelf,
    /// A message from a peer removed by `leave` or `peer_down(terminated)` less than one election
    /// timeout ago (traffic in flight must not re-admit it).
    RemovedPeer,
    /// A sender that is not a declared peer, while membership is closed (the default).
    UnknownPeer,
    /// Admitting the sender would make the view larger than `max_peers`.
    ViewFull,
    /// A term more than [`MAX_TERM_JUMP`](super::MAX_TERM_JUMP) above the receiver's own.
    ImplausibleTerm,
    /// An `App` payload already delivered from this sender incarnation, or a message from an
    /// incarnation of the sender that the receiver has retired.
    Replay,
    /// A death notice for a leadership this receiver does not follow: another term or
    /// incarnation, a sender it never acknowledged as leader in its current term, or a receiver
    /// that is not a follower. Nothing changes.
    NoticeMismatch,
}

impl DropReason {
    /// Every reason, in a stable order.
    pub const ALL: [DropReason; 13] = [
        DropReason::Oversized,
        DropReason::Malformed,
        DropReason::UnknownVersion,
        DropReason::WrongCluster,
        DropReason::BadMac,
        DropReason::SenderMismatch,
        DropReason::FromSelf,
        DropReason::RemovedPeer,
        DropReason::UnknownPeer,
        DropReason::ViewFull,
        DropReason::ImplausibleTerm,
        DropReason::Replay,
        DropReason::NoticeMismatch,
    ];

    /// The stable snake_case name used in `inspect()` and by every binding.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Oversized => "oversized",
            DropReason::Malformed => "malformed",
            DropReason::UnknownVersion => "unknown_version",
            DropReason::WrongCluster => "wrong_cluster",
            DropReason::BadMac => "bad_mac",
            DropReason::SenderMismatch => "sender_mismatch",
            DropReason::FromSelf => "from_self",
            DropReason::RemovedPeer => "removed_peer",
            DropReason::UnknownPeer => "unknown_peer",
            DropReason::ViewFull => "view_full",
            DropReason::ImplausibleTerm => "implausible_term",
            DropReason::Replay => "replay",
            DropReason::NoticeMismatch => "notice_mismatch",
        }
    }

    /// This reason's position in [`DropReason::ALL`] (for per-reason counters and tables).
    pub fn index(self) -> usize {
        match self {
            DropReason::Oversized => 0,
            DropReason::Malformed => 1,
            DropReason::UnknownVersion => 2,
            DropReason::WrongCluster => 3,
            DropReason::BadMac => 4,
            DropReason::SenderMismatch => 5,
            DropReason::FromSelf => 6,
            DropReason::RemovedPeer => 7,
            DropReason::UnknownPeer => 8,
            DropReason::ViewFull => 9,
            DropReason::ImplausibleTerm => 10,
            DropReason::Replay => 11,
            DropReason::NoticeMismatch => 12,
        }
    }

    /// A one-line English explanation ending in the name, e.g. `"unknown wire format version
    /// (unknown_version)"`: what `Display` writes, as a constant (no formatting code needed).
    pub fn text(self) -> &'static str {
        match self {
            DropReason::Oversized => "message larger than 65536 bytes (oversized)",
            DropReason::Malformed => "not a well-formed tenure message (malformed)",
            DropReason::UnknownVersion => "unknown wire format version (unknown_version)",
            DropReason::WrongCluster => "message for another cluster id (wrong_cluster)",
            DropReason::BadMac => "missing or invalid authentication tag (bad_mac)",
            DropReason::SenderMismatch => {
                "sender inside the message differs from the transport sender (sender_mismatch)"
            }
            DropReason::FromSelf => "message claims to come from this node (from_self)",
            DropReason::RemovedPeer => "message from a peer removed less than one election timeout ago (removed_peer)",
            DropReason::UnknownPeer => "message from a sender that is not a declared peer (unknown_peer)",
            DropReason::ViewFull => "admitting the sender would exceed max_peers (view_full)",
            DropReason::ImplausibleTerm => "term more than 2^32 above this node's term (implausible_term)",
            DropReason::Replay => {
                "payload already delivered, or a message from a retired incarnation of the sender (replay)"
            }
            DropReason::NoticeMismatch => "death notice for a leadership this node does not follow (notice_mismatch)",
        }
    }
}

impl core::fmt::Display for DropReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.text())
    }
}

#[cfg(test)]
mod tests {
    use super::DropReason;

    #[test]
    fn each_reason_s_index_is_its_position_in_all() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(r.index(), i, "{r:?}");
        }
    }
}
