//! The wire format: a versioned, compact binary envelope, encoded and decoded by hand.
//!
//! ```text
//! offset  size  field
//! 0       2     magic  b"TN"
//! 2       1     version (3, or 4 for the kinds version 4 added)
//! 3       1     flags: bit 0 = an HMAC-SHA256 tag follows the body; other bits must be 0
//! 4       n     body: cluster, from, term, incarnation, message (see `body`)
//! 4+n     32    tag (only when flag bit 0 is set):
//!               HMAC-SHA256(key, receiver id as the body writes an id ‖ bytes[0 .. 4+n])
//! ```
//!
//! The tag covers the id of the node the datagram is addressed to, which is not on the wire: a
//! datagram sent to one node does not authenticate at another, so an attacker cannot redirect a
//! vote granted to one candidate to another (see `docs/wire.md`).
//!
//! `docs/wire.md` is the definition of every byte. Decoding never panics: every failure is a
//! [`DropReason`].

use alloc::string::String;
use alloc::vec::Vec;
#[cfg(not(target_arch = "wasm32"))]
use hmac::Mac;

mod body;
mod reason;
// Compiled everywhere so that its tests run natively against the `hmac` crate.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod sha256;

pub use reason::DropReason;

/// The two magic bytes that start every tenure message.
pub const MAGIC: [u8; 2] = *b"TN";
/// The newest wire format version this core writes and reads. Version 4 adds message kinds
/// ([`Message::Hello`], [`Message::DeathNotice`]); a message of the kinds version 3 has is written in version 3, byte for
/// byte as a node that speaks only version 3 writes it, so a cluster can mix the two
/// (`docs/wire.md`, "Versions").
pub const VERSION: u8 = 4;
/// The oldest wire format version this core reads (and writes, for every message version 3
/// has). Version 3 added the receiver's id to what the tag covers; older versions are dropped as
/// [`DropReason::UnknownVersion`].
pub const MIN_VERSION: u8 = 3;
/// The largest term on the wire: 2^53 − 1, the largest integer a JavaScript number holds exactly.
/// A message with a greater term is [`DropReason::Malformed`].
pub const MAX_TERM: u64 = (1 << 53) - 1;
/// The largest step above its own term that a node adopts from one message; a message whose
/// term is further ahead is dropped as [`DropReason::ImplausibleTerm`].
pub const MAX_TERM_JUMP: u64 = 1 << 32;
/// Largest encoded message accepted or produced, in bytes (fits one UDP datagram).
pub const MAX_MESSAGE_SIZE: usize = 64 * 1024;
/// Longest proclaimed value, in bytes of UTF-8 (`Config::value`, `Node::proclaim`); a longer
/// one on the wire is [`DropReason::Malformed`].
pub const MAX_VALUE_LEN: usize = 256;
/// Length of the authentication tag.
pub const TAG_LEN: usize = 32;
const HEADER_LEN: usize = 4;
const FLAG_TAGGED: u8 = 0b0000_0001;

/// One protocol message. The `term` lives in the [`Envelope`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// "Could I win an election in `term`?" — asked before incrementing the term.
    PreVote,
    /// Answer to [`Message::PreVote`].
    PreVoteReply {
        /// Whether the pre-vote is granted.
        granted: bool,
    },
    /// "Vote for me in `term`."
    Vote {
        /// Set when the campaign was started by a leadership transfer: voters set leader
        /// stickiness aside for it.
        transfer: bool,
    },
    /// Answer to [`Message::Vote`].
    VoteReply {
        /// Whether the vote is granted.
        granted: bool,
    },
    /// The leader of `term` is alive.
    Heartbeat {
        /// The leader's own clock when it sent this, echoed back in the ack (no clock sync needed).
        sent_at: u64,
    },
    /// Acknowledgement of a heartbeat: the leader's quorum evidence.
    HeartbeatAck {
        /// The `sent_at` of the heartbeat acknowledged.
        echo: u64,
    },
    /// Leadership transfer: "campaign now, without waiting for your timeout".
    TimeoutNow,
    /// An application payload sent by `broadcast`.
    App {
        /// The sender's sequence number for its payloads, counted per incarnation: a receiver
        /// delivers each `(incarnation, seq)` at most once.
        seq: u64,
        /// Opaque bytes.
        payload: Vec<u8>,
    },
    /// "I speak wire version `version`" (version 4 and later): how members learn which messages
    /// every member understands. Changes no term and no vote.
    Hello {
        /// The newest wire version the sender speaks.
        version: u8,
        /// An answer to a `Hello` (which is not answered again).
        reply: bool,
    },
    /// "The leader of the envelope's term, in the envelope's incarnation, is dead, and no work of
    /// its lease runs" (version 4 and later): sent for the dead leader, from its address, by a
    /// watchdog process that outlived it. The envelope's sender, term and incarnation name the
    /// leadership it ends; the body is empty. A follower that acknowledged exactly that
    /// leadership releases the promise it made to it and campaigns (`docs/protocol.md`, "Death
    /// notices").
    DeathNotice,
    /// The leader's proclaimed value (version 4 and later), re-sent with every heartbeat round
    /// to each member that has not acknowledged `seq`. Changes no term and no vote.
    Value {
        /// Counts the values of one leadership (term): a receiver keeps the highest.
        seq: u64,
        /// UTF-8 text of at most [`MAX_VALUE_LEN`] bytes; empty: the leader has no value.
        value: String,
    },
    /// "I hold your value `seq`" (version 4 and later): the leader stops re-sending it.
    ValueAck {
        /// The `seq` of the [`Message::Value`] acknowledged.
        seq: u64,
    },
    /// "My priority is `priority`, and I never lead" (version 4 and later): how members learn
    /// each other's rank (`docs/protocol.md`, "Priorities"). Sent only by a member whose priority
    /// or witness flag is not the default, to each member that speaks version 4, until that
    /// member's run answers with a `Priority` of its own marked `reply`. Changes no term and no
    /// vote.
    Priority {
        /// Higher campaigns first and is preempted to; 0 is the default (and every v0.1.0 member's).
        priority: u32,
        /// A witness: votes and acknowledges, never campaigns, never takes a transfer.
        never_lead: bool,
        /// An answer to a `Priority` (which is not answered again).
        reply: bool,
    },
    /// From an observer to the leader it follows, in answer to each of its heartbeats (version 4
    /// and later, kind 13): "I observe your leadership of the envelope's term and hold your value
    /// `seq` (0: none)". A member that lists the sender as an observer sends it the value when
    /// `seq` is not its current one; nothing else changes (no term, no vote, no evidence). Only
    /// observers send it, and members drop every other kind from an observer.
    Observe {
        /// The `seq` of the leader's value the observer holds; 0 for none.
        seq: u64,
    },
}

impl Message {
    /// A stable lower-case name for logs, tests and the demo.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::PreVote => "pre_vote",
            Message::PreVoteReply { .. } => "pre_vote_reply",
            Message::Vote { .. } => "vote",
            Message::VoteReply { .. } => "vote_reply",
            Message::Heartbeat { .. } => "heartbeat",
            Message::HeartbeatAck { .. } => "heartbeat_ack",
            Message::TimeoutNow => "timeout_now",
            Message::App { .. } => "app",
            Message::Hello { .. } => "hello",
            Message::DeathNotice => "death_notice",
            Message::Value { .. } => "value",
            Message::ValueAck { .. } => "value_ack",
            Message::Priority { .. } => "priority",
            Message::Observe { .. } => "observe",
        }
    }

    /// The envelope version this message is written in: the oldest that has its kind, so that a
    /// node of that version reads every message it can understand.
    pub fn wire_version(&self) -> u8 {
        match self {
            Message::Hello { .. }
            | Message::DeathNotice
            | Message::Value { .. }
            | Message::ValueAck { .. }
            | Message::Priority { .. }
            | Message::Observe { .. } => 4,
            _ => MIN_VERSION,
        }
    }
}

/// Everything inside the authenticated part of a datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// The cluster id; messages for other clusters are dropped.
    pub cluster: String,
    /// The sender's node id.
    pub from: String,
    /// The sender's term (for `PreVote`, the term it would campaign in); at most [`MAX_TERM`].
    pub term: u64,
    /// The sender's incarnation: changes every time the sender starts, so that a receiver can
    /// tell a new boot from traffic sent before it (see `docs/protocol.md`).
    pub incarnation: u64,
    /// The message.
    pub message: Message,
}

/// The keyed state that tags datagrams: the `hmac` and `sha2` crates natively, the same function
/// written for size on WebAssembly (`sha256`), where code size counts and the rounds run in
/// software either way.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type HmacSha256 = hmac::Hmac<sha2::Sha256>;
#[cfg(target_arch = "wasm32")]
pub(crate) use sha256::HmacSha256;

#[cfg(not(target_arch = "wasm32"))]
fn mac(key: &[u8]) -> Option<HmacSha256> {
    // HMAC accepts keys of any length; `new_from_slice` cannot fail for it, but stay total.
    <HmacSha256 as Mac>::new_from_slice(key).ok()
}

#[cfg(target_arch = "wasm32")]
fn mac(key: &[u8]) -> Option<HmacSha256> {
    Some(HmacSha256::new(key))
}

/// The tag of everything `m` absorbed.
#[cfg(not(target_arch = "wasm32"))]
fn finish(m: HmacSha256) -> [u8; TAG_LEN] {
    m.finalize().into_bytes().into()
}

#[cfg(target_arch = "wasm32")]
fn finish(m: HmacSha256) -> [u8; TAG_LEN] {
    m.finalize()
}

/// Whether `tag` is the tag of everything `m` absorbed (compared in constant time).
#[cfg(not(target_arch = "wasm32"))]
fn verify(m: HmacSha256, tag: &[u8]) -> bool {
    m.verify_slice(tag).is_ok()
}

#[cfg(target_arch = "wasm32")]
fn verify(m: HmacSha256, tag: &[u8]) -> bool {
    m.verify(tag)
}

/// `m` with the id of the datagram's receiver absorbed first, encoded as the body encodes an id
/// (its length as a varint, then its bytes): the state that tags a datagram for `receiver`, and
/// the one `receiver` checks tags with (a node computes its own once).
pub(crate) fn addressed(m: &HmacSha256, receiver: &[u8]) -> HmacSha256 {
    let mut m = m.clone();
    let (len, n) = body::varint_bytes(receiver.len() as u64);
    m.update(len.get(..n).unwrap_or_default());
    m.update(receiver);
    m
}

/// A node's two keyed states: the key's own, cloned for every datagram it sends and addressed
/// there to the receiver, and the one with its own id absorbed, which checks every datagram it
/// receives (computed once: receiving costs no more than without the receiver in the tag).
#[derive(Clone, Debug)]
pub(crate) struct NodeMac {
    pub send: HmacSha256,
    pub receive: HmacSha256,
}

/// Hashes nothing: the keyed states are derived from the configured key and the node's id when the
/// node is constructed and never change in its life, so two states of one node always hold equal
/// ones (the model checker tells nodes apart by every field that can change; the key states have no
/// `Hash` of their own, and their `Debug` is redacted).
#[cfg(feature = "model-check")]
impl core::hash::Hash for NodeMac {
    fn hash<H: core::hash::Hasher>(&self, _: &mut H) {}
}

impl NodeMac {
    pub(crate) fn new(key: &[u8], id: &str) -> Option<Self> {
        let send = mac(key)?;
        let receive = addressed(&send, id.as_bytes());
        Some(NodeMac { send, receive })
    }
}

/// The cluster key and the id of the node a datagram is addressed to: a tag covers both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Auth<'a> {
    /// The cluster key.
    pub key: &'a [u8],
    /// The id of the node the datagram is sent to (for [`decode`]: the node that received it).
    pub receiver: &'a str,
}

impl Auth<'_> {
    fn state(&self) -> Option<HmacSha256> {
        mac(self.key).map(|m| addressed(&m, self.receiver.as_bytes()))
    }
}

/// The fields of [`Envelope`], borrowed: encodes to the same bytes without cloning the node's
/// ids for every message.
#[derive(Debug)]
pub(crate) struct EnvelopeRef<'a> {
    pub cluster: &'a str,
    pub from: &'a str,
    pub term: u64,
    pub incarnation: u64,
    pub message: &'a Message,
}

/// A decoded body whose ids are still raw bytes borrowed from the datagram: the node compares
/// them with the ids it expects and validates UTF-8 only when they differ.
#[derive(Debug)]
pub(crate) struct RawEnvelope<'a> {
    /// The envelope's version byte.
    pub version: u8,
    pub cluster: &'a [u8],
    pub from: &'a [u8],
    pub term: u64,
    pub incarnation: u64,
    pub message: Message,
}

impl RawEnvelope<'_> {
    /// The owned envelope, with the ids checked to be UTF-8.
    pub(crate) fn into_owned(self) -> Result<Envelope, DropReason> {
        let text = |b: &[u8]| core::str::from_utf8(b).map(String::from).map_err(|_| DropReason::Malformed);
        Ok(Envelope {
            cluster: text(self.cluster)?,
            from: text(self.from)?,
            term: self.term,
            incarnation: self.incarnation,
            message: self.message,
        })
    }
}

/// The exact length [`write`] appends for this envelope (`tagged`: with an HMAC tag), or the
/// reason a receiver would drop it: [`DropReason::Malformed`] for a term above [`MAX_TERM`],
/// [`DropReason::Oversized`] beyond [`MAX_MESSAGE_SIZE`].
pub(crate) fn encoded_len(envelope: &EnvelopeRef<'_>, tagged: bool) -> Result<usize, DropReason> {
    if envelope.term > MAX_TERM {
        return Err(DropReason::Malformed);
    }
    let tag = if tagged { TAG_LEN } else { 0 };
    let len = body::encoded_len(envelope).saturating_add(HEADER_LEN + tag);
    if len > MAX_MESSAGE_SIZE {
        return Err(DropReason::Oversized);
    }
    Ok(len)
}

/// Appends the encoding of an envelope that [`encoded_len`] accepted to `out` (which the caller
/// sized), tagged for `to` when `m` (the keyed state) is given.
pub(crate) fn write(out: &mut Vec<u8>, envelope: &EnvelopeRef<'_>, m: Option<&HmacSha256>, to: &[u8]) {
    let start = out.len();
    let version = envelope.message.wire_version();
    out.extend_from_slice(&[MAGIC[0], MAGIC[1], version, if m.is_some() { FLAG_TAGGED } else { 0 }]);
    body::write(out, envelope);
    tag(out, start, m, to);
}

/// The length of the first bytes of an encoding (header, cluster, sender) that every message
/// with the same cluster, sender and key presence shares.
pub(crate) fn shared_len(envelope: &EnvelopeRef<'_>) -> usize {
    body::shared_len(envelope).saturating_add(HEADER_LEN)
}

/// When `after_shared` (an encoding's bytes after its [`shared_len`] first, written with the
/// incarnation of `envelope`) starts with the term of `envelope`: the length of term and
/// incarnation.
pub(crate) fn same_term_len(after_shared: &[u8], envelope: &EnvelopeRef<'_>) -> Option<usize> {
    body::same_term_len(after_shared, envelope)
}

/// Completes an encoding of `envelope` of which `out[start..]` holds the first [`shared_len`]
/// bytes (and its term and incarnation unless `term`), written by [`write`] for an envelope with
/// the same cluster and sender and the same `m` presence: appends the rest and the tag for `to`.
pub(crate) fn write_after_shared(
    out: &mut Vec<u8>,
    start: usize,
    envelope: &EnvelopeRef<'_>,
    m: Option<&HmacSha256>,
    to: &[u8],
    term: bool,
) {
    body::write_rest(out, envelope, term);
    tag(out, start, m, to);
}

/// Appends the tag of `out[start..]` for receiver `to` when `m` is given.
fn tag(out: &mut Vec<u8>, start: usize, m: Option<&HmacSha256>, to: &[u8]) {
    if let Some(m) = m {
        let mut m = addressed(m, to);
        m.update(out.get(start..).unwrap_or_default());
        out.extend_from_slice(&finish(m));
    }
}

/// Whether a valid header announces a tag, and its version; the reason to drop the datagram
/// otherwise. The one header check: [`decode_raw`] and [`known_heartbeat`] both call it.
#[inline]
fn tagged(header: &[u8]) -> Result<(bool, u8), DropReason> {
    let [m0, m1, version, flags] = *header else {
        return Err(DropReason::Malformed);
    };
    if [m0, m1] != MAGIC {
        return Err(DropReason::Malformed);
    }
    if !(MIN_VERSION..=VERSION).contains(&version) {
        return Err(DropReason::UnknownVersion);
    }
    if flags & !FLAG_TAGGED != 0 {
        return Err(DropReason::Malformed);
    }
    Ok((flags & FLAG_TAGGED != 0, version))
}

/// Checks size, header and tag, and decodes the body without copying the ids. `m` is the
/// receiver's [`addressed`] state.
pub(crate) fn decode_raw<'a>(bytes: &'a [u8], m: Option<&HmacSha256>) -> Result<RawEnvelope<'a>, DropReason> {
    if bytes.len() > MAX_MESSAGE_SIZE {
        return Err(DropReason::Oversized);
    }
    let (header, rest) = match bytes.split_at_checked(HEADER_LEN) {
        Some(parts) => parts,
        None => return Err(DropReason::Malformed),
    };
    let (tag, version) = tagged(header)?;
    let body = match (tag, m) {
        (false, None) => rest,
        (true, Some(m)) => {
            let signed_len = bytes.len().checked_sub(TAG_LEN).ok_or(DropReason::BadMac)?;
            if signed_len < HEADER_LEN {
                return Err(DropReason::BadMac);
            }
            let (signed, tag) = bytes.split_at_checked(signed_len).ok_or(DropReason::BadMac)?;
            if !tag_matches(m, signed, tag) {
                return Err(DropReason::BadMac);
            }
            signed.get(HEADER_LEN..).ok_or(DropReason::BadMac)?
        }
        _ => return Err(DropReason::BadMac),
    };
    body::read(body, version)
}

/// The `sent_at` of `bytes` when [`decode_raw`] with the same `m` would accept them as a
/// heartbeat with this `cluster`, sender `from`, `term` and `incarnation`; `None` otherwise (the
/// caller then decodes in full, which finds the reason). The same header check ([`tagged`]: a tag
/// exactly when `m` is given) and the same body decoder (`body::read`, its canonical varints) as
/// [`decode_raw`]; only the order differs: the known fields are compared before the tag is
/// checked, so a datagram that is not the expected heartbeat costs no HMAC here. Native builds
/// only (see `Node::accept`), and the tests on every target.
#[cfg(any(test, not(target_family = "wasm")))]
#[inline]
pub(crate) fn known_heartbeat(
    bytes: &[u8],
    m: Option<&HmacSha256>,
    cluster: &[u8],
    from: &[u8],
    term: u64,
    incarnation: u64,
) -> Option<u64> {
    if bytes.len() > MAX_MESSAGE_SIZE {
        return None;
    }
    let signed_len = if m.is_some() { bytes.len().checked_sub(TAG_LEN)? } else { bytes.len() };
    let (signed, tag) = bytes.split_at_checked(signed_len)?;
    let (header, body) = signed.split_at_checked(HEADER_LEN)?;
    if tagged(header).ok()?.0 != m.is_some() {
        return None;
    }
    let sent_at = body::known_heartbeat(body, cluster, from, term, incarnation)?;
    if let Some(m) = m {
        tag_matches(m, signed, tag).then_some(())?;
    }
    Some(sent_at)
}

/// Whether `tag` is the HMAC of `signed` under the keyed state `m` (compared in constant time).
fn tag_matches(m: &HmacSha256, signed: &[u8], tag: &[u8]) -> bool {
    let mut m = m.clone();
    m.update(signed);
    verify(m, tag)
}

/// Encodes an envelope, appending an HMAC-SHA256 tag for `auth.receiver` when `auth` is given.
///
/// Everything `encode` writes, [`decode`] reads back (with the same `auth`). The error is the
/// reason a receiver would drop the result: [`DropReason::Oversized`] beyond
/// [`MAX_MESSAGE_SIZE`], [`DropReason::Malformed`] for a term above [`MAX_TERM`].
pub fn encode(envelope: &Envelope, auth: Option<Auth<'_>>) -> Result<Vec<u8>, DropReason> {
    let (m, to) = match auth {
        Some(a) => (Some(mac(a.key).ok_or(DropReason::BadMac)?), a.receiver.as_bytes()),
        None => (None, &[][..]),
    };
    let r = EnvelopeRef {
        cluster: &envelope.cluster,
        from: &envelope.from,
        term: envelope.term,
        incarnation: envelope.incarnation,
        message: &envelope.message,
    };
    let mut out = Vec::with_capacity(encoded_len(&r, m.is_some())?);
    write(&mut out, &r, m.as_ref(), to);
    Ok(out)
}

/// Decodes and authenticates a datagram. `auth` must be given when the receiving node has a
/// cluster key: the key and the receiving node's id.
///
/// A node with a key rejects untagged messages and messages tagged for another receiver; a node
/// without one rejects tagged messages (it cannot check them), all as [`DropReason::BadMac`].
/// Non-canonical encodings (over-long varints, booleans other than 0 and 1), terms above
/// [`MAX_TERM`] and ids that are not UTF-8 are [`DropReason::Malformed`].
pub fn decode(bytes: &[u8], auth: Option<Auth<'_>>) -> Result<Envelope, DropReason> {
    let m = match auth {
        Some(a) => Some(a.state().ok_or(DropReason::BadMac)?),
        None => None,
    };
    decode_raw(bytes, m.as_ref())?.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn env(message: Message) -> Envelope {
        Envelope { cluster: "c".to_string(), from: "a".to_string(), term: 7, incarnation: 5, message }
    }

    #[test]
    fn round_trip_every_kind_with_and_without_key() {
        let all = vec![
            Message::PreVote,
            Message::PreVoteReply { granted: true },
            Message::Vote { transfer: true },
            Message::VoteReply { granted: false },
            Message::Heartbeat { sent_at: 123_456 },
            Message::HeartbeatAck { echo: 99 },
            Message::TimeoutNow,
            Message::App { seq: 300, payload: vec![1, 2, 3] },
            Message::Hello { version: 4, reply: true },
            Message::DeathNotice,
            Message::Value { seq: 2, value: "http://a:8080".to_string() },
            Message::Value { seq: 300, value: String::new() },
            Message::ValueAck { seq: 300 },
            Message::Priority { priority: 0, never_lead: true, reply: false },
            Message::Priority { priority: u32::MAX, never_lead: false, reply: true },
            Message::Observe { seq: 0 },
            Message::Observe { seq: 300 },
        ];
        for m in all {
            for key in [None, Some(&b"secret"[..])] {
                let e = env(m.clone());
                let auth = key.map(|key| Auth { key, receiver: "b" });
                let bytes = encode(&e, auth).unwrap();
                assert_eq!(decode(&bytes, auth), Ok(e));
            }
        }
    }

    #[test]
    fn decoding_anything_but_an_app_allocates_nothing() {
        for key in [None, Some(&b"secret"[..])] {
            let auth = key.map(|key| Auth { key, receiver: "b" });
            let m = auth.and_then(|a| a.state());
            for message in
                [Message::Heartbeat { sent_at: 1000 }, Message::HeartbeatAck { echo: 1000 }, Message::PreVote]
            {
                let bytes = encode(&env(message.clone()), auth).unwrap();
                let n = crate::counting::allocations_in(|| {
                    let raw = decode_raw(&bytes, m.as_ref()).unwrap();
                    assert_eq!((raw.cluster, raw.from, raw.term, raw.incarnation), (&b"c"[..], &b"a"[..], 7, 5));
                    assert_eq!(raw.message, message);
                });
                assert_eq!(n, 0, "decoding {message:?} allocated");
            }
            // The counter works: an App's payload is the one allocation.
            let app = encode(&env(Message::App { seq: 1, payload: vec![1, 2] }), auth).unwrap();
            assert_eq!(crate::counting::allocations_in(|| drop(decode_raw(&app, m.as_ref()))), 1);
        }
    }

    #[test]
    fn a_tag_checks_only_at_the_receiver_it_was_made_for() {
        let e = env(Message::VoteReply { granted: true });
        let to_b = encode(&e, Some(Auth { key: b"k", receiver: "b" })).unwrap();
        assert_eq!(decode(&to_b, Some(Auth { key: b"k", receiver: "b" })), Ok(e.clone()));
        for receiver in ["c", "bb", "", "B"] {
            assert_eq!(decode(&to_b, Some(Auth { key: b"k", receiver })), Err(DropReason::BadMac), "{receiver}");
        }
        // The receiver's id is length-prefixed: "b" then "c…" cannot pass for "bc" then "…".
        let to_bc = encode(&e, Some(Auth { key: b"k", receiver: "bc" })).unwrap();
        assert_ne!(to_b, to_bc);
        // Without a key nothing is tagged, so the receiver does not matter.
        assert_eq!(encode(&e, None).unwrap().len() + TAG_LEN, to_b.len());
    }

    #[test]
    fn reason_texts_quote_the_constants() {
        assert!(DropReason::Oversized.text().contains(&MAX_MESSAGE_SIZE.to_string()));
        assert_eq!(MAX_TERM_JUMP, 1 << 32);
        assert!(DropReason::ImplausibleTerm.text().contains("2^32"));
    }

    #[test]
    fn documented_heartbeat_example_matches() {
        // docs/wire.md spells these bytes out field by field.
        let e = Envelope {
            cluster: "test".to_string(),
            from: "n1".to_string(),
            term: 3,
            incarnation: 1,
            message: Message::Heartbeat { sent_at: 1000 },
        };
        let expected =
            [0x54, 0x4e, 0x03, 0x00, 0x04, b't', b'e', b's', b't', 0x02, b'n', b'1', 0x03, 0x01, 0x04, 0xe8, 0x07];
        assert_eq!(encode(&e, None).unwrap(), expected);
    }

    #[test]
    fn terms_past_max_term_neither_encode_nor_decode() {
        let mut e = env(Message::PreVote);
        e.term = MAX_TERM;
        let bytes = encode(&e, None).unwrap();
        assert_eq!(decode(&bytes, None), Ok(e.clone()));
        e.term = MAX_TERM + 1;
        assert_eq!(encode(&e, None), Err(DropReason::Malformed));
        // 2^53 by hand: header, "c", "a", then the term varint.
        let mut past = vec![0x54, 0x4e, VERSION, 0x00, 0x01, b'c', 0x01, b'a'];
        past.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10, 0x05, 0x00]);
        assert_eq!(decode(&past, None), Err(DropReason::Malformed));
        past[15] = 0x0f; // 15 * 2^49, below the bound
        assert!(decode(&past, None).is_ok());
    }

    #[test]
    fn every_reason_has_a_distinct_name_index_and_text() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(r.index(), i);
            assert!(r.text().ends_with(&alloc::format!("({})", r.as_str())));
            assert_eq!(r.to_string(), r.text());
        }
    }

    #[test]
    fn wrong_or_missing_key_is_bad_mac() {
        let e = env(Message::TimeoutNow);
        let tagged = encode(&e, Some(Auth { key: b"k1", receiver: "b" })).unwrap();
        let plain = encode(&e, None).unwrap();
        assert_eq!(decode(&tagged, Some(Auth { key: b"k2", receiver: "b" })), Err(DropReason::BadMac));
        assert_eq!(decode(&plain, Some(Auth { key: b"k1", receiver: "b" })), Err(DropReason::BadMac));
        assert_eq!(decode(&tagged, None), Err(DropReason::BadMac));
        let mut flipped = tagged.clone();
        flipped[6] ^= 1;
        assert_eq!(decode(&flipped, Some(Auth { key: b"k1", receiver: "b" })), Err(DropReason::BadMac));
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        assert_eq!(decode(&[], None), Err(DropReason::Malformed));
        assert_eq!(decode(b"TN", None), Err(DropReason::Malformed));
        assert_eq!(decode(b"XX\x01\x00", None), Err(DropReason::Malformed));
        assert_eq!(decode(b"TN\x01\x00abc", None), Err(DropReason::UnknownVersion));
        assert_eq!(decode(b"TN\x02\x00abc", None), Err(DropReason::UnknownVersion));
        assert_eq!(decode(b"TN\x03\x00\xff\xff\xff", None), Err(DropReason::Malformed));
        assert_eq!(decode(&vec![0u8; MAX_MESSAGE_SIZE + 1], None), Err(DropReason::Oversized));
        let mut trailing = encode(&env(Message::PreVote), None).unwrap();
        trailing.push(0);
        assert_eq!(decode(&trailing, None), Err(DropReason::Malformed));
        // The same TimeoutNow with its term 0 written as an over-long varint (80 00).
        let mut canonical = encode(&env(Message::TimeoutNow), None).unwrap();
        canonical[4 + 2 + 2] = 0; // term 7 -> 0, still one byte
        assert!(decode(&canonical, None).is_ok());
        let mut overlong = canonical.clone();
        overlong.splice(8..9, [0x80, 0x00]);
        assert_eq!(decode(&overlong, None), Err(DropReason::Malformed));
    }
}
