//! tenure for the browser: a thin wasm-bindgen class over [`tenure::Node`].
//!
//! Build with `make web` (cargo `wasm-release` profile → `wasm-bindgen --target web` →
//! `wasm-opt -Oz`); the output is an ES module plus `.d.ts`. Everything here converts types and
//! errors, nothing else: times are JS numbers of milliseconds, byte strings are `Uint8Array`s,
//! outputs and `inspect()` are plain objects, and every refusal is thrown as a JS `Error` whose
//! `code` property is the core's stable snake_case code.

use js_sys::{Array, Object, Reflect, Uint8Array, JSON};
use tenure::wire::{self, Message};
use tenure::{Config, DropReason, DurableState, Event, Output, PeerDownReason};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** The configuration taken by `new Node(config, options)`. Only `id` and `cluster` are required. */
export interface NodeConfig {
  id: string;
  cluster: string;
  /** Every member's id (this node's own id may be included; it is skipped). */
  bootstrap?: string[];
  minClusterSize?: number;
  electionTimeoutMin?: number | null;
  electionTimeoutMax?: number | null;
  heartbeatInterval?: number;
  /** How long a promise (and so the leader's lease) lasts, ms (default `electionTimeoutMin`): at
   * most `electionTimeoutMin` and, less the clock-drift margin, above `heartbeatInterval`
   * (`lease_out_of_range` otherwise). Shorter means faster failover after `"refused"`. */
  leaseDuration?: number | null;
  ghostTtl?: number;
  preVote?: boolean;
  confirmLeader?: boolean;
  durable?: boolean;
  /** Shared cluster key (authenticated mode); a string is taken as its UTF-8 bytes. */
  key?: Uint8Array | string | null;
  /** Admit senders never declared (default false: membership is closed, `unknown_peer`). */
  admitUnknownPeers?: boolean;
  /** Most peers besides this node in the view (default 64). */
  maxPeers?: number;
  /** Bound on clock-rate differences, parts per million (default 10000). */
  maxClockDriftPpm?: number;
  /** This run's incarnation (default: drawn from the seed). */
  incarnation?: number | null;
}

/** The second argument of `new Node(config, options)`. */
export interface NodeOptions {
  /** PRNG seed for the election timers; drawn from `crypto.getRandomValues` when absent. */
  seed?: number | bigint;
  /** The durable state last persisted, when restarting with durable state. */
  restored?: { term: number; votedFor: string | null } | null;
  /** The host clock (ms) at construction; default 0. */
  now?: number;
}

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

/** The whole election state: the core's `Inspect`, with its snake_case keys. */
export interface Inspect {
  id: string;
  state: "unclustered" | "follower" | "candidate" | "leader";
  leader: boolean;
  leader_id: string | null;
  term: number;
  voted_for: string | null;
  term_changed_at: number;
  cluster: string;
  view_size: number;
  quorum: number;
  min_cluster_size: number;
  peers: string[];
  declared: string[];
  bootstrap: string[];
  unreachable: Record<string, number>;
  ghost_ttl: number;
  votes_granted: string[];
  votes_count: number;
  election_timer_armed: boolean;
  heartbeat_timer_armed: boolean;
  heartbeat_in_last: number | null;
  heartbeat_out_last: number | null;
  election_timeout_min: number;
  election_timeout_max: number;
  heartbeat_interval: number;
  dropped_by_reason: Record<string, number>;
  send_failing_peers: string[];
  confirm_denied: number;
  last_denied_at: number | null;
  lease_deadline: number | null;
}

/** A configuration warning (the node works, but probably not as meant). */
export interface ConfigWarning { code: string; message: string }
"#;

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
    error(e.code(), &e.to_string())
}

/// A JS number of milliseconds (or a term) as u64: finite, non-negative, fractions floored.
fn to_u64(name: &str, v: f64) -> Result<u64, JsValue> {
    if v.is_finite() && (0.0..=MAX_SAFE).contains(&v) {
        Ok(v as u64)
    } else {
        // (The value is not formatted: float formatting alone would add ~20 KB to the module.)
        Err(invalid(&format!("{name} must be a finite number between 0 and 2^53-1")))
    }
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

/// Reads `options[key]`, treating `undefined` and `null` as absent.
fn field(options: &JsValue, key: &str) -> Result<Option<JsValue>, JsValue> {
    let v = Reflect::get(options, &key.into())?;
    Ok(if v.is_undefined() || v.is_null() { None } else { Some(v) })
}

fn string_field(options: &JsValue, key: &str) -> Result<Option<String>, JsValue> {
    match field(options, key)? {
        None => Ok(None),
        Some(v) => v.as_string().map(Some).ok_or_else(|| invalid(&format!("{key} must be a string"))),
    }
}

fn number_field(options: &JsValue, key: &str) -> Result<Option<u64>, JsValue> {
    match field(options, key)? {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) => to_u64(key, n).map(Some),
            None => Err(invalid(&format!("{key} must be a number"))),
        },
    }
}

fn bool_field(options: &JsValue, key: &str) -> Result<Option<bool>, JsValue> {
    match field(options, key)? {
        None => Ok(None),
        Some(v) => v.as_bool().map(Some).ok_or_else(|| invalid(&format!("{key} must be a boolean"))),
    }
}

const CONFIG_KEYS: [&str; 17] = [
    "id",
    "cluster",
    "bootstrap",
    "minClusterSize",
    "electionTimeoutMin",
    "electionTimeoutMax",
    "heartbeatInterval",
    "leaseDuration",
    "ghostTtl",
    "preVote",
    "confirmLeader",
    "durable",
    "key",
    "admitUnknownPeers",
    "maxPeers",
    "maxClockDriftPpm",
    "incarnation",
];
const OPTIONS_KEYS: [&str; 3] = ["now", "seed", "restored"];

struct Parsed {
    config: Config,
    seed: Option<u64>,
    restored: Option<DurableState>,
    now: u64,
}

/// Refuses anything but a plain object whose keys are all in `known` (typos must not pass silently).
fn check_keys(what: &str, value: &JsValue, known: &[&str]) -> Result<(), JsValue> {
    if !value.is_object() {
        return Err(invalid(&format!("{what} must be an object")));
    }
    for key in Object::keys(value.unchecked_ref::<Object>()).iter() {
        let key = key.as_string().unwrap_or_default();
        if !known.contains(&key.as_str()) {
            return Err(invalid(&format!("unknown {what} key {key:?}; known keys: {}", known.join(", "))));
        }
    }
    Ok(())
}

fn parse_options(options: &JsValue, extra: &JsValue) -> Result<Parsed, JsValue> {
    check_keys("config", options, &CONFIG_KEYS)?;
    let extra_given = !(extra.is_undefined() || extra.is_null());
    if extra_given {
        check_keys("options", extra, &OPTIONS_KEYS)?;
    }
    let id = string_field(options, "id")?.ok_or_else(|| invalid("config.id (a string) is required"))?;
    let cluster = string_field(options, "cluster")?.ok_or_else(|| invalid("config.cluster (a string) is required"))?;
    let mut config = Config::new(id, cluster);
    if let Some(list) = field(options, "bootstrap")? {
        if !Array::is_array(&list) {
            return Err(invalid("bootstrap must be an array of strings"));
        }
        let mut peers = Vec::new();
        for p in Array::from(&list).iter() {
            peers.push(p.as_string().ok_or_else(|| invalid("bootstrap must be an array of strings"))?);
        }
        config = config.bootstrap(peers);
    }
    if let Some(n) = number_field(options, "minClusterSize")? {
        let n = u32::try_from(n).map_err(|_| invalid("minClusterSize is too large"))?;
        config = config.min_cluster_size(n);
    }
    if let Some(n) = number_field(options, "electionTimeoutMin")? {
        config = config.election_timeout_min(n);
    }
    if let Some(n) = number_field(options, "electionTimeoutMax")? {
        config = config.election_timeout_max(n);
    }
    if let Some(n) = number_field(options, "heartbeatInterval")? {
        config = config.heartbeat_interval(n);
    }
    if let Some(n) = number_field(options, "leaseDuration")? {
        config = config.lease_duration(n);
    }
    if let Some(n) = number_field(options, "ghostTtl")? {
        config = config.ghost_ttl(n);
    }
    if let Some(b) = bool_field(options, "preVote")? {
        config = config.pre_vote(b);
    }
    if let Some(b) = bool_field(options, "confirmLeader")? {
        config = config.confirm_leader(b);
    }
    if let Some(b) = bool_field(options, "durable")? {
        config = config.durable(b);
    }
    if let Some(b) = bool_field(options, "admitUnknownPeers")? {
        config = config.admit_unknown_peers(b);
    }
    if let Some(n) = number_field(options, "maxPeers")? {
        config = config.max_peers(u32::try_from(n).map_err(|_| invalid("maxPeers is too large"))?);
    }
    if let Some(n) = number_field(options, "maxClockDriftPpm")? {
        config = config.max_clock_drift_ppm(u32::try_from(n).map_err(|_| invalid("maxClockDriftPpm is too large"))?);
    }
    if let Some(n) = number_field(options, "incarnation")? {
        config = config.incarnation(n);
    }
    if let Some(k) = field(options, "key")? {
        let key = if let Some(s) = k.as_string() {
            s.into_bytes()
        } else if k.is_instance_of::<Uint8Array>() {
            Uint8Array::from(k).to_vec()
        } else {
            return Err(invalid("key must be a Uint8Array or a string"));
        };
        config = config.key(key);
    }
    let extra = if extra_given { extra.clone() } else { Object::new().into() };
    let seed = match field(&extra, "seed")? {
        None => None,
        Some(v) if v.is_bigint() => Some(u64::try_from(v).map_err(|_| invalid("seed must fit in 64 unsigned bits"))?),
        Some(v) => match v.as_f64() {
            Some(n) => Some(to_u64("seed", n)?),
            None => return Err(invalid("seed must be a number or a bigint")),
        },
    };
    let restored = match field(&extra, "restored")? {
        None => None,
        Some(r) => {
            check_keys("restored", &r, &["term", "votedFor"])?;
            let term = number_field(&r, "term")?.ok_or_else(|| invalid("restored.term is required"))?;
            let voted_for = string_field(&r, "votedFor")?;
            Some(DurableState { term, voted_for })
        }
    };
    let now = number_field(&extra, "now")?.unwrap_or(0);
    Ok(Parsed { config, seed, restored, now })
}

#[cfg(target_arch = "wasm32")]
fn random_seed() -> Result<u64, JsValue> {
    getrandom::u64().map_err(|e| error("no_randomness", &format!("no random source for the seed: {e}")))
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
        let p = parse_options(&config, &options)?;
        let seed = match p.seed {
            Some(s) => s,
            None => random_seed()?,
        };
        let inner =
            tenure::Node::new(p.config, seed, p.restored, p.now).map_err(|e| error(e.code(), &e.to_string()))?;
        Ok(WasmNode { inner })
    }

    /// Handles a datagram from peer `from`. A dropped message (already counted in
    /// `inspect().dropped_by_reason`) throws an `Error` whose `code` is the drop reason
    /// (`bad_mac`, `malformed`, `wrong_cluster`, ...).
    #[wasm_bindgen(js_name = handleMessage)]
    pub fn handle_message(&mut self, now: f64, from: &str, data: &[u8]) -> Result<(), JsValue> {
        let now = to_u64("now", now)?;
        self.inner.handle_message(now, from, data).map_err(|r| error(r.as_str(), r.text()))
    }

    /// Handles the passing of time: call at (or after) `pollTimeout()`.
    #[wasm_bindgen(js_name = handleTimeout)]
    pub fn handle_timeout(&mut self, now: f64) -> Result<(), JsValue> {
        self.inner.handle_timeout(to_u64("now", now)?);
        Ok(())
    }

    /// Declares a peer (idempotent).
    pub fn join(&mut self, now: f64, peer: &str) -> Result<(), JsValue> {
        self.inner.join(to_u64("now", now)?, peer).map_err(core_error)
    }

    /// Withdraws a peer from the view (and from every quorum computed afterwards).
    pub fn leave(&mut self, now: f64, peer: &str) -> Result<(), JsValue> {
        self.inner.leave(to_u64("now", now)?, peer).map_err(core_error)
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
            let names: Vec<&str> = PeerDownReason::ALL.iter().map(|r| r.as_str()).collect();
            return Err(invalid(&format!("reason must be one of {names:?}, got {reason:?}")));
        };
        self.inner.peer_down(to_u64("now", now)?, peer, reason).map_err(core_error)
    }

    /// Answers a `confirm_leader` event: `true` publishes leadership, `false` withholds it.
    #[wasm_bindgen(js_name = confirmLeader)]
    pub fn confirm_leader(&mut self, now: f64, term: f64, granted: bool) -> Result<(), JsValue> {
        self.inner.confirm_leader(to_u64("now", now)?, to_u64("term", term)?, granted).map_err(core_error)
    }

    /// Reports that the became-leader handler failed: leadership is rolled back.
    #[wasm_bindgen(js_name = leaderHandlerFailed)]
    pub fn leader_handler_failed(&mut self, now: f64, term: f64) -> Result<(), JsValue> {
        self.inner.leader_handler_failed(to_u64("now", now)?, to_u64("term", term)?).map_err(core_error)
    }

    /// Hands leadership to `peer` (only the leader can).
    #[wasm_bindgen(js_name = transferLeadership)]
    pub fn transfer_leadership(&mut self, now: f64, peer: &str) -> Result<(), JsValue> {
        self.inner.transfer_leadership(to_u64("now", now)?, peer).map_err(core_error)
    }

    /// Sends an application payload to every member of the view.
    pub fn broadcast(&mut self, now: f64, payload: &[u8]) -> Result<(), JsValue> {
        self.inner.broadcast(to_u64("now", now)?, payload).map_err(core_error)
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
                set(&o, "message", w.to_string());
                JsValue::from(o)
            })
            .collect()
    }

    /// The whole election state as a plain object (the core's `Inspect`, snake_case keys).
    #[wasm_bindgen(unchecked_return_type = "Inspect")]
    pub fn inspect(&self) -> Result<JsValue, JsValue> {
        JSON::parse(&self.inner.inspect().to_string())
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
