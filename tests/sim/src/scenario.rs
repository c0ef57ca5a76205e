//! The cross-host scenario format (`tests/scenarios/README.md`): types, the one function that
//! applies an input to a node (shared by the simulator and every replay, so a recording is exactly
//! what the simulator did), and a replayer.

use serde::{Deserialize, Serialize};
use tenure::{Config, DurableState, Event, Node, Output, PeerDownReason};

use crate::{hex, unhex};

/// One timeline file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    /// Short kebab-case name (also the file name).
    pub name: String,
    /// What the timeline shows, in a sentence.
    pub description: String,
    /// The node's configuration.
    pub config: ConfigJson,
    /// The node's PRNG seed.
    pub seed: u64,
    /// Durable state passed to the constructor.
    pub restored: Option<RestoredJson>,
    /// The constructor's `now`.
    pub start_ms: u64,
    /// The inputs and the outputs expected after each.
    pub steps: Vec<Step>,
    /// The node's state after the last step.
    #[serde(rename = "final")]
    pub final_state: FinalJson,
}

/// Every field of [`tenure::Config`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigJson {
    pub id: String,
    pub cluster: String,
    pub bootstrap: Vec<String>,
    pub min_cluster_size: u32,
    pub election_timeout_min: Option<u64>,
    pub election_timeout_max: Option<u64>,
    pub heartbeat_interval: u64,
    pub ghost_ttl: u64,
    pub pre_vote: bool,
    pub confirm_leader: bool,
    pub durable: bool,
    pub key_hex: Option<String>,
    #[serde(default)]
    pub admit_unknown_peers: bool,
    #[serde(default = "default_max_peers")]
    pub max_peers: u32,
    #[serde(default = "default_max_clock_drift_ppm")]
    pub max_clock_drift_ppm: u32,
    #[serde(default)]
    pub incarnation: Option<u64>,
    /// What the node proclaims whenever it leads (`null`: none).
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub priority: u32,
    #[serde(default)]
    pub never_lead: bool,
    /// `null`: derived from the election timeout.
    #[serde(default)]
    pub preempt_after: Option<u64>,
    #[serde(default)]
    pub observer: bool,
    #[serde(default)]
    pub observer_peers: Vec<String>,
}

fn default_max_peers() -> u32 {
    tenure::DEFAULT_MAX_PEERS
}

fn default_max_clock_drift_ppm() -> u32 {
    tenure::DEFAULT_MAX_CLOCK_DRIFT_PPM
}

impl ConfigJson {
    /// From a core configuration.
    pub fn from_config(c: &Config) -> ConfigJson {
        ConfigJson {
            id: c.id.clone(),
            cluster: c.cluster.clone(),
            bootstrap: c.bootstrap.clone(),
            min_cluster_size: c.min_cluster_size,
            election_timeout_min: c.election_timeout_min,
            election_timeout_max: c.election_timeout_max,
            heartbeat_interval: c.heartbeat_interval,
            ghost_ttl: c.ghost_ttl,
            pre_vote: c.pre_vote,
            confirm_leader: c.confirm_leader,
            durable: c.durable,
            key_hex: c.key.as_deref().map(hex),
            admit_unknown_peers: c.admit_unknown_peers,
            max_peers: c.max_peers,
            max_clock_drift_ppm: c.max_clock_drift_ppm,
            incarnation: c.incarnation,
            value: c.value.clone(),
            priority: c.priority,
            never_lead: c.never_lead,
            preempt_after: c.preempt_after,
            observer: c.observer,
            observer_peers: c.observer_peers.clone(),
        }
    }
    /// To a core configuration.
    pub fn to_config(&self) -> Result<Config, String> {
        let key = match &self.key_hex {
            Some(h) => Some(unhex(h).ok_or_else(|| format!("key_hex is not hex: {h:?}"))?),
            None => None,
        };
        Ok(Config {
            id: self.id.clone(),
            cluster: self.cluster.clone(),
            bootstrap: self.bootstrap.clone(),
            min_cluster_size: self.min_cluster_size,
            election_timeout_min: self.election_timeout_min,
            election_timeout_max: self.election_timeout_max,
            heartbeat_interval: self.heartbeat_interval,
            lease_duration: None,
            ghost_ttl: self.ghost_ttl,
            pre_vote: self.pre_vote,
            confirm_leader: self.confirm_leader,
            durable: self.durable,
            key,
            admit_unknown_peers: self.admit_unknown_peers,
            max_peers: self.max_peers,
            max_clock_drift_ppm: self.max_clock_drift_ppm,
            incarnation: self.incarnation,
            value: self.value.clone(),
            priority: self.priority,
            never_lead: self.never_lead,
            preempt_after: self.preempt_after,
            observer: self.observer,
            observer_peers: self.observer_peers.clone(),
        })
    }
}

/// Durable state given to the constructor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestoredJson {
    pub term: u64,
    pub voted_for: Option<String>,
}

/// One input and what it produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The `now` passed with the input.
    pub at: u64,
    /// The input.
    pub input: InputJson,
    /// `"ok"` or the error's stable code.
    pub result: String,
    /// Everything `poll_output()` returned afterwards, in order.
    pub outputs: Vec<OutputJson>,
    /// `poll_timeout()` after draining.
    pub next_deadline: Option<u64>,
}

/// An input, as written in a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InputJson {
    Timeout,
    Message { from: String, hex: String },
    Join { peer: String },
    Leave { peer: String },
    PeerDown { peer: String, reason: String },
    Confirm { term: u64, granted: bool },
    LeaderFailed { term: u64 },
    Transfer { peer: String },
    Broadcast { hex: String },
    Proclaim { value: String },
}

/// An output, as written in a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputJson {
    Send { to: String, hex: String },
    Persist { term: u64, voted_for: Option<String> },
    Event(EventJson),
}

/// An event, as written in a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventJson {
    BecameLeader { term: u64 },
    BecameFollower { term: u64, leader: Option<String> },
    PeerJoined { peer: String },
    PeerLeft { peer: String },
    ConfirmLeader { term: u64 },
    Message { from: String, hex: String },
}

/// The node's state after the last step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalJson {
    pub role: String,
    pub term: u64,
    pub leader: Option<String>,
    pub voted_for: Option<String>,
    /// `leader_value()`: the value of the leader this node knows (absent in files recorded before
    /// values existed, which is read as `null`).
    #[serde(default)]
    pub value: Option<String>,
}

impl FinalJson {
    /// Reads it off a node.
    pub fn of(node: &Node) -> FinalJson {
        FinalJson {
            role: node.role().as_str().to_string(),
            term: node.term(),
            leader: node.leader().map(str::to_string),
            voted_for: node.voted_for().map(str::to_string),
            value: node.leader_value().map(str::to_string),
        }
    }
}

/// An input to a node, in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// `handle_timeout(now)`.
    Timeout,
    /// `handle_message(now, from, bytes)`.
    Message { from: String, bytes: Vec<u8> },
    /// `join(now, peer)`.
    Join(String),
    /// `leave(now, peer)`.
    Leave(String),
    /// `peer_down(now, peer, reason)`.
    PeerDown(String, PeerDownReason),
    /// `confirm_leader(now, term, granted)`.
    Confirm { term: u64, granted: bool },
    /// `leader_handler_failed(now, term)`.
    LeaderFailed(u64),
    /// `transfer_leadership(now, peer)`.
    Transfer(String),
    /// `broadcast(now, payload)`.
    Broadcast(Vec<u8>),
    /// `proclaim(now, value)`.
    Proclaim(String),
}

impl Input {
    /// The file form.
    pub fn to_json(&self) -> InputJson {
        match self {
            Input::Timeout => InputJson::Timeout,
            Input::Message { from, bytes } => InputJson::Message { from: from.clone(), hex: hex(bytes) },
            Input::Join(p) => InputJson::Join { peer: p.clone() },
            Input::Leave(p) => InputJson::Leave { peer: p.clone() },
            Input::PeerDown(p, r) => InputJson::PeerDown { peer: p.clone(), reason: reason_str(*r).to_string() },
            Input::Confirm { term, granted } => InputJson::Confirm { term: *term, granted: *granted },
            Input::LeaderFailed(t) => InputJson::LeaderFailed { term: *t },
            Input::Transfer(p) => InputJson::Transfer { peer: p.clone() },
            Input::Broadcast(b) => InputJson::Broadcast { hex: hex(b) },
            Input::Proclaim(v) => InputJson::Proclaim { value: v.clone() },
        }
    }
    /// From the file form.
    pub fn from_json(j: &InputJson) -> Result<Input, String> {
        let bytes = |h: &str| unhex(h).ok_or_else(|| format!("not hex: {h:?}"));
        Ok(match j {
            InputJson::Timeout => Input::Timeout,
            InputJson::Message { from, hex } => Input::Message { from: from.clone(), bytes: bytes(hex)? },
            InputJson::Join { peer } => Input::Join(peer.clone()),
            InputJson::Leave { peer } => Input::Leave(peer.clone()),
            InputJson::PeerDown { peer, reason } => Input::PeerDown(
                peer.clone(),
                PeerDownReason::from_name(reason).ok_or_else(|| format!("unknown peer_down reason {reason:?}"))?,
            ),
            InputJson::Confirm { term, granted } => Input::Confirm { term: *term, granted: *granted },
            InputJson::LeaderFailed { term } => Input::LeaderFailed(*term),
            InputJson::Transfer { peer } => Input::Transfer(peer.clone()),
            InputJson::Broadcast { hex } => Input::Broadcast(bytes(hex)?),
            InputJson::Proclaim { value } => Input::Proclaim(value.clone()),
        })
    }
}

/// The stable name of a peer-down reason.
pub fn reason_str(r: PeerDownReason) -> &'static str {
    r.as_str()
}

/// Applies one input; `Err` carries the stable error code (a `DropReason` name or `Error::code()`).
pub fn apply_input(node: &mut Node, now: u64, input: &Input) -> Result<(), &'static str> {
    match input {
        Input::Timeout => {
            node.handle_timeout(now);
            Ok(())
        }
        Input::Message { from, bytes } => node.handle_message(now, from, bytes).map_err(|r| r.as_str()),
        Input::Join(p) => node.join(now, p).map_err(|e| e.code()),
        Input::Leave(p) => node.leave(now, p).map_err(|e| e.code()),
        Input::PeerDown(p, r) => node.peer_down(now, p, *r).map_err(|e| e.code()),
        Input::Confirm { term, granted } => node.confirm_leader(now, *term, *granted).map_err(|e| e.code()),
        Input::LeaderFailed(t) => node.leader_handler_failed(now, *t).map_err(|e| e.code()),
        Input::Transfer(p) => node.transfer_leadership(now, p).map_err(|e| e.code()),
        Input::Broadcast(b) => node.broadcast(now, b).map_err(|e| e.code()),
        Input::Proclaim(v) => node.proclaim(now, v).map_err(|e| e.code()),
    }
}

/// The file form of an output.
pub fn output_json(o: &Output) -> OutputJson {
    match o {
        Output::Send { to, bytes } => OutputJson::Send { to: to.clone(), hex: hex(bytes) },
        Output::Persist(s) => OutputJson::Persist { term: s.term, voted_for: s.voted_for.clone() },
        Output::Event(e) => OutputJson::Event(match e {
            Event::BecameLeader { term } => EventJson::BecameLeader { term: *term },
            Event::BecameFollower { term, leader } => EventJson::BecameFollower { term: *term, leader: leader.clone() },
            Event::PeerJoined { peer } => EventJson::PeerJoined { peer: peer.clone() },
            Event::PeerLeft { peer } => EventJson::PeerLeft { peer: peer.clone() },
            Event::ConfirmLeader { term } => EventJson::ConfirmLeader { term: *term },
            Event::Message { from, payload } => EventJson::Message { from: from.clone(), hex: hex(payload) },
        }),
    }
}

/// Writes a scenario as the canonical file text (pretty JSON, two-space indent, final newline).
pub fn to_file_text(s: &Scenario) -> String {
    let mut text = serde_json::to_string_pretty(s).expect("scenario serialises");
    text.push('\n');
    text
}

/// Replays a scenario against a fresh node, as every binding does; the first difference is the
/// error (with the step index).
pub fn replay(s: &Scenario) -> Result<(), String> {
    let config = s.config.to_config()?;
    let restored = s.restored.as_ref().map(|r| DurableState { term: r.term, voted_for: r.voted_for.clone() });
    let mut node =
        Node::new(config, s.seed, restored, s.start_ms).map_err(|e| format!("{}: config rejected: {e}", s.name))?;
    for (i, step) in s.steps.iter().enumerate() {
        let input = Input::from_json(&step.input).map_err(|e| format!("{} step {i}: {e}", s.name))?;
        let result = match apply_input(&mut node, step.at, &input) {
            Ok(()) => "ok",
            Err(code) => code,
        };
        if result != step.result {
            return Err(format!("{} step {i} (at {}): result {result:?}, expected {:?}", s.name, step.at, step.result));
        }
        let mut outputs = Vec::new();
        while let Some(o) = node.poll_output() {
            outputs.push(output_json(&o));
        }
        if outputs != step.outputs {
            return Err(format!(
                "{} step {i} (at {}): outputs differ\n got:      {}\n expected: {}",
                s.name,
                step.at,
                serde_json::to_string(&outputs).unwrap_or_default(),
                serde_json::to_string(&step.outputs).unwrap_or_default()
            ));
        }
        if node.poll_timeout() != step.next_deadline {
            return Err(format!(
                "{} step {i} (at {}): next_deadline {:?}, expected {:?}",
                s.name,
                step.at,
                node.poll_timeout(),
                step.next_deadline
            ));
        }
    }
    let fin = FinalJson::of(&node);
    if fin != s.final_state {
        return Err(format!("{}: final state {fin:?}, expected {:?}", s.name, s.final_state));
    }
    Ok(())
}
