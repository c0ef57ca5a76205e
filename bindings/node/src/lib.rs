//! The napi-rs addon behind the npm package `tenure` (`/node`).
//!
//! Thin by design: it converts JavaScript values to the core's types and back, and turns the
//! core's errors into JavaScript errors with a stable `code` (the JS layer in `/node/lib` wraps
//! them in `TenureError` subclasses). Every export catches Rust panics (`catch_unwind`), so a bug
//! in the core surfaces as an exception, never as an aborted process.
#![deny(clippy::all)]

mod conv;
mod extra;
mod flat;
// Registered as module exports, which napi-rs leaves out of `cargo test` builds.
#[cfg_attr(test, allow(dead_code))]
mod hot;
mod runtime;

use napi::bindgen_prelude::{Array, Env, Object, Unknown};
use napi::Result;
use napi_derive::napi;

use conv::{
    boolean, bytes, bytes_mut, bytes_or_string, coded_error, is_nullish, object, only_keys, opt, opt_string, opt_u64,
    prop, range_error, string, strings, type_error, u64_arg, uint, U64,
};
use tenure::{Config, DurableState, PeerDownReason};
use tenure_runtime::vocabulary::camel_case_names;

pub use extra::*;
pub use runtime::*;

const CONFIG_KEYS: &[&str] = &[
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
    "value",
    "priority",
    "neverLead",
    "preemptAfter",
    "observer",
    "observerPeers",
];

/// Reads a node configuration object (camelCase keys, see `index.d.ts` `NodeConfig`).
pub(crate) fn config_from_js(env: &Env, v: &Unknown) -> Result<Config> {
    let obj = object(env, v, "config")?;
    only_keys(env, &obj, "config", CONFIG_KEYS)?;
    let id = match prop(&obj, "id")? {
        Some(v) => string(env, &v, "config.id")?,
        None => return Err(type_error(env, "config.id must be a string, got undefined".into())),
    };
    let cluster = match prop(&obj, "cluster")? {
        Some(v) => string(env, &v, "config.cluster")?,
        None => return Err(type_error(env, "config.cluster must be a string, got undefined".into())),
    };
    let mut c = Config::new(id, cluster);
    if let Some(v) = prop(&obj, "bootstrap")? {
        c.bootstrap = strings(env, &v, "config.bootstrap")?;
    }
    if let Some(v) = prop(&obj, "minClusterSize")? {
        c.min_cluster_size = uint(env, &v, "config.minClusterSize", u32::MAX as u64)? as u32;
    }
    c.election_timeout_min = opt_u64(env, prop(&obj, "electionTimeoutMin")?.as_ref(), "config.electionTimeoutMin")?;
    c.election_timeout_max = opt_u64(env, prop(&obj, "electionTimeoutMax")?.as_ref(), "config.electionTimeoutMax")?;
    if let Some(v) = prop(&obj, "heartbeatInterval")? {
        c.heartbeat_interval = u64_arg(env, &v, "config.heartbeatInterval")?;
    }
    c.lease_duration = opt_u64(env, prop(&obj, "leaseDuration")?.as_ref(), "config.leaseDuration")?;
    if let Some(v) = prop(&obj, "ghostTtl")? {
        c.ghost_ttl = u64_arg(env, &v, "config.ghostTtl")?;
    }
    if let Some(v) = prop(&obj, "preVote")? {
        c.pre_vote = boolean(env, &v, "config.preVote")?;
    }
    if let Some(v) = prop(&obj, "confirmLeader")? {
        c.confirm_leader = boolean(env, &v, "config.confirmLeader")?;
    }
    if let Some(v) = prop(&obj, "durable")? {
        c.durable = boolean(env, &v, "config.durable")?;
    }
    if let Some(v) = prop(&obj, "key")? {
        if !is_nullish(&v)? {
            c.key = Some(bytes_or_string(env, &v, "config.key")?);
        }
    }
    if let Some(v) = prop(&obj, "admitUnknownPeers")? {
        c.admit_unknown_peers = boolean(env, &v, "config.admitUnknownPeers")?;
    }
    if let Some(v) = prop(&obj, "maxPeers")? {
        c.max_peers = uint(env, &v, "config.maxPeers", u32::MAX as u64)? as u32;
    }
    if let Some(v) = prop(&obj, "maxClockDriftPpm")? {
        c.max_clock_drift_ppm = uint(env, &v, "config.maxClockDriftPpm", u32::MAX as u64)? as u32;
    }
    c.incarnation = opt_u64(env, prop(&obj, "incarnation")?.as_ref(), "config.incarnation")?;
    if let Some(v) = prop(&obj, "value")? {
        if !is_nullish(&v)? {
            c.value = Some(string(env, &v, "config.value")?);
        }
    }
    if let Some(v) = prop(&obj, "priority")? {
        c.priority = uint(env, &v, "config.priority", u64::from(u32::MAX))? as u32;
    }
    if let Some(v) = prop(&obj, "neverLead")? {
        c.never_lead = boolean(env, &v, "config.neverLead")?;
    }
    c.preempt_after = opt_u64(env, prop(&obj, "preemptAfter")?.as_ref(), "config.preemptAfter")?;
    if let Some(v) = prop(&obj, "observer")? {
        c.observer = boolean(env, &v, "config.observer")?;
    }
    if let Some(v) = prop(&obj, "observerPeers")? {
        c.observer_peers = strings(env, &v, "config.observerPeers")?;
    }
    Ok(c)
}

/// Reads `{ term, votedFor }`; `None` for `undefined`/`null`.
pub(crate) fn durable_from_js(env: &Env, v: Option<&Unknown>, what: &str) -> Result<Option<DurableState>> {
    let Some(v) = v else { return Ok(None) };
    if is_nullish(v)? {
        return Ok(None);
    }
    let obj = object(env, v, what)?;
    only_keys(env, &obj, what, &["term", "votedFor"])?;
    let term = match prop(&obj, "term")? {
        Some(t) => u64_arg(env, &t, &format!("{what}.term"))?,
        None => return Err(type_error(env, format!("{what}.term must be a number or a bigint, got undefined"))),
    };
    let voted_for = opt_string(env, prop(&obj, "votedFor")?.as_ref(), &format!("{what}.votedFor"))?;
    Ok(Some(DurableState { term, voted_for }))
}

fn core_error(env: &Env, e: tenure::Error) -> napi::Error {
    coded_error(env, e.code(), camel_case_names(&e.to_string()))
}

fn config_error(env: &Env, e: tenure::ConfigError) -> napi::Error {
    coded_error(env, e.code(), camel_case_names(&e.to_string()))
}

/// The sans-IO election state machine (`tenure::Node`). Wrapped by `Node` in `/node/lib`.
#[napi(js_name = "NativeNode")]
pub struct NativeNode {
    inner: tenure::Node,
    /// Outputs encoded for `drainInto` but not handed over yet (they did not fit).
    flat: flat::FlatOutputs,
    /// Peer ids interned by `internPeer`, so that `handleMessageInto` takes a sender as an index:
    /// no string conversion and no allocation per message.
    peers: Vec<String>,
}

/// `handleMessageInto`'s result when the message was accepted but its outputs did not fit.
pub const FUSED_NOT_DRAINED: i32 = -1;
/// `handleMessageInto`'s result for a message dropped for `DropReason::ALL[0]` (minus the index).
pub const FUSED_DROPPED: i32 = -2;

impl NativeNode {
    /// The hot path of a datagram, in one call (exported as the raw function `handleMessageInto(node,
    /// ...)`, `hot.rs`): feeds it (the sender given as an `internPeer`
    /// index) and moves every pending output into `buf` as `drainInto` does. Returns the number of
    /// bytes written (the message was accepted); [`FUSED_NOT_DRAINED`] when the message was
    /// accepted but the outputs do not fit in `buf` (they stay for `drainInto`); or
    /// `FUSED_DROPPED - i` when the message was dropped for `dropReasons()[i]` (nothing drained).
    #[cfg_attr(test, allow(dead_code))]
    pub(crate) fn handle_message_into(
        &mut self,
        env: &Env,
        now: &Unknown,
        peer: u32,
        data: &Unknown,
        buf: &Unknown,
    ) -> Result<i32> {
        let now = u64_arg(env, now, "now")?;
        let Some(from) = self.peers.get(peer as usize) else {
            return Err(range_error(env, format!("peer index {peer} was not interned ({} are)", self.peers.len())));
        };
        let data = bytes(env, data, "bytes")?;
        let buf = bytes_mut(env, buf, "buf")?;
        if let Err(reason) = self.inner.handle_message(now, from, data) {
            return Ok(FUSED_DROPPED - reason.index() as i32);
        }
        Ok(self.drain_to(buf).map_or(FUSED_NOT_DRAINED, |n| n as i32))
    }

    /// Encodes every pending output (`flat.rs`) and copies the records into `buf`; returns the
    /// number of bytes written, or `None` (keeping them) when they do not fit.
    fn drain_to(&mut self, buf: &mut [u8]) -> Option<usize> {
        // Borrowed outputs: a send's id and bytes go straight from the core's queue into the
        // records, with no per-output `String`/`Vec`.
        while let Some(out) = self.inner.poll_output_ref() {
            self.flat.push(out);
        }
        let encoded = self.flat.encoded();
        let dst = buf.get_mut(..encoded.len())?;
        dst.copy_from_slice(encoded);
        let n = encoded.len();
        self.flat.clear();
        Some(n)
    }
}

#[napi]
impl NativeNode {
    /// `new NativeNode(config, seed?, restored?, now)`; a missing seed comes from the OS.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, config: Unknown, seed: Unknown, restored: Unknown, now: Unknown) -> Result<Self> {
        let config = config_from_js(&env, &config)?;
        let seed = match opt_u64(&env, Some(&seed), "seed")? {
            Some(s) => s,
            None => tenure::os_seed().map_err(|e| coded_error(&env, "no_randomness", e.to_string()))?,
        };
        let restored = durable_from_js(&env, Some(&restored), "restored")?;
        let now = u64_arg(&env, &now, "now")?;
        let inner = tenure::Node::new(config, seed, restored, now).map_err(|e| config_error(&env, e))?;
        Ok(NativeNode { inner, flat: flat::FlatOutputs::default(), peers: Vec::new() })
    }

    /// Feeds a datagram. Returns `null` when accepted, or the `DropReason` name when dropped.
    #[napi(catch_unwind)]
    pub fn handle_message(
        &mut self,
        env: Env,
        now: Unknown,
        from: Unknown,
        data: Unknown,
    ) -> Result<Option<&'static str>> {
        let now = u64_arg(&env, &now, "now")?;
        let from = string(&env, &from, "from")?;
        let data = bytes(&env, &data, "bytes")?;
        Ok(self.inner.handle_message(now, &from, data).err().map(|r| r.as_str()))
    }

    /// Interns a peer id for `handleMessageInto` and returns its index. At most
    /// [`flat::MAX_STRINGS`] ids are interned at once: the next new one first forgets them all and
    /// gets index 0 (so the caller forgets its table whenever it is handed index 0).
    #[napi(catch_unwind)]
    pub fn intern_peer(&mut self, env: Env, peer: Unknown) -> Result<u32> {
        let peer = string(&env, &peer, "from")?;
        if self.peers.len() >= flat::MAX_STRINGS {
            self.peers.clear();
        }
        self.peers.push(peer);
        Ok((self.peers.len() - 1) as u32)
    }

    /// Feeds the passing of time.
    #[napi(catch_unwind)]
    pub fn handle_timeout(&mut self, env: Env, now: Unknown) -> Result<()> {
        let now = u64_arg(&env, &now, "now")?;
        self.inner.handle_timeout(now);
        Ok(())
    }

    /// Declares a peer.
    #[napi(catch_unwind)]
    pub fn join(&mut self, env: Env, now: Unknown, peer: Unknown) -> Result<()> {
        let now = u64_arg(&env, &now, "now")?;
        let peer = string(&env, &peer, "peer")?;
        self.inner.join(now, &peer).map_err(|e| core_error(&env, e))
    }

    /// Withdraws a peer.
    #[napi(catch_unwind)]
    pub fn leave(&mut self, env: Env, now: Unknown, peer: Unknown) -> Result<()> {
        let now = u64_arg(&env, &now, "now")?;
        let peer = string(&env, &peer, "peer")?;
        self.inner.leave(now, &peer).map_err(|e| core_error(&env, e))
    }

    /// Reports a peer down: `reason` is a `PeerDownReason` name (`"terminated"`, `"no_connection"`
    /// or `"refused"`).
    #[napi(catch_unwind)]
    pub fn peer_down(&mut self, env: Env, now: Unknown, peer: Unknown, reason: Unknown) -> Result<()> {
        let now = u64_arg(&env, &now, "now")?;
        let peer = string(&env, &peer, "peer")?;
        let reason = string(&env, &reason, "reason")?;
        let Some(reason) = PeerDownReason::from_name(&reason) else {
            let names: Vec<&str> = PeerDownReason::ALL.iter().map(|r| r.as_str()).collect();
            return Err(type_error(&env, format!("reason must be one of {names:?}, got {reason:?}")));
        };
        self.inner.peer_down(now, &peer, reason).map_err(|e| core_error(&env, e))
    }

    /// Answers a `confirm_leader` event.
    #[napi(catch_unwind)]
    pub fn confirm_leader(&mut self, env: Env, now: Unknown, term: Unknown, granted: Unknown) -> Result<()> {
        let now = u64_arg(&env, &now, "now")?;
        let term = u64_arg(&env, &term, "term")?;
        let granted = boolean(&env, &granted, "granted")?;
        self.inner.confirm_leader(now, term, granted).map_err(|e| core_error(&env, e))
    }

    /// Reports that the became-leader handler failed: leadership is rolled back.
    #[napi(catch_unwind)]
    pub fn leader_handler_failed(&mut self, env: Env, now: Unknown, term: Unknown) -> Result<()> {
        let now = u64_arg(&env, &now, "now")?;
        let term = u64_arg(&env, &term, "term")?;
        self.inner.leader_handler_failed(now, term).map_err(|e| core_error(&env, e))
    }

    /// Hands leadership to `peer`.
    #[napi(catch_unwind)]
    pub fn transfer_leadership(&mut self, env: Env, now: Unknown, peer: Unknown) -> Result<()> {
        let now = u64_arg(&env, &now, "now")?;
        let peer = string(&env, &peer, "peer")?;
        self.inner.transfer_leadership(now, &peer).map_err(|e| core_error(&env, e))
    }

    /// The peer a graceful stop should hand leadership to (the core's choice: answered, not
    /// reported unreachable, heard from most recently), or `null`.
    #[napi(catch_unwind)]
    pub fn transfer_target(&self) -> Option<String> {
        self.inner.transfer_target().map(str::to_string)
    }

    /// Sends an application payload to every member of the view.
    #[napi(catch_unwind)]
    pub fn broadcast(&mut self, env: Env, now: Unknown, payload: Unknown) -> Result<()> {
        let now = u64_arg(&env, &now, "now")?;
        let payload = bytes(&env, &payload, "payload")?;
        self.inner.broadcast(now, payload).map_err(|e| core_error(&env, e))
    }

    /// Changes the value this node proclaims while it leads (empty: none).
    #[napi(catch_unwind)]
    pub fn proclaim(&mut self, env: Env, now: Unknown, value: Unknown) -> Result<()> {
        let now = u64_arg(&env, &now, "now")?;
        let value = string(&env, &value, "value")?;
        self.inner.proclaim(now, &value).map_err(|e| core_error(&env, e))
    }

    /// Moves every pending output into `buf` in the flat representation (`flat.rs`; read by
    /// `node/lib/outputs.js`) and returns the number of bytes written. When they do not fit, writes
    /// nothing and returns minus the size needed; the outputs stay for the next call.
    #[napi(catch_unwind, ts_args_type = "buf: Uint8Array")]
    pub fn drain_into(&mut self, env: Env, buf: Unknown) -> Result<i64> {
        let buf = bytes_mut(&env, &buf, "buf")?;
        Ok(self.drain_to(buf).map_or_else(|| -(self.flat.encoded().len() as i64), |n| n as i64))
    }

    /// The next deadline for `handleTimeout`, or `null`.
    #[napi(catch_unwind, ts_return_type = "number | null")]
    pub fn poll_timeout(&self) -> Option<U64> {
        opt(self.inner.poll_timeout())
    }

    /// This node's id.
    #[napi(getter, catch_unwind)]
    pub fn id(&self) -> String {
        self.inner.id().to_string()
    }

    /// The cluster id.
    #[napi(getter, catch_unwind)]
    pub fn cluster(&self) -> String {
        self.inner.cluster().to_string()
    }

    /// `unclustered`, `follower`, `candidate` or `leader`.
    #[napi(getter, catch_unwind)]
    pub fn role(&self) -> &'static str {
        self.inner.role().as_str()
    }

    /// The current term.
    #[napi(getter, catch_unwind, ts_return_type = "number")]
    pub fn term(&self) -> U64 {
        U64(self.inner.term())
    }

    /// Whom this node voted for in the current term.
    #[napi(getter, catch_unwind)]
    pub fn voted_for(&self) -> Option<String> {
        self.inner.voted_for().map(str::to_string)
    }

    /// The known leader of the current term.
    #[napi(getter, catch_unwind)]
    pub fn leader(&self) -> Option<String> {
        self.inner.leader().map(str::to_string)
    }

    /// The value the leader proclaims, as this node knows it.
    #[napi(getter, catch_unwind)]
    pub fn leader_value(&self) -> Option<String> {
        self.inner.leader_value().map(str::to_string)
    }

    /// Whether this node is the confirmed leader.
    #[napi(getter, catch_unwind)]
    pub fn is_leader(&self) -> bool {
        self.inner.is_leader()
    }

    /// This node and every peer it counts, sorted.
    #[napi(getter, catch_unwind)]
    pub fn view(&self) -> Vec<String> {
        self.inner.view()
    }

    /// Votes needed to win.
    #[napi(getter, catch_unwind)]
    pub fn quorum(&self) -> u32 {
        self.inner.quorum() as u32
    }

    /// The term while leading, else `null`.
    #[napi(getter, catch_unwind, ts_return_type = "number | null")]
    pub fn fencing_token(&self) -> Option<U64> {
        opt(self.inner.fencing_token())
    }

    /// While leading, the last instant at which no other leader can exist yet, else `null`.
    #[napi(getter, catch_unwind, ts_return_type = "number | null")]
    pub fn lease_deadline(&self) -> Option<U64> {
        opt(self.inner.lease_deadline())
    }

    /// The effective timing (`electionTimeoutMin`, ...) after derivation of a missing bound.
    #[napi(getter, catch_unwind, ts_return_type = "EffectiveConfig")]
    pub fn effective_config<'e>(&self, env: &'e Env) -> Result<Object<'e>> {
        let c = self.inner.config();
        let mut o = Object::new(env)?;
        o.set("electionTimeoutMin", U64(c.election_timeout_min))?;
        o.set("electionTimeoutMax", U64(c.election_timeout_max))?;
        o.set("heartbeatInterval", U64(c.heartbeat_interval))?;
        o.set("ghostTtl", U64(c.ghost_ttl))?;
        o.set("minClusterSize", c.min_cluster_size)?;
        o.set("maxPeers", c.max_peers)?;
        o.set("maxClockDriftPpm", c.max_clock_drift_ppm)?;
        o.set("leaseSpan", U64(c.lease_span))?;
        o.set("leaseDuration", U64(c.lease_duration))?;
        Ok(o)
    }

    /// Configuration warnings, as `{ code, message }`.
    #[napi(getter, catch_unwind, ts_return_type = "ConfigWarning[]")]
    pub fn warnings<'e>(&self, env: &'e Env) -> Result<Array<'e>> {
        let mut arr = env.create_array(0)?;
        for (i, w) in self.inner.warnings().iter().enumerate() {
            let mut o = Object::new(env)?;
            o.set("code", w.code())?;
            o.set("message", camel_case_names(&w.to_string()))?;
            arr.set(i as u32, o)?;
        }
        Ok(arr)
    }

    /// The whole election state as JSON text (the JS layer parses it).
    #[napi(catch_unwind)]
    pub fn inspect_json(&self) -> String {
        self.inner.inspect().to_string()
    }
}
