//! Everything besides the node and the runtime: wire format, durable-state text, the fence
//! checker, seeding and the version.

use napi::bindgen_prelude::{Array, BufferSlice, Env, Object, Unknown};
use napi::Result;
use napi_derive::napi;

use crate::conv::{
    boolean, bytes, bytes_or_string, coded_error, is_nullish, object, only_keys, opt_u64, prop, range_error, string,
    type_error, u64_arg, U64,
};
use crate::{durable_from_js, uint};
use tenure::wire::{self, Envelope, Message};
use tenure::{DropReason, FenceVerdict};

/// The core's version (the version of the whole project).
#[napi(catch_unwind)]
pub fn version() -> &'static str {
    tenure::VERSION
}

/// A seed from the operating system's random source.
#[napi(catch_unwind, ts_return_type = "number | bigint")]
pub fn os_seed(env: Env) -> Result<U64> {
    tenure::os_seed().map(U64).map_err(|e| coded_error(&env, "no_randomness", e.to_string()))
}

fn key_arg(env: &Env, v: Option<&Unknown>) -> Result<Option<Vec<u8>>> {
    match v {
        Some(v) if !is_nullish(v)? => Ok(Some(bytes_or_string(env, v, "key")?)),
        _ => Ok(None),
    }
}

fn message_to_js<'e>(env: &'e Env, m: Message) -> Result<Object<'e>> {
    let mut o = Object::new(env)?;
    o.set("kind", m.kind())?;
    match m {
        Message::PreVote | Message::TimeoutNow | Message::DeathNotice => {}
        Message::PreVoteReply { granted } | Message::VoteReply { granted } => o.set("granted", granted)?,
        Message::Vote { transfer } => o.set("transfer", transfer)?,
        Message::Heartbeat { sent_at } => o.set("sentAt", U64(sent_at))?,
        Message::HeartbeatAck { echo } => o.set("echo", U64(echo))?,
        Message::App { seq, payload } => {
            o.set("seq", U64(seq))?;
            o.set("payload", BufferSlice::from_data(env, payload)?)?
        }
        Message::Hello { version, reply } => {
            o.set("version", u32::from(version))?;
            o.set("reply", reply)?
        }
        Message::Value { seq, value } => {
            o.set("seq", U64(seq))?;
            o.set("value", value)?
        }
        Message::ValueAck { seq } | Message::Observe { seq } => o.set("seq", U64(seq))?,
        Message::Priority { priority, never_lead, reply } => {
            o.set("priority", priority)?;
            o.set("neverLead", never_lead)?;
            o.set("reply", reply)?
        }
    }
    Ok(o)
}

fn message_from_js(env: &Env, v: &Unknown) -> Result<Message> {
    let obj = object(env, v, "envelope.message")?;
    let kind = match prop(&obj, "kind")? {
        Some(k) => string(env, &k, "envelope.message.kind")?,
        None => return Err(type_error(env, "envelope.message.kind must be a string, got undefined".into())),
    };
    let need = |name: &str| -> Result<Unknown> {
        match prop(&obj, name)? {
            Some(v) => Ok(v),
            None => Err(type_error(env, format!("envelope.message.{name} is required for a {kind:?} message"))),
        }
    };
    Ok(match kind.as_str() {
        "pre_vote" => Message::PreVote,
        "pre_vote_reply" => Message::PreVoteReply { granted: boolean(env, &need("granted")?, "message.granted")? },
        "vote" => Message::Vote { transfer: boolean(env, &need("transfer")?, "message.transfer")? },
        "vote_reply" => Message::VoteReply { granted: boolean(env, &need("granted")?, "message.granted")? },
        "heartbeat" => Message::Heartbeat { sent_at: u64_arg(env, &need("sentAt")?, "message.sentAt")? },
        "heartbeat_ack" => Message::HeartbeatAck { echo: u64_arg(env, &need("echo")?, "message.echo")? },
        "timeout_now" => Message::TimeoutNow,
        "app" => Message::App {
            seq: opt_u64(env, prop(&obj, "seq")?.as_ref(), "message.seq")?.unwrap_or(0),
            payload: bytes(env, &need("payload")?, "message.payload")?.to_vec(),
        },
        "hello" => {
            let version = u64_arg(env, &need("version")?, "message.version")?;
            Message::Hello {
                version: u8::try_from(version)
                    .map_err(|_| range_error(env, format!("message.version must be at most 255, got {version}")))?,
                reply: match prop(&obj, "reply")? {
                    Some(r) => boolean(env, &r, "message.reply")?,
                    None => false,
                },
            }
        }
        "death_notice" => Message::DeathNotice,
        "value" => Message::Value {
            seq: u64_arg(env, &need("seq")?, "message.seq")?,
            value: string(env, &need("value")?, "message.value")?,
        },
        "value_ack" => Message::ValueAck { seq: u64_arg(env, &need("seq")?, "message.seq")? },
        "priority" => Message::Priority {
            priority: uint(env, &need("priority")?, "message.priority", u64::from(u32::MAX))? as u32,
            never_lead: match prop(&obj, "neverLead")? {
                Some(r) => boolean(env, &r, "message.neverLead")?,
                None => false,
            },
            reply: match prop(&obj, "reply")? {
                Some(r) => boolean(env, &r, "message.reply")?,
                None => false,
            },
        },
        "observe" => Message::Observe { seq: u64_arg(env, &need("seq")?, "message.seq")? },
        other => {
            return Err(type_error(
                env,
                format!("envelope.message.kind {other:?} is not a message kind (pre_vote, pre_vote_reply, vote, vote_reply, heartbeat, heartbeat_ack, timeout_now, app, hello, death_notice, value, value_ack, priority, observe)"),
            ))
        }
    })
}

/// The key and receiver arguments: a key needs the receiver's id (the tag covers it).
fn auth_args(env: &Env, key: &Unknown, receiver: &Unknown) -> Result<Option<(Vec<u8>, String)>> {
    match (key_arg(env, Some(key))?, is_nullish(receiver)?) {
        (Some(k), false) => Ok(Some((k, string(env, receiver, "receiver")?))),
        (Some(_), true) => Err(type_error(
            env,
            "a key needs a receiver (the id of the node the message is addressed to: the tag covers it)".into(),
        )),
        (None, _) => Ok(None),
    }
}

fn auth(a: &Option<(Vec<u8>, String)>) -> Option<wire::Auth<'_>> {
    a.as_ref().map(|(key, receiver)| wire::Auth { key, receiver })
}

/// Decodes (and, with `key`, authenticates as received by `receiver`) a datagram into an
/// envelope object. Throws an error whose `code` is the `DropReason` name when the bytes would
/// be dropped.
#[napi(catch_unwind, ts_return_type = "Envelope")]
pub fn wire_decode<'e>(env: &'e Env, data: Unknown, key: Unknown, receiver: Unknown) -> Result<Object<'e>> {
    let data = bytes(env, &data, "bytes")?;
    let a = auth_args(env, &key, &receiver)?;
    let e = wire::decode(data, auth(&a)).map_err(|r| coded_error(env, r.as_str(), r.text().into()))?;
    let mut o = Object::new(env)?;
    o.set("cluster", e.cluster)?;
    o.set("from", e.from)?;
    o.set("term", U64(e.term))?;
    o.set("incarnation", U64(e.incarnation))?;
    o.set("message", message_to_js(env, e.message)?)?;
    Ok(o)
}

/// Encodes an envelope object, with an HMAC tag for `receiver` when `key` is given.
#[napi(catch_unwind, ts_return_type = "Buffer")]
pub fn wire_encode<'e>(env: &'e Env, envelope: Unknown, key: Unknown, receiver: Unknown) -> Result<BufferSlice<'e>> {
    let obj = object(env, &envelope, "envelope")?;
    only_keys(env, &obj, "envelope", &["cluster", "from", "term", "incarnation", "message"])?;
    let get = |name: &str| -> Result<Unknown> {
        match prop(&obj, name)? {
            Some(v) => Ok(v),
            None => Err(type_error(env, format!("envelope.{name} is required"))),
        }
    };
    let e = Envelope {
        cluster: string(env, &get("cluster")?, "envelope.cluster")?,
        from: string(env, &get("from")?, "envelope.from")?,
        term: u64_arg(env, &get("term")?, "envelope.term")?,
        incarnation: opt_u64(env, prop(&obj, "incarnation")?.as_ref(), "envelope.incarnation")?.unwrap_or(0),
        message: message_from_js(env, &get("message")?)?,
    };
    let a = auth_args(env, &key, &receiver)?;
    match wire::encode(&e, auth(&a)) {
        Ok(b) => BufferSlice::from_data(env, b),
        Err(DropReason::Oversized) => Err(coded_error(
            env,
            "oversized",
            format!("the encoded message would exceed {} bytes", tenure::MAX_MESSAGE_SIZE),
        )),
        // A term above MAX_TERM: every receiver would drop the bytes as malformed.
        Err(r) => Err(coded_error(
            env,
            r.as_str(),
            format!("envelope.term {} is above MAX_TERM ({}): {}", e.term, tenure::MAX_TERM, r.text()),
        )),
    }
}

/// The durable-state file text written by the runtime (`{"term":4,"voted_for":"ID"}` and a
/// newline; `null` for no vote).
#[napi(catch_unwind)]
pub fn encode_durable_state(env: Env, state: Unknown) -> Result<String> {
    match durable_from_js(&env, Some(&state), "state")? {
        Some(s) => Ok(tenure_runtime::state::encode(&s)),
        None => Err(type_error(&env, "state must be an object { term, votedFor }".into())),
    }
}

/// Parses the durable-state file text; `null` when it is not in that format.
#[napi(catch_unwind, ts_return_type = "DurableState | null")]
pub fn decode_durable_state<'e>(env: &'e Env, text: Unknown) -> Result<Option<Object<'e>>> {
    let text = string(env, &text, "text")?;
    match tenure_runtime::state::decode(&text).ok() {
        Some(s) => {
            let mut o = Object::new(env)?;
            o.set("term", U64(s.term))?;
            o.set("votedFor", s.voted_for)?;
            Ok(Some(o))
        }
        None => Ok(None),
    }
}

/// The resource side of fencing (`tenure::FenceChecker`).
#[napi(js_name = "NativeFenceChecker")]
pub struct NativeFenceChecker {
    inner: tenure::FenceChecker,
}

#[napi]
impl NativeFenceChecker {
    /// `new NativeFenceChecker(highest?)` where `highest` is `{ term, leader }` or `null`.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, highest: Unknown) -> Result<Self> {
        if is_nullish(&highest)? {
            return Ok(NativeFenceChecker { inner: tenure::FenceChecker::new() });
        }
        let obj = object(&env, &highest, "highest")?;
        only_keys(&env, &obj, "highest", &["term", "leader"])?;
        let term = match prop(&obj, "term")? {
            Some(t) => u64_arg(&env, &t, "highest.term")?,
            None => return Err(type_error(&env, "highest.term is required".into())),
        };
        let leader = match prop(&obj, "leader")? {
            Some(l) => string(&env, &l, "highest.leader")?,
            None => return Err(type_error(&env, "highest.leader is required".into())),
        };
        Ok(NativeFenceChecker { inner: tenure::FenceChecker::with_highest(term, &leader) })
    }

    /// Checks a writer's `(term, leader)`: `accepted` (recorded), `stale` or `already_fenced`.
    #[napi(catch_unwind, ts_return_type = "FenceVerdict")]
    pub fn check(&mut self, env: Env, term: Unknown, leader: Unknown) -> Result<&'static str> {
        let term = u64_arg(&env, &term, "term")?;
        let leader = string(&env, &leader, "leader")?;
        let verdict: FenceVerdict = self.inner.check(term, &leader);
        Ok(verdict.as_str())
    }

    /// The highest `{ term, leader }` accepted so far, or `null`.
    #[napi(getter, catch_unwind, ts_return_type = "{ term: number; leader: string } | null")]
    pub fn highest<'e>(&self, env: &'e Env) -> Result<Option<Object<'e>>> {
        match self.inner.highest() {
            Some((term, leader)) => {
                let mut o = Object::new(env)?;
                o.set("term", U64(term))?;
                o.set("leader", leader)?;
                Ok(Some(o))
            }
            None => Ok(None),
        }
    }
}

/// Every `DropReason` name, in the core's stable order.
#[napi(catch_unwind)]
pub fn drop_reasons<'e>(env: &'e Env) -> Result<Array<'e>> {
    let names: Vec<String> = tenure::DropReason::ALL.iter().map(|r| r.as_str().to_string()).collect();
    Array::from_ref_vec_string(env, &names)
}

/// Panics on purpose (tests only): proves that a Rust panic becomes a JavaScript exception
/// instead of aborting the process. Not part of the public JS API.
#[napi(catch_unwind, js_name = "__panicForTests")]
pub fn panic_for_tests() {
    panic!("deliberate panic for the tests");
}
