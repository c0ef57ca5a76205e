//! The component as a [`tenure_runtime::Engine`]: `tenure-wasmtime` is the shared runtime driving
//! this engine instead of the native core.
//!
//! The component calls its host back while one of its methods runs; [`Queue`] turns those
//! callbacks into the core's [`tenure::Output`]s, in order, so the runtime drains them exactly as
//! it drains a native node's `poll_output` (persist before later sends, events to the handler).
//! `confirm-leader` is answered `defer` and reaches the runtime as `Event::ConfirmLeader`; the
//! runtime answers with `confirm-leader` after the call, as with the native core.

use std::collections::VecDeque;

use tenure::{Event, Output};
use tenure_runtime::{Engine, EngineInit, RuntimeError};

use crate::{
    core_drop_reason, core_inspect, core_role, node_config, peer_down_reason, Callbacks, ComponentNode, ConfirmAnswer,
    DurableState, LeaderRefusal, Loader, NodeError, NodeErrorCode, Role,
};

/// Callbacks that queue the component's outputs as the core's [`Output`]s.
#[derive(Debug, Default)]
pub struct Queue {
    outputs: VecDeque<Output>,
    wakeup: Option<u64>,
}

impl Callbacks for Queue {
    fn send(&mut self, to: &str, bytes: Vec<u8>) {
        self.outputs.push_back(Output::Send { to: to.to_string(), bytes });
    }
    fn set_wakeup(&mut self, deadline: Option<u64>) {
        self.wakeup = deadline;
    }
    fn persist(&mut self, state: &DurableState) -> Result<(), String> {
        // Queued before any later output: the runtime makes it durable before those leave.
        self.outputs
            .push_back(Output::Persist(tenure::DurableState { term: state.term, voted_for: state.voted_for.clone() }));
        Ok(())
    }
    fn became_leader(&mut self, term: u64) -> Result<(), LeaderRefusal> {
        // A handler that fails later reports it with `leader-handler-failed`, as with the native core.
        self.outputs.push_back(Output::Event(Event::BecameLeader { term }));
        Ok(())
    }
    fn became_follower(&mut self, term: u64, leader: Option<&str>) {
        self.outputs.push_back(Output::Event(Event::BecameFollower { term, leader: leader.map(str::to_string) }));
    }
    fn confirm_leader(&mut self, term: u64) -> ConfirmAnswer {
        self.outputs.push_back(Output::Event(Event::ConfirmLeader { term }));
        ConfirmAnswer::Defer
    }
    fn peer_joined(&mut self, peer: &str) {
        self.outputs.push_back(Output::Event(Event::PeerJoined { peer: peer.to_string() }));
    }
    fn peer_left(&mut self, peer: &str) {
        self.outputs.push_back(Output::Event(Event::PeerLeft { peer: peer.to_string() }));
    }
    fn message(&mut self, from: &str, payload: Vec<u8>) {
        self.outputs.push_back(Output::Event(Event::Message { from: from.to_string(), payload }));
    }
}

/// One node inside its own component instance, driven by the runtime.
pub struct ComponentEngine {
    node: ComponentNode<Queue>,
    failure: Option<String>,
    /// This node's priority and witness flag (for `inspect`, whose WIT record leaves them out).
    rank: (u32, bool),
}

impl ComponentEngine {
    /// Instantiates the component for `init` (the runtime's engine factory calls this).
    pub fn new(loader: &Loader<Queue>, init: EngineInit) -> Result<Self, RuntimeError> {
        let config = node_config(&init.config, init.seed, init.restored);
        match ComponentNode::new(loader, Queue::default(), &config, init.now) {
            Ok(Ok(node)) => {
                Ok(ComponentEngine { node, failure: None, rank: (init.config.priority, init.config.never_lead) })
            }
            // The runtime validated the configuration with the same core already; report the
            // component's own words if it still refuses.
            Ok(Err(e)) => Err(RuntimeError::Engine { message: format!("invalid configuration: {}", e.message) }),
            Err(e) => Err(RuntimeError::Engine { message: format!("{e:#}") }),
        }
    }

    /// The runtime's engine factory for the component `loader` compiled.
    pub fn factory(loader: Loader<Queue>) -> impl FnOnce(EngineInit) -> Result<Self, RuntimeError> {
        move |init| ComponentEngine::new(&loader, init)
    }

    /// A call's value, or `default` after a trap (recorded for [`Engine::failure`]).
    fn ok<T>(&mut self, r: wasmtime::Result<T>, default: T) -> T {
        match r {
            Ok(v) => v,
            Err(e) => {
                self.failure.get_or_insert_with(|| format!("{e:#}"));
                default
            }
        }
    }

    fn node_result(&mut self, r: wasmtime::Result<Result<(), NodeError>>, args: Args<'_>) -> Result<(), tenure::Error> {
        match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(core_error(&e, args)),
            Err(e) => {
                self.failure.get_or_insert_with(|| format!("{e:#}"));
                // The runtime stops on the failure; the caller sees a refusal meanwhile.
                Err(tenure::Error::NotLeader)
            }
        }
    }
}

/// The arguments of a call, to rebuild the core's typed error from the component's code.
#[derive(Default, Clone, Copy)]
pub(crate) struct Args<'a> {
    peer: Option<&'a str>,
    term: Option<u64>,
    size: Option<usize>,
}

pub(crate) fn core_error(e: &NodeError, a: Args<'_>) -> tenure::Error {
    let peer = || a.peer.unwrap_or_default().to_string();
    let term = a.term.unwrap_or_default();
    match e.code {
        NodeErrorCode::InvalidPeer => tenure::Error::InvalidPeer { peer: peer() },
        NodeErrorCode::SelfPeer => tenure::Error::SelfPeer,
        NodeErrorCode::UnknownPeer => tenure::Error::UnknownPeer { peer: peer() },
        NodeErrorCode::NotLeader => tenure::Error::NotLeader,
        NodeErrorCode::PayloadTooLarge => {
            // The limit is in the component's message ("... maximum of N bytes").
            tenure::Error::PayloadTooLarge { size: a.size.unwrap_or_default(), max: last_number(&e.message) }
        }
        NodeErrorCode::ViewFull => tenure::Error::ViewFull {
            peer: peer(),
            // "... max_peers (N) peers"
            max_peers: u32::try_from(last_number(&e.message)).unwrap_or(u32::MAX),
        },
        NodeErrorCode::NoPendingConfirm => tenure::Error::NoPendingConfirm { term },
        NodeErrorCode::NotLeaderInTerm => tenure::Error::NotLeaderInTerm { term },
        NodeErrorCode::ValueTooLong => tenure::Error::ValueTooLong { len: a.size.unwrap_or_default() },
    }
}

/// The last run of digits in `s` (a limit the component's error message names), or 0.
fn last_number(s: &str) -> usize {
    s.split(|c: char| !c.is_ascii_digit()).rev().find_map(|w| w.parse().ok()).unwrap_or(0)
}

impl Engine for ComponentEngine {
    fn handle_message(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), tenure::DropReason> {
        let r = self.node.handle_message(now, from, bytes);
        self.ok(r, Ok(())).map_err(core_drop_reason)
    }
    fn handle_timeout(&mut self, now: u64) {
        let r = self.node.handle_timeout(now);
        self.ok(r, ())
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.node.callbacks_mut().outputs.pop_front()
    }
    fn poll_timeout(&mut self) -> Option<u64> {
        if self.failure.is_some() {
            return None;
        }
        self.node.callbacks().wakeup
    }
    fn join(&mut self, now: u64, peer: &str) -> Result<(), tenure::Error> {
        let r = self.node.join(now, peer);
        self.node_result(r, Args { peer: Some(peer), ..Args::default() })
    }
    fn leave(&mut self, now: u64, peer: &str) -> Result<(), tenure::Error> {
        let r = self.node.leave(now, peer);
        self.node_result(r, Args { peer: Some(peer), ..Args::default() })
    }
    fn peer_down(&mut self, now: u64, peer: &str, reason: tenure::PeerDownReason) -> Result<(), tenure::Error> {
        let r = self.node.peer_down(now, peer, peer_down_reason(reason));
        self.node_result(r, Args { peer: Some(peer), ..Args::default() })
    }
    fn confirm_leader(&mut self, now: u64, term: u64, granted: bool) -> Result<(), tenure::Error> {
        let r = self.node.confirm_leader(now, term, granted);
        self.node_result(r, Args { term: Some(term), ..Args::default() })
    }
    fn leader_handler_failed(&mut self, now: u64, term: u64) -> Result<(), tenure::Error> {
        let r = self.node.leader_handler_failed(now, term);
        self.node_result(r, Args { term: Some(term), ..Args::default() })
    }
    fn transfer_leadership(&mut self, now: u64, peer: &str) -> Result<(), tenure::Error> {
        let r = self.node.transfer_leadership(now, peer);
        self.node_result(r, Args { peer: Some(peer), ..Args::default() })
    }
    fn transfer_target(&mut self) -> Option<String> {
        let r = self.node.transfer_target();
        self.ok(r, None)
    }
    fn broadcast(&mut self, now: u64, payload: &[u8]) -> Result<(), tenure::Error> {
        let r = self.node.broadcast(now, payload);
        self.node_result(r, Args { size: Some(payload.len()), ..Args::default() })
    }
    fn proclaim(&mut self, now: u64, value: &str) -> Result<(), tenure::Error> {
        let r = self.node.proclaim(now, value);
        self.node_result(r, Args { size: Some(value.len()), ..Args::default() })
    }
    fn leader_value(&mut self) -> Option<String> {
        let r = self.node.leader_value();
        self.ok(r, None)
    }
    fn inspect(&mut self) -> tenure::Inspect {
        match self.node.inspect() {
            // The WIT's inspect record leaves the value out (it has its own function).
            Ok(i) => tenure::Inspect {
                leader_value: self.leader_value(),
                priority: self.rank.0,
                never_lead: self.rank.1,
                ..core_inspect(i)
            },
            Err(e) => {
                self.failure.get_or_insert_with(|| format!("{e:#}"));
                // Neutral values: the runtime stops on the failure right after this round.
                empty_inspect()
            }
        }
    }
    fn role(&mut self) -> tenure::Role {
        let r = self.node.role();
        core_role(self.ok(r, Role::Follower))
    }
    fn term(&mut self) -> u64 {
        let r = self.node.term();
        self.ok(r, 0)
    }
    fn leader(&mut self) -> Option<String> {
        let r = self.node.leader();
        self.ok(r, None)
    }
    fn lease_deadline(&mut self) -> Option<u64> {
        let r = self.node.lease_deadline();
        self.ok(r, None)
    }
    fn death_notices(&mut self) -> Vec<(String, Vec<u8>)> {
        let r = self.node.death_notices();
        self.ok(r, Vec::new())
    }
    fn has_death_notices(&self) -> bool {
        true
    }
    fn failure(&mut self) -> Option<String> {
        self.failure.clone()
    }
}

/// An all-empty state, returned after a trap.
fn empty_inspect() -> tenure::Inspect {
    tenure::Inspect {
        id: String::new(),
        state: String::new(),
        is_leader: false,
        leader: None,
        leader_value: None,
        term: 0,
        voted_for: None,
        term_changed_at: 0,
        cluster: String::new(),
        view_size: 0,
        quorum: 0,
        min_cluster_size: 0,
        peers: Vec::new(),
        declared: Vec::new(),
        bootstrap: Vec::new(),
        unreachable: Vec::new(),
        ghost_ttl: 0,
        votes_granted: Vec::new(),
        votes_count: 0,
        election_timer_armed: false,
        heartbeat_timer_armed: false,
        heartbeat_in_last: None,
        heartbeat_out_last: None,
        election_timeout_min: 0,
        election_timeout_max: 0,
        heartbeat_interval: 0,
        dropped_by_reason: Vec::new(),
        send_failing_peers: Vec::new(),
        confirm_denied: 0,
        last_denied_at: None,
        lease_deadline: None,
        peer_heard_at: Vec::new(),
        peer_acked_at: Vec::new(),
        priority: 0,
        never_lead: false,
        peer_priorities: Vec::new(),
    }
}
