//! tenure for the browser: a thin wasm-bindgen class over [`tenure::Node`].
//!
//! Build with `make web` (cargo `wasm-release` profile → `wasm-bindgen --target web` →
//! `wasm-opt -Oz`); the output is an ES module plus `.d.ts`. Everything here converts types and
//! errors, nothing else: the configuration, the options and `inspect()` go through the core's serde
//! derives (feature `serde`) with `serde-wasm-bindgen`; times are JS numbers of milliseconds, byte
//! strings are `Uint8Array`s, outputs are plain objects, and every refusal is thrown as a JS
//! `Error` whose `code` property is the core's stable snake_case code. The TypeScript types of the
//! configuration, the options and `inspect()` are the npm package's (`node/index.d.ts`), copied
//! into the generated `.d.ts` by `build.sh`.

use core::cell::RefCell;
use js_sys::{Array, Object, Reflect, Uint8Array};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use tenure::wire::{self, Message};
use tenure::{Config, DropReason, DurableState, Event, Output, PeerDownReason};
use wasm_bindgen::prelude::*;

// The browser's own shapes. `NodeConfig`, `NodeOptions`, `DurableState`, `U64`, `Role`,
// `DropReason`, `ConfigWarning` and `Inspect` are the npm package's declarations, which `build.sh`
// appends from `node/index.d.ts` (one definition for both JavaScript hosts).
#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
export type NodeEvent =
  | { type: "event"; event: "became_leader"; term: number }
  | { type: "event"; event: "became_follower"; term: number; leader: string | null }
  | { type: "event"; event: "peer_joined"; peer: string }
  | { type: "event"; event: "peer_left"; peer: string }
  | { type: "event"; event: "confirm_leader"; term: number }
  | { type: "event"; event: "message"; from: string; payload: Uint8Array };

/** One output of `pollOutput()`/`drain()`; act on them in order. */
export type NodeOutput =
  | { type: "send"; to: string; bytes: Uint8Array }
  | { type: "persist"; term: number; votedFor: string | null }
  | NodeEvent;

/** A decoded wire message (`decodeMessage`). `kind` is the core's `Message::kind()`. */
export interface DecodedMessage {
  cluster: string;
  from: string;
  term: number;
  incarnation: bigint;
  kind: "pre_vote" | "pre_vote_reply" | "vote" | "vote_reply" | "heartbeat" | "heartbeat_ack" | "timeout_now" | "app";
  granted?: boolean;
  transfer?: boolean;
  sentAt?: number;
  echo?: number;
  seq?: bigint;
  payload?: Uint8Array;
}
"#;

// talc instead of std's dlmalloc: the same job in a fraction of the bytes (single-threaded wasm).
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// Largest integer a JS number holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A JS `Error` with a `code` property.
fn error(code: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    let _ = Reflect::set(&e, &"code".into(), &code.into());
    e.into()
}

fn invalid(message: &str) -> JsValue {
    error("invalid_argument", message)
}

fn core_error(e: tenure::Error) -> JsValue {
    error(e.code(), &e.message())
}

/// A JS number of milliseconds (or a term) as u64: finite, non-negative, fractions floored.
/// (`name` is a constant: the message names the argument without formatting the value.)
fn to_u64(message: &'static str, v: f64) -> Result<u64, JsValue> {
    if v.is_finite() && (0.0..=MAX_SAFE).contains(&v) {
        Ok(v as u64)
    } else {
        Err(invalid(message))
    }
}

fn now_u64(now: f64) -> Result<u64, JsValue> {
    to_u64("now must be a finite number between 0 and 2^53-1", now)
}

fn term_u64(term: f64) -> Result<u64, JsValue> {
    to_u64("term must be a finite number between 0 and 2^53-1", term)
}

fn set(obj: &Object, key: &str, value: impl Into<JsValue>) {
    let _ = Reflect::set(obj, &key.into(), &value.into());
}

fn opt_str(v: Option<&str>) -> JsValue {
    v.map_or(JsValue::NULL, JsValue::from)
}

fn bytes(b: &[u8]) -> Uint8Array {
    Uint8Array::from(b)
}

/// The second argument of `new Node(config, options)` (TypeScript: `NodeOptions`).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Options {
    /// A monotonic clock in ms, fractions floored like every `now` (e.g. `performance.now()`).
    #[serde(default)]
    now: f64,
    seed: Option<u64>,
    restored: Option<DurableState>,
}

/// Reads through serde-wasm-bindgen with two changes: every struct is read as a map, so that
/// `deny_unknown_fields` sees (and refuses) keys that are not fields (`{ heartbeatIntervl: 10 }`;
/// serde-wasm-bindgen reads a struct by its field names and never sees another key), and the keys
/// of the struct being read are tracked, so that an error names the key that failed
/// (`config.heartbeatInterval`). Everything else is forwarded unchanged.
struct Strict<'p, D> {
    de: D,
    /// Keys from the innermost outwards, pushed as an error passes each struct.
    path: &'p RefCell<Vec<String>>,
}

macro_rules! forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.de.$method(visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<'_, D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_map(Fields { inner: visitor, path: self.path })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_option(Fields { inner: visitor, path: self.path })
    }

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32 deserialize_f64
        deserialize_char deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_unit deserialize_seq deserialize_map deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// The visitor of a struct (read as a map) or of an option holding one: hands the struct's
/// entries, or the option's content, on through [`Strict`].
struct Fields<'p, V> {
    inner: V,
    path: &'p RefCell<Vec<String>>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Fields<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(Entries { map, path: self.path, key: String::new() })
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(Strict { de, path: self.path })
    }
}

/// A struct's entries: remembers the current key, and pushes it onto the path when its key or
/// value fails.
struct Entries<'p, A> {
    map: A,
    path: &'p RefCell<Vec<String>>,
    key: String,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Entries<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let key = &mut self.key;
        self.map
            .next_key_seed(Key { inner: seed, key })
            .inspect_err(|_| self.path.borrow_mut().push(core::mem::take(&mut self.key)))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let path = self.path;
        self.map
            .next_value_seed(Value { inner: seed, path })
            .inspect_err(|_| path.borrow_mut().push(core::mem::take(&mut self.key)))
    }
}

/// A value of a struct's entry, read through [`Strict`].
struct Value<'p, S> {
    inner: S,
    path: &'p RefCell<Vec<String>>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Value<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Strict { de, path: self.path })
    }
}

/// A struct's key: the field identifier's visitor, copying the key it reads.
struct Key<'k, T> {
    inner: T,
    key: &'k mut String,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for Key<'_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<K::Value, D::Error> {
        self.inner.deserialize(Key { inner: de, key: self.key })
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Key<'_, D> {
    type Error = D::Error;

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_identifier(Key { inner: visitor, key: self.key })
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum ignored_any
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Key<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.key.clear();
        self.key.push_str(v);
        self.inner.visit_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.key.clear();
        self.key.push_str(&v);
        self.inner.visit_string(v)
    }
}

/// Deserializes `value` (through serde-wasm-bindgen); a mismatch is an `invalid_argument` error
/// whose message names the offending key, e.g. `config.heartbeatInterval: invalid type: ...`.
fn from_js<T: for<'de> Deserialize<'de>>(what: &str, value: JsValue) -> Result<T, JsValue> {
    let path = RefCell::new(Vec::new());
    T::deserialize(Strict { de: serde_wasm_bindgen::Deserializer::from(value), path: &path }).map_err(|e| {
        let mut message = String::from(what);
        for key in path.into_inner().iter().rev() {
            message.push('.');
            message.push_str(key);
        }
        message.push_str(": ");
        message.push_str(&String::from(js_sys::Error::from(JsValue::from(e)).message()));
        invalid(&message)
    })
}

fn parse_config(config: JsValue) -> Result<Config, JsValue> {
    if !config.is_object() {
        return Err(invalid("config must be an object"));
    }
    // A string key is taken as its UTF-8 bytes (as in the npm package): hand serde a copy with the
    // bytes, leaving the caller's object alone.
    let key = Reflect::get(&config, &"key".into())?;
    let config = match key.as_string() {
        Some(s) => {
            let copy = Object::assign(&Object::new(), config.unchecked_ref());
            set(&copy, "key", bytes(s.as_bytes()));
            copy.into()
        }
        None => config,
    };
    from_js("config", config)
}

fn parse_options(options: JsValue) -> Result<Options, JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok(Options::default());
    }
    if !options.is_object() {
        return Err(invalid("options must be an object"));
    }
    from_js("options", options)
}

#[cfg(target_arch = "wasm32")]
fn random_seed() -> Result<u64, JsValue> {
    getrandom::u64().map_err(|_| error("no_randomness", "no random source for the seed (crypto.getRandomValues)"))
}

#[cfg(not(target_arch = "wasm32"))]
fn random_seed() -> Result<u64, JsValue> {
    Err(invalid("options.seed is required off the web"))
}

fn event_object(e: Event) -> Object {
    let o = Object::new();
    set(&o, "type", "event");
    match e {
        Event::BecameLeader { term } => {
            set(&o, "event", "became_leader");
            set(&o, "term", term as f64);
        }
        Event::BecameFollower { term, leader } => {
            set(&o, "event", "became_follower");
            set(&o, "term", term as f64);
            set(&o, "leader", opt_str(leader.as_deref()));
        }
        Event::PeerJoined { peer } => {
            set(&o, "event", "peer_joined");
            set(&o, "peer", peer);
        }
        Event::PeerLeft { peer } => {
            set(&o, "event", "peer_left");
            set(&o, "peer", peer);
        }
        Event::ConfirmLeader { term } => {
            set(&o, "event", "confirm_leader");
            set(&o, "term", term as f64);
        }
        Event::Message { from, payload } => {
            set(&o, "event", "message");
            set(&o, "from", from);
            set(&o, "payload", bytes(&payload));
        }
    }
    o
}

fn output_object(out: Output) -> Object {
    match out {
        Output::Send { to, bytes: b } => {
            let o = Object::new();
            set(&o, "type", "send");
            set(&o, "to", to);
            set(&o, "bytes", bytes(&b));
            o
        }
        Output::Persist(state) => {
            let o = Object::new();
            set(&o, "type", "persist");
            set(&o, "term", state.term as f64);
            set(&o, "votedFor", opt_str(state.voted_for.as_deref()));
            o
        }
        Output::Event(e) => event_object(e),
    }
}

/// A decoded datagram as a plain object, or an error with the drop reason as `code`.
fn decoded_object(decoded: Result<wire::Envelope, DropReason>) -> Result<JsValue, JsValue> {
    let env = decoded.map_err(|r| error(r.as_str(), r.text()))?;
    let o = Object::new();
    set(&o, "cluster", env.cluster);
    set(&o, "from", env.from);
    set(&o, "term", env.term as f64);
    set(&o, "incarnation", js_sys::BigInt::from(env.incarnation));
    set(&o, "kind", env.message.kind());
    match env.message {
        Message::PreVoteReply { granted } | Message::VoteReply { granted } => set(&o, "granted", granted),
        Message::Vote { transfer } => set(&o, "transfer", transfer),
        Message::Heartbeat { sent_at } => set(&o, "sentAt", sent_at as f64),
        Message::HeartbeatAck { echo } => set(&o, "echo", echo as f64),
        Message::App { seq, payload } => {
            set(&o, "seq", js_sys::BigInt::from(seq));
            set(&o, "payload", bytes(&payload));
        }
        Message::PreVote | Message::TimeoutNow => {}
    }
    Ok(o.into())
}

/// One member of a tenure cluster, driven by the page: feed it messages and timeouts with the
/// current time in milliseconds, then drain its outputs in order.
#[wasm_bindgen(js_name = Node)]
pub struct WasmNode {
    inner: tenure::Node,
}

#[wasm_bindgen(js_class = Node)]
impl WasmNode {
    /// Creates a node from a configuration object and optional `{ now, seed, restored }` (the
    /// same shapes as the npm package). Throws an `Error` whose `code` is `invalid_argument` for a
    /// malformed object, or the core's configuration error code (`empty_id`, `min_above_max`, ...).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "NodeConfig")] config: JsValue,
        #[wasm_bindgen(unchecked_param_type = "NodeOptions | null | undefined")] options: JsValue,
    ) -> Result<WasmNode, JsValue> {
        let config = parse_config(config)?;
        let options = parse_options(options)?;
        let seed = match options.seed {
            Some(s) => s,
            None => random_seed()?,
        };
        let inner = tenure::Node::new(config, seed, options.restored, now_u64(options.now)?)
            .map_err(|e| error(e.code(), &e.message()))?;
        Ok(WasmNode { inner })
    }

    /// Handles a datagram from peer `from`. A dropped message (already counted in
    /// `inspect().dropped_by_reason`) throws an `Error` whose `code` is the drop reason
    /// (`bad_mac`, `malformed`, `wrong_cluster`, ...).
    #[wasm_bindgen(js_name = handleMessage)]
    pub fn handle_message(&mut self, now: f64, from: &str, data: &[u8]) -> Result<(), JsValue> {
        let now = now_u64(now)?;
        self.inner.handle_message(now, from, data).map_err(|r| error(r.as_str(), r.text()))
    }

    /// Handles the passing of time: call at (or after) `pollTimeout()`.
    #[wasm_bindgen(js_name = handleTimeout)]
    pub fn handle_timeout(&mut self, now: f64) -> Result<(), JsValue> {
        self.inner.handle_timeout(now_u64(now)?);
        Ok(())
    }

    /// Declares a peer (idempotent).
    pub fn join(&mut self, now: f64, peer: &str) -> Result<(), JsValue> {
        self.inner.join(now_u64(now)?, peer).map_err(core_error)
    }

    /// Withdraws a peer from the view (and from every quorum computed afterwards).
    pub fn leave(&mut self, now: f64, peer: &str) -> Result<(), JsValue> {
        self.inner.leave(now_u64(now)?, peer).map_err(core_error)
    }

    /// Reports a peer down: `"terminated"` removes it at once, `"no_connection"` after `ghostTtl`
    /// unless it is heard from, `"refused"` (its port refused a datagram: the process is gone)
    /// keeps it a member and stops waiting for it if it leads.
    #[wasm_bindgen(js_name = peerDown)]
    pub fn peer_down(
        &mut self,
        now: f64,
        peer: &str,
        #[wasm_bindgen(unchecked_param_type = "\"terminated\" | \"no_connection\" | \"refused\"")] reason: &str,
    ) -> Result<(), JsValue> {
        let Some(reason) = PeerDownReason::from_name(reason) else {
            let mut message = String::from("reason must be one of");
            for r in PeerDownReason::ALL {
                message.push_str(" \"");
                message.push_str(r.as_str());
                message.push('"');
            }
            return Err(invalid(&message));
        };
        self.inner.peer_down(now_u64(now)?, peer, reason).map_err(core_error)
    }

    /// Answers a `confirm_leader` event: `true` publishes leadership, `false` withholds it.
    #[wasm_bindgen(js_name = confirmLeader)]
    pub fn confirm_leader(&mut self, now: f64, term: f64, granted: bool) -> Result<(), JsValue> {
        self.inner.confirm_leader(now_u64(now)?, term_u64(term)?, granted).map_err(core_error)
    }

    /// Reports that the became-leader handler failed: leadership is rolled back.
    #[wasm_bindgen(js_name = leaderHandlerFailed)]
    pub fn leader_handler_failed(&mut self, now: f64, term: f64) -> Result<(), JsValue> {
        self.inner.leader_handler_failed(now_u64(now)?, term_u64(term)?).map_err(core_error)
    }

    /// Hands leadership to `peer` (only the leader can).
    #[wasm_bindgen(js_name = transferLeadership)]
    pub fn transfer_leadership(&mut self, now: f64, peer: &str) -> Result<(), JsValue> {
        self.inner.transfer_leadership(now_u64(now)?, peer).map_err(core_error)
    }

    /// Sends an application payload to every member of the view.
    pub fn broadcast(&mut self, now: f64, payload: &[u8]) -> Result<(), JsValue> {
        self.inner.broadcast(now_u64(now)?, payload).map_err(core_error)
    }

    /// The next output, or `null` when drained.
    #[wasm_bindgen(js_name = pollOutput, unchecked_return_type = "NodeOutput | null")]
    pub fn poll_output(&mut self) -> JsValue {
        self.inner.poll_output().map_or(JsValue::NULL, |o| output_object(o).into())
    }

    /// Every pending output, in order.
    #[wasm_bindgen(unchecked_return_type = "NodeOutput[]")]
    pub fn drain(&mut self) -> Array {
        let list = Array::new();
        while let Some(o) = self.inner.poll_output() {
            list.push(&output_object(o));
        }
        list
    }

    /// The next instant (ms) at which `handleTimeout` should be called, or `undefined`.
    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&self) -> Option<f64> {
        self.inner.poll_timeout().map(|t| t as f64)
    }

    /// This node's id.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.inner.id().to_string()
    }

    /// `"unclustered"`, `"follower"`, `"candidate"` or `"leader"`.
    #[wasm_bindgen(getter, unchecked_return_type = "\"unclustered\" | \"follower\" | \"candidate\" | \"leader\"")]
    pub fn role(&self) -> String {
        self.inner.role().as_str().to_string()
    }

    /// The current term.
    #[wasm_bindgen(getter)]
    pub fn term(&self) -> f64 {
        self.inner.term() as f64
    }

    /// The leader known in the current term (itself when leading), or `undefined`.
    #[wasm_bindgen(getter)]
    pub fn leader(&self) -> Option<String> {
        self.inner.leader().map(str::to_string)
    }

    /// Whom this node voted for in the current term, or `undefined`.
    #[wasm_bindgen(getter, js_name = votedFor)]
    pub fn voted_for(&self) -> Option<String> {
        self.inner.voted_for().map(str::to_string)
    }

    /// Whether this node is the (confirmed) leader.
    #[wasm_bindgen(getter, js_name = isLeader)]
    pub fn is_leader(&self) -> bool {
        self.inner.is_leader()
    }

    /// The fencing token (the term) while leading, else `undefined`.
    #[wasm_bindgen(getter, js_name = fencingToken)]
    pub fn fencing_token(&self) -> Option<f64> {
        self.inner.fencing_token().map(|t| t as f64)
    }

    /// While leading, the last instant at which no other leader can have been elected.
    #[wasm_bindgen(getter, js_name = leaseDeadline)]
    pub fn lease_deadline(&self) -> Option<f64> {
        self.inner.lease_deadline().map(|t| t as f64)
    }

    /// The view: this node and every peer it counts, sorted.
    #[wasm_bindgen(getter, unchecked_return_type = "string[]")]
    pub fn view(&self) -> Array {
        self.inner.view().into_iter().map(JsValue::from).collect()
    }

    /// Configuration warnings, as `{ code, message }` objects.
    #[wasm_bindgen(getter, unchecked_return_type = "ConfigWarning[]")]
    pub fn warnings(&self) -> Array {
        self.inner
            .warnings()
            .iter()
            .map(|w| {
                let o = Object::new();
                set(&o, "code", w.code());
                set(&o, "message", w.message());
                JsValue::from(o)
            })
            .collect()
    }

    /// The whole election state as a plain object (the core's `Inspect`, snake_case keys).
    #[wasm_bindgen(unchecked_return_type = "Inspect")]
    pub fn inspect(&self) -> Result<JsValue, JsValue> {
        // JSON-compatible: `null` for absent values and plain objects for the maps.
        Ok(self.inner.inspect().serialize(&serde_wasm_bindgen::Serializer::json_compatible())?)
    }

    /// Decodes a datagram with this node's key (for display: which kind of message is in
    /// flight). Throws an `Error` whose `code` is the drop reason when it does not decode.
    #[wasm_bindgen(js_name = decodeMessage, unchecked_return_type = "DecodedMessage")]
    pub fn decode_message(&self, data: &[u8]) -> Result<JsValue, JsValue> {
        decoded_object(self.inner.decode_message(data))
    }
}

/// Decodes a datagram without a node (`key` for authenticated clusters).
#[wasm_bindgen(js_name = decodeMessage, unchecked_return_type = "DecodedMessage")]
pub fn decode_message(data: &[u8], key: Option<Vec<u8>>) -> Result<JsValue, JsValue> {
    decoded_object(wire::decode(data, key.as_deref()))
}

/// The version of tenure compiled into this module.
#[wasm_bindgen]
pub fn version() -> String {
    tenure::VERSION.to_string()
}
