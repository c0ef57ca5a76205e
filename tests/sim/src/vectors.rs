//! Wire-format test vectors (`tests/vectors/README.md`): every message kind with and without
//! authentication, and byte strings that must be dropped, with the reason.

use serde::{Deserialize, Serialize};
use tenure::wire::{decode, encode, Auth, Envelope, Message, MAX_MESSAGE_SIZE, MAX_TERM, VERSION};
use tenure::{Config, Node};

use crate::{hex, unhex};

/// One valid message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageVector {
    pub name: String,
    pub key_hex: Option<String>,
    /// With a key: the id of the node the message is addressed to (the tag covers it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<String>,
    pub hex: String,
    pub envelope: EnvelopeJson,
}

/// An envelope, decoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvelopeJson {
    pub cluster: String,
    pub from: String,
    pub term: u64,
    pub incarnation: u64,
    pub message: MessageJson,
}

/// A message, decoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MessageJson {
    PreVote,
    PreVoteReply { granted: bool },
    Vote { transfer: bool },
    VoteReply { granted: bool },
    Heartbeat { sent_at: u64 },
    HeartbeatAck { echo: u64 },
    TimeoutNow,
    App { seq: u64, payload_hex: String },
    Hello { version: u8, reply: bool },
    DeathNotice,
    Value { seq: u64, value: String },
    ValueAck { seq: u64 },
    Priority { priority: u32, never_lead: bool, reply: bool },
    Observe { seq: u64 },
}

impl MessageJson {
    fn of(m: &Message) -> MessageJson {
        match m {
            Message::PreVote => MessageJson::PreVote,
            Message::PreVoteReply { granted } => MessageJson::PreVoteReply { granted: *granted },
            Message::Vote { transfer } => MessageJson::Vote { transfer: *transfer },
            Message::VoteReply { granted } => MessageJson::VoteReply { granted: *granted },
            Message::Heartbeat { sent_at } => MessageJson::Heartbeat { sent_at: *sent_at },
            Message::HeartbeatAck { echo } => MessageJson::HeartbeatAck { echo: *echo },
            Message::TimeoutNow => MessageJson::TimeoutNow,
            Message::App { seq, payload } => MessageJson::App { seq: *seq, payload_hex: hex(payload) },
            Message::Hello { version, reply } => MessageJson::Hello { version: *version, reply: *reply },
            Message::DeathNotice => MessageJson::DeathNotice,
            Message::Value { seq, value } => MessageJson::Value { seq: *seq, value: value.clone() },
            Message::ValueAck { seq } => MessageJson::ValueAck { seq: *seq },
            Message::Priority { priority, never_lead, reply } => {
                MessageJson::Priority { priority: *priority, never_lead: *never_lead, reply: *reply }
            }
            Message::Observe { seq } => MessageJson::Observe { seq: *seq },
        }
    }
    fn to_message(&self) -> Option<Message> {
        Some(match self {
            MessageJson::PreVote => Message::PreVote,
            MessageJson::PreVoteReply { granted } => Message::PreVoteReply { granted: *granted },
            MessageJson::Vote { transfer } => Message::Vote { transfer: *transfer },
            MessageJson::VoteReply { granted } => Message::VoteReply { granted: *granted },
            MessageJson::Heartbeat { sent_at } => Message::Heartbeat { sent_at: *sent_at },
            MessageJson::HeartbeatAck { echo } => Message::HeartbeatAck { echo: *echo },
            MessageJson::TimeoutNow => Message::TimeoutNow,
            MessageJson::App { seq, payload_hex } => Message::App { seq: *seq, payload: unhex(payload_hex)? },
            MessageJson::Hello { version, reply } => Message::Hello { version: *version, reply: *reply },
            MessageJson::DeathNotice => Message::DeathNotice,
            MessageJson::Value { seq, value } => Message::Value { seq: *seq, value: value.clone() },
            MessageJson::ValueAck { seq } => Message::ValueAck { seq: *seq },
            MessageJson::Priority { priority, never_lead, reply } => {
                Message::Priority { priority: *priority, never_lead: *never_lead, reply: *reply }
            }
            MessageJson::Observe { seq } => Message::Observe { seq: *seq },
        })
    }
}

impl EnvelopeJson {
    /// From a decoded envelope.
    pub fn of(e: &Envelope) -> EnvelopeJson {
        EnvelopeJson {
            cluster: e.cluster.clone(),
            from: e.from.clone(),
            term: e.term,
            incarnation: e.incarnation,
            message: MessageJson::of(&e.message),
        }
    }
    /// To an envelope (`None` on bad hex).
    pub fn to_envelope(&self) -> Option<Envelope> {
        Some(Envelope {
            cluster: self.cluster.clone(),
            from: self.from.clone(),
            term: self.term,
            incarnation: self.incarnation,
            message: self.message.to_message()?,
        })
    }
}

/// One byte string that a node must drop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvalidVector {
    pub name: String,
    pub key_hex: Option<String>,
    pub cluster: String,
    pub node_id: String,
    pub from: String,
    pub hex: String,
    pub reason: String,
}

const KEY: &[u8] = b"tenure test vector key";
/// The node every keyed vector is addressed to.
const RECEIVER: &str = "n1";

fn auth(key: Option<&[u8]>) -> Option<Auth<'_>> {
    key.map(|key| Auth { key, receiver: RECEIVER })
}

/// The incarnation most vectors carry (any u64 is valid).
const INC: u64 = 0x2f1a_9c3e_55d0_0b07;

fn env(cluster: &str, from: &str, term: u64, message: Message) -> Envelope {
    Envelope { cluster: cluster.into(), from: from.into(), term, incarnation: INC, message }
}

fn with_incarnation(incarnation: u64, e: Envelope) -> Envelope {
    Envelope { incarnation, ..e }
}

/// Every valid vector.
pub fn messages() -> Vec<MessageVector> {
    let base: Vec<(&str, Envelope)> = vec![
        ("pre_vote", env("prod", "10.0.0.1:7000", 4, Message::PreVote)),
        ("pre_vote_reply_granted", env("prod", "10.0.0.2:7000", 4, Message::PreVoteReply { granted: true })),
        ("pre_vote_reply_refused", env("prod", "10.0.0.2:7000", 3, Message::PreVoteReply { granted: false })),
        ("vote", env("prod", "10.0.0.1:7000", 4, Message::Vote { transfer: false })),
        ("vote_transfer", env("prod", "10.0.0.3:7000", 9, Message::Vote { transfer: true })),
        ("vote_reply_granted", env("prod", "10.0.0.2:7000", 4, Message::VoteReply { granted: true })),
        ("vote_reply_refused", env("prod", "10.0.0.2:7000", 4, Message::VoteReply { granted: false })),
        ("heartbeat", env("prod", "10.0.0.1:7000", 4, Message::Heartbeat { sent_at: 1_733_150_000_123 })),
        ("heartbeat_zero", env("prod", "10.0.0.1:7000", 1, Message::Heartbeat { sent_at: 0 })),
        ("heartbeat_ack", env("prod", "10.0.0.2:7000", 4, Message::HeartbeatAck { echo: 1_733_150_000_123 })),
        ("timeout_now", env("prod", "10.0.0.1:7000", 4, Message::TimeoutNow)),
        ("app", env("prod", "10.0.0.1:7000", 4, Message::App { seq: 1, payload: b"hello, cluster".to_vec() })),
        ("hello", env("prod", "10.0.0.2:7000", 4, Message::Hello { version: 4, reply: false })),
        ("hello_reply", env("prod", "10.0.0.1:7000", 4, Message::Hello { version: 4, reply: true })),
        ("death_notice", env("prod", "10.0.0.1:7000", 4, Message::DeathNotice)),
        ("app_empty", env("prod", "10.0.0.1:7000", 0, Message::App { seq: 0, payload: Vec::new() })),
        ("app_binary", env("prod", "n1", 7, Message::App { seq: 300, payload: (0u8..=255).collect() })),
        ("app_seq_max", env("prod", "n1", 7, Message::App { seq: u64::MAX, payload: b"x".to_vec() })),
        ("term_max", env("prod", "n1", MAX_TERM, Message::Heartbeat { sent_at: u64::MAX })),
        ("incarnation_zero", with_incarnation(0, env("prod", "n1", 2, Message::TimeoutNow))),
        ("incarnation_max", with_incarnation(u64::MAX, env("prod", "n1", 2, Message::HeartbeatAck { echo: 5 }))),
        ("unicode_ids", env("clüster ☃", "nöde-ß", 300, Message::PreVote)),
        ("long_ids", env(&"c".repeat(255), &"n".repeat(255), 128, Message::VoteReply { granted: true })),
    ];
    let mut out = Vec::new();
    for (key, suffix) in [(None, ""), (Some(KEY), "_mac")] {
        for (name, e) in &base {
            let bytes = encode(e, auth(key)).expect("vector encodes");
            out.push(MessageVector {
                name: format!("{name}{suffix}"),
                key_hex: key.map(hex),
                receiver: key.map(|_| RECEIVER.to_string()),
                hex: hex(&bytes),
                envelope: EnvelopeJson::of(e),
            });
        }
    }
    out
}

/// (name, node key, node id, transport sender, bytes, drop reason).
type Case<'a> = (&'a str, Option<&'a [u8]>, &'a str, &'a str, Vec<u8>, &'a str);

/// Every invalid vector.
pub fn invalid() -> Vec<InvalidVector> {
    let good = encode(&env("prod", "n2", 4, Message::PreVote), None).expect("encodes");
    let tagged = encode(&env("prod", "n2", 4, Message::PreVote), auth(Some(KEY))).expect("encodes");
    let for_n3 = Auth { key: KEY, receiver: "n3" };
    let tagged_for_n3 = encode(&env("prod", "n2", 4, Message::PreVote), Some(for_n3)).expect("encodes");
    let mut flipped_tag = tagged.clone();
    let last = flipped_tag.len() - 1;
    flipped_tag[last] ^= 0x01;
    let mut flipped_body = tagged.clone();
    flipped_body[6] ^= 0x20;
    let mut bad_flags = good.clone();
    bad_flags[3] = 0x02;
    let cases: Vec<Case<'_>> = vec![
        ("empty", None, "n1", "n2", vec![], "malformed"),
        ("magic_only", None, "n1", "n2", b"TN".to_vec(), "malformed"),
        ("bad_magic", None, "n1", "n2", [b"XX".as_slice(), &good[2..]].concat(), "malformed"),
        (
            "unknown_version",
            None,
            "n1",
            "n2",
            [b"TN".as_slice(), &[VERSION + 1], &good[3..]].concat(),
            "unknown_version",
        ),
        ("version_1", None, "n1", "n2", [b"TN\x01".as_slice(), &good[3..]].concat(), "unknown_version"),
        ("version_2", None, "n1", "n2", [b"TN\x02".as_slice(), &good[3..]].concat(), "unknown_version"),
        ("hello_in_version_3", None, "n1", "n2", hello_in_version_3(), "malformed"),
        ("death_notice_in_version_3", None, "n1", "n2", death_notice_in_version_3(), "malformed"),
        ("unknown_flags", None, "n1", "n2", bad_flags, "malformed"),
        ("truncated_body", None, "n1", "n2", good[..good.len() - 1].to_vec(), "malformed"),
        ("trailing_byte", None, "n1", "n2", [good.as_slice(), &[0]].concat(), "malformed"),
        ("unknown_message_kind", None, "n1", "n2", unknown_kind(), "malformed"),
        ("header_only", None, "n1", "n2", b"TN\x03\x00".to_vec(), "malformed"),
        ("term_past_max", None, "n1", "n2", raw(&[], &uv(MAX_TERM + 1), &uv(INC), &[0]), "malformed"),
        ("term_u64_max", None, "n1", "n2", raw(&[], &uv(u64::MAX), &uv(INC), &[0]), "malformed"),
        ("overlong_varint_term", None, "n1", "n2", raw(&[], &[0x84, 0x00], &uv(INC), &[0]), "malformed"),
        ("overlong_varint_zero", None, "n1", "n2", raw(&[], &uv(4), &[0x80, 0x80, 0x00], &[0]), "malformed"),
        ("overlong_varint_length", None, "n1", "n2", raw(&[0x84, 0x00], &uv(4), &uv(INC), &[0]), "malformed"),
        (
            "varint_past_u64",
            None,
            "n1",
            "n2",
            raw(&[], &uv(4), &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], &[0]),
            "malformed",
        ),
        (
            "varint_eleven_bytes",
            None,
            "n1",
            "n2",
            raw(&[], &uv(4), &[0x80; 10].iter().copied().chain([0x00]).collect::<Vec<_>>(), &[0]),
            "malformed",
        ),
        ("bad_bool", None, "n1", "n2", raw(&[], &uv(4), &uv(INC), &[0x01, 0x02]), "malformed"),
        ("app_payload_past_end", None, "n1", "n2", raw(&[], &uv(4), &uv(INC), &[0x07, 0x01, 0x05, b'a']), "malformed"),
        ("from_not_utf8", None, "n1", "n2", raw_from(&[0xff, 0xfe]), "malformed"),
        ("oversized", None, "n1", "n2", vec![0u8; MAX_MESSAGE_SIZE + 1], "oversized"),
        (
            "wrong_cluster",
            None,
            "n1",
            "n2",
            encode(&env("staging", "n2", 4, Message::PreVote), None).expect("e"),
            "wrong_cluster",
        ),
        ("missing_mac", Some(KEY), "n1", "n2", good.clone(), "bad_mac"),
        ("unexpected_mac", None, "n1", "n2", tagged.clone(), "bad_mac"),
        (
            "wrong_key",
            Some(KEY),
            "n1",
            "n2",
            encode(&env("prod", "n2", 4, Message::PreVote), Some(Auth { key: b"another key", receiver: RECEIVER }))
                .expect("e"),
            "bad_mac",
        ),
        ("tagged_for_another_receiver", Some(KEY), "n1", "n2", tagged_for_n3, "bad_mac"),
        ("flipped_tag", Some(KEY), "n1", "n2", flipped_tag, "bad_mac"),
        ("flipped_body", Some(KEY), "n1", "n2", flipped_body, "bad_mac"),
        ("tag_too_short", Some(KEY), "n1", "n2", tagged[..20].to_vec(), "bad_mac"),
        ("sender_mismatch", None, "n1", "n3", good.clone(), "sender_mismatch"),
        ("from_self", None, "n1", "n1", encode(&env("prod", "n1", 4, Message::PreVote), None).expect("e"), "from_self"),
        ("empty_sender", None, "n1", "", encode(&env("prod", "", 4, Message::PreVote), None).expect("e"), "malformed"),
    ];
    cases
        .into_iter()
        .map(|(name, key, node_id, from, bytes, reason)| InvalidVector {
            name: name.into(),
            key_hex: key.map(hex),
            cluster: "prod".into(),
            node_id: node_id.into(),
            from: from.into(),
            hex: hex(&bytes),
            reason: reason.into(),
        })
        .collect()
}

/// LEB128, written independently of the core's encoder.
fn uv(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let low = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(low);
            return out;
        }
        out.push(low | 0x80);
    }
}

/// An unkeyed message for cluster "prod" from "n2" whose fields are given as raw bytes; an empty
/// `cluster_len` means the canonical length of "prod".
fn raw(cluster_len: &[u8], term: &[u8], incarnation: &[u8], message: &[u8]) -> Vec<u8> {
    let len = if cluster_len.is_empty() { uv(4) } else { cluster_len.to_vec() };
    [&b"TN"[..], &[tenure::wire::MIN_VERSION, 0], &len, b"prod", &uv(2), b"n2", term, incarnation, message].concat()
}

/// A PreVote from the given id bytes (not necessarily UTF-8).
fn raw_from(from: &[u8]) -> Vec<u8> {
    [&b"TN"[..], &[tenure::wire::MIN_VERSION, 0], &uv(4), b"prod", &uv(from.len() as u64), from, &uv(4), &uv(INC), &[0]]
        .concat()
}

/// A `Hello` (a kind version 4 added) in a version 3 envelope: malformed, as a version 3 node
/// finds it.
fn hello_in_version_3() -> Vec<u8> {
    let mut b = encode(&env("prod", "n2", 4, Message::Hello { version: 4, reply: false }), None).expect("encodes");
    b[2] = tenure::wire::MIN_VERSION;
    b
}

/// A `DeathNotice` (a kind version 4 added) in a version 3 envelope: malformed, as a version 3
/// node finds it.
fn death_notice_in_version_3() -> Vec<u8> {
    let mut b = encode(&env("prod", "n2", 4, Message::DeathNotice), None).expect("encodes");
    b[2] = tenure::wire::MIN_VERSION;
    b
}

/// A well-formed header and envelope whose message discriminant (the last varint before the
/// fields) names no message kind.
fn unknown_kind() -> Vec<u8> {
    let mut b = encode(&env("prod", "n2", 4, Message::TimeoutNow), None).expect("encodes");
    let last = b.len() - 1;
    b[last] = 0x7f; // TimeoutNow has no fields: its discriminant is the last byte.
    b
}

/// Checks every vector against the core: decode, compare, re-encode, and drop reasons.
pub fn check(messages: &[MessageVector], invalid: &[InvalidVector]) -> Result<(), String> {
    for v in messages {
        let key = v.key_hex.as_deref().map(|k| unhex(k).ok_or("bad key_hex")).transpose()?;
        let bytes = unhex(&v.hex).ok_or_else(|| format!("{}: bad hex", v.name))?;
        let auth = match (key.as_deref(), v.receiver.as_deref()) {
            (Some(key), Some(receiver)) => Some(Auth { key, receiver }),
            (None, _) => None,
            (Some(_), None) => return Err(format!("{}: a keyed vector without a receiver", v.name)),
        };
        let decoded = decode(&bytes, auth).map_err(|r| format!("{}: dropped as {}", v.name, r.as_str()))?;
        if EnvelopeJson::of(&decoded) != v.envelope {
            return Err(format!("{}: decoded {:?}, expected {:?}", v.name, EnvelopeJson::of(&decoded), v.envelope));
        }
        let env = v.envelope.to_envelope().ok_or_else(|| format!("{}: bad payload_hex", v.name))?;
        let again = encode(&env, auth).map_err(|r| format!("{}: does not encode ({})", v.name, r.as_str()))?;
        if again != bytes {
            return Err(format!("{}: re-encoded to {}, expected {}", v.name, hex(&again), v.hex));
        }
    }
    for v in invalid {
        let key = v.key_hex.as_deref().map(|k| unhex(k).ok_or("bad key_hex")).transpose()?;
        let mut config = Config::new(v.node_id.clone(), v.cluster.clone());
        config.key = key;
        let mut node = Node::new(config, 1, None, 0).map_err(|e| format!("{}: {e}", v.name))?;
        let bytes = unhex(&v.hex).ok_or_else(|| format!("{}: bad hex", v.name))?;
        match node.handle_message(0, &v.from, &bytes) {
            Err(r) if r.as_str() == v.reason => {}
            other => return Err(format!("{}: got {other:?}, expected {}", v.name, v.reason)),
        }
        if node.inspect().dropped(&v.reason) != Some(1) {
            return Err(format!("{}: drop not counted under {}", v.name, v.reason));
        }
    }
    Ok(())
}

/// The canonical file text of a JSON value list (pretty, final newline).
pub fn to_file_text<T: Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("serialises");
    s.push('\n');
    s
}
