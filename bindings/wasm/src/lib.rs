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

mod strict;

use js_sys::{Array, Object, Reflect, Uint8Array};
use serde::{Deserialize, Serialize};
use strict::from_js;
use tenure::wire::{self, Message};
use tenure::{Config, DropReason, DurableState, Event, Output, PeerDownReason};
use wasm_bindgen::prelude::*;

// The browser's own shapes. `NodeConfig`, `NodeOptions`, `DurableState`, `U64`, `Role`,
// `DropReason`, `ConfigWarning`, `Inspect` and `InspectCamel` are the npm package's declarations,
// which `build.sh` appends from `node/index.d.ts` (one definition for both JavaScript hosts).
#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
export type NodeEvent =
  | { type: "event"; event: "became_leader"; term: number }
  | { type: "event"; event: "became_follower"; term: number; leader: string | null }
  | { type: "event"; event: "peer_joined"; peer: string }
  | { type: "event"; event: "peer_left"; peer: string }
  | { type: "event"; event: "confirm_leader"; term: number }
  | { type: "event"; event: "message"; sender: string; payload: Uint8Array };

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
  kind: "pre_vote" | "pre_vote_reply" | "vote" | "vote_reply" | "heartbeat" | "heartbeat_ack" | "timeout_now" | "app" | "hello" | "value" | "value_ack" | "priority" | "observe";
  granted?: boolean;
  transfer?: boolean;
  sentAt?: number;
  echo?: number;
  seq?: bigint;
  payload?: Uint8Array;
  /** `value`: the leader's proclaimed value. */
  value?: string;
  /** `priority`: the sender's priority, whether it is a witness, and whether this answers one. */
  priority?: number;
  neverLead?: boolean;
  reply?: boolean;
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
            // `sender`, as the npm package's message event names it (`from` is the Rust field).
            set(&o, "sender", from);
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
        Message::Hello { version, reply } => {
            set(&o, "version", f64::from(version));
            set(&o, "reply", reply);
        }
        Message::Value { seq, value } => {
            set(&o, "seq", js_sys::BigInt::from(seq));
            set(&o, "value", value);
        }
        Message::ValueAck { seq } | Message::Observe { seq } => set(&o, "seq", js_sys::BigInt::from(seq)),
        Message::Priority { priority, never_lead, reply } => {
            set(&o, "priority", f64::from(priority));
            set(&o, "neverLead", never_lead);
            set(&o, "reply", reply);
        }
        Message::PreVote | Message::TimeoutNow | Message::DeathNotice => {}
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

    /// Changes the value this node proclaims while it leads (empty: none).
    pub fn proclaim(&mut self, now: f64, value: &str) -> Result<(), JsValue> {
        self.inner.proclaim(now_u64(now)?, value).map_err(core_error)
    }

    /// The value the leader proclaims, as this node knows it (its own while leading).
    #[wasm_bindgen(getter, js_name = leaderValue)]
    pub fn leader_value(&self) -> Option<String> {
        self.inner.leader_value().map(String::from)
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

    /// The whole election state as a plain object: the core's `Inspect` with camelCase keys
    /// (`isLeader`, `droppedByReason`), as the npm package's `Node#inspect()` returns it.
    #[wasm_bindgen(unchecked_return_type = "InspectCamel")]
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

/// Decodes a datagram without a node (`key` and `receiver`, the id of the node it was sent to,
/// for authenticated clusters: the tag covers the receiver's id).
#[wasm_bindgen(js_name = decodeMessage, unchecked_return_type = "DecodedMessage")]
pub fn decode_message(data: &[u8], key: Option<Vec<u8>>, receiver: Option<String>) -> Result<JsValue, JsValue> {
    let auth = match (key.as_deref(), receiver.as_deref()) {
        (Some(key), Some(receiver)) => Some(wire::Auth { key, receiver }),
        (Some(_), None) => return Err(JsValue::from(js_sys::TypeError::new("a key needs the receiver's id"))),
        (None, _) => None,
    };
    decoded_object(wire::decode(data, auth))
}

/// The version of tenure compiled into this module.
#[wasm_bindgen]
pub fn version() -> String {
    tenure::VERSION.to_string()
}
