//! The tenure WebAssembly component: a thin wit-bindgen guest over the core.
//!
//! Each exported call feeds one input to the core and then drains every output, in order, into
//! the `host` imports (`persist` before any later `send`), so the host sees the outputs as
//! callbacks before the call returns. Two outputs need an answer that feeds back into the core:
//! `confirm-leader` (a grant or denial is applied at once; `defer` leaves it to a later
//! `node.confirm-leader`) and `became-leader` (an error rolls leadership back). Finally, when the
//! wake-up deadline changed, `set-wakeup` tells the host.
//!
//! Nothing here can panic on host input: the core validates everything and reports typed errors.
//! The core state sits in a `RefCell` that is never borrowed while a host import runs, so even a
//! host that (against the rule) re-enters the instance cannot trip a borrow panic. Should a panic
//! happen all the same, it aborts: the call traps and the host gets an error (wasmtime then
//! refuses further calls into the instance), never a node that silently stopped working.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::sync::atomic::{AtomicBool, Ordering};

use ::tenure::{
    ConfigError, ConfigWarning, DropReason, DurableState, Error, Event, Node as Core, OutputRef, PeerDownReason, Role,
};

mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "election",
        // The guest has no static constructors (wasm-ld links no `__wasm_call_ctors`), so the
        // run-them-once check wit-bindgen puts at the top of every export would guard nothing.
        disable_run_ctors_once_workaround: true,
    });
}

use bindings::exports::tenure::election::node::{Guest, GuestNode};
use bindings::tenure::election::host;
use bindings::tenure::election::types as wit;

#[cfg(target_arch = "wasm32")]
mod heap;

/// Size classes with free lists, growing linear memory on demand (see `heap` for why that is
/// enough here).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: heap::Heap = heap::Heap::new();

#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

struct Component;

impl Guest for Component {
    type Node = NodeResource;

    fn default_config(id: String, cluster: String, seed: u64) -> wit::Config {
        let c = tenure::Config::new(id, cluster);
        wit::Config {
            id: c.id,
            cluster: c.cluster,
            bootstrap: c.bootstrap,
            min_cluster_size: Some(c.min_cluster_size),
            election_timeout_min: c.election_timeout_min,
            election_timeout_max: c.election_timeout_max,
            heartbeat_interval: Some(c.heartbeat_interval),
            lease_duration: c.lease_duration,
            ghost_ttl: Some(c.ghost_ttl),
            pre_vote: Some(c.pre_vote),
            confirm_leader: Some(c.confirm_leader),
            durable: c.durable,
            key: c.key,
            seed,
            restored: None,
            admit_unknown_peers: Some(c.admit_unknown_peers),
            max_peers: Some(c.max_peers),
            max_clock_drift_ppm: Some(c.max_clock_drift_ppm),
            incarnation: c.incarnation,
            value: c.value,
            priority: Some(c.priority),
            never_lead: Some(c.never_lead),
            preempt_after: c.preempt_after,
            observer: Some(c.observer),
            observer_peers: c.observer_peers,
        }
    }
}

/// Whether this instance holds a live node. The `host` imports carry no node identity, so an
/// instance serves one node at a time: the constructor refuses a second one.
static NODE_LIVE: AtomicBool = AtomicBool::new(false);

bindings::export!(Component with_types_in bindings);

/// The exported `node` resource.
pub struct NodeResource {
    core: RefCell<Core>,
    /// The deadline last passed to `set-wakeup`.
    wakeup: Cell<Option<u64>>,
    /// A send's bytes then its peer id, while `send` runs: one buffer for every send, not a
    /// `String` and a `Vec` allocated and freed for each.
    sent: Cell<Vec<u8>>,
}

fn role(r: Role) -> wit::Role {
    match r {
        Role::Unclustered => wit::Role::Unclustered,
        Role::Follower => wit::Role::Follower,
        Role::Candidate => wit::Role::Candidate,
        Role::Leader => wit::Role::Leader,
        Role::Observer => wit::Role::Observer,
    }
}

fn config_error(e: ConfigError) -> wit::ConfigError {
    use wit::ConfigErrorCode as C;
    let code = match e {
        ConfigError::EmptyId { .. } => C::EmptyId,
        ConfigError::IdTooLong { .. } => C::IdTooLong,
        ConfigError::ZeroTimeout { .. } => C::ZeroTimeout,
        ConfigError::MinAboveMax { .. } => C::MinAboveMax,
        ConfigError::HeartbeatNotBelowElectionTimeout { .. } => C::HeartbeatNotBelowElectionTimeout,
        ConfigError::ZeroMinClusterSize => C::ZeroMinClusterSize,
        ConfigError::EmptyKey => C::EmptyKey,
        ConfigError::IdHasWhitespace { .. } => C::IdHasWhitespace,
        ConfigError::TimeoutSpreadTooSmall { .. } => C::TimeoutSpreadTooSmall,
        ConfigError::ClockDriftTooLarge { .. } => C::ClockDriftTooLarge,
        ConfigError::TooManyPeers { .. } => C::TooManyPeers,
        ConfigError::LeaseOutOfRange { .. } => C::LeaseOutOfRange,
        ConfigError::DurationTooLarge { .. } => C::DurationTooLarge,
        ConfigError::ValueTooLong { .. } => C::ValueTooLong,
    };
    wit::ConfigError { code, message: kebab_fields(e.message()) }
}

/// The core's texts name configuration fields in snake_case; the WIT spells them in kebab-case.
/// Configuration errors and warnings carry numbers and field names only (never an id), so every
/// `_` in them is part of a field name. Byte by byte: `str::replace` would link string search.
fn kebab_fields(message: String) -> String {
    kebab_bytes(message, 0, usize::MAX)
}

/// `message` with the `_` of every byte from `start` up to `end` made a `-` (both ASCII, so the
/// text stays UTF-8). Bounds rather than a predicate: one copy of the loop, not one per caller.
fn kebab_bytes(message: String, start: usize, end: usize) -> String {
    let mut bytes = message.into_bytes();
    for (i, b) in bytes.iter_mut().enumerate() {
        if *b == b'_' && (start..end).contains(&i) {
            *b = b'-';
        }
    }
    // SAFETY: `bytes` came from a `String` and only ASCII `_` became ASCII `-`: still UTF-8
    // (checking again would link a second UTF-8 decoder entry for nothing).
    unsafe { String::from_utf8_unchecked(bytes) }
}

/// `message` with the one field name `field` in kebab-case, where other `_` (in a quoted peer
/// id) stay as they are.
fn kebab_field(message: String, field: &str) -> String {
    let at = message.as_bytes().windows(field.len()).position(|w| w == field.as_bytes());
    match at {
        Some(at) => kebab_bytes(message, at, at + field.len()),
        None => message,
    }
}

fn warning(w: &ConfigWarning) -> wit::ConfigWarning {
    let code = match w {
        ConfigWarning::SmallMinClusterSize { .. } => wit::WarningCode::SmallMinClusterSize,
        ConfigWarning::SlowHeartbeat { .. } => wit::WarningCode::SlowHeartbeat,
    };
    wit::ConfigWarning { code, message: kebab_fields(w.message()) }
}

fn node_error(e: Error) -> wit::NodeError {
    use wit::NodeErrorCode as C;
    let code = match e {
        Error::InvalidPeer { .. } => C::InvalidPeer,
        Error::SelfPeer => C::SelfPeer,
        Error::UnknownPeer { .. } => C::UnknownPeer,
        Error::NotLeader => C::NotLeader,
        Error::PayloadTooLarge { .. } => C::PayloadTooLarge,
        Error::NoPendingConfirm { .. } => C::NoPendingConfirm,
        Error::NotLeaderInTerm { .. } => C::NotLeaderInTerm,
        Error::ViewFull { .. } => C::ViewFull,
        Error::ValueTooLong { .. } => C::ValueTooLong,
    };
    // Only `view-full` names a field; its message also quotes a peer id, which may hold a `_`.
    let message = match e {
        Error::ViewFull { .. } => kebab_field(e.message(), "max_peers"),
        _ => e.message(),
    };
    wit::NodeError { code, message }
}

fn drop_reason(r: DropReason) -> wit::DropReason {
    use wit::DropReason as D;
    match r {
        DropReason::Oversized => D::Oversized,
        DropReason::Malformed => D::Malformed,
        DropReason::UnknownVersion => D::UnknownVersion,
        DropReason::WrongCluster => D::WrongCluster,
        DropReason::BadMac => D::BadMac,
        DropReason::SenderMismatch => D::SenderMismatch,
        DropReason::FromSelf => D::FromSelf,
        DropReason::RemovedPeer => D::RemovedPeer,
        DropReason::UnknownPeer => D::UnknownPeer,
        DropReason::ViewFull => D::ViewFull,
        DropReason::ImplausibleTerm => D::ImplausibleTerm,
        DropReason::Replay => D::Replay,
        DropReason::NoticeMismatch => D::NoticeMismatch,
    }
}

impl NodeResource {
    /// Runs one input against the core, then hands every output to the host.
    fn input<T>(&self, now: u64, f: impl FnOnce(&mut Core) -> T) -> T {
        let result = f(&mut self.core.borrow_mut());
        self.drain(now);
        result
    }

    fn drain(&self, now: u64) {
        loop {
            // The borrow ends before the host import runs.
            let mut core = self.core.borrow_mut();
            let Some(output) = core.poll_output_ref() else { break };
            match output {
                OutputRef::Send { to, bytes } => {
                    // Copied out of the core's buffer into the instance's own (taken out of its
                    // cell while the host runs: a re-entrant call finds an empty one).
                    let mut sent = self.sent.take();
                    sent.clear();
                    sent.extend_from_slice(bytes);
                    sent.extend_from_slice(to.as_bytes());
                    let at = bytes.len();
                    drop(core);
                    let (bytes, to) = sent.split_at(at);
                    // SAFETY: the bytes of a `&str`, copied whole.
                    host::send(unsafe { core::str::from_utf8_unchecked(to) }, bytes);
                    self.sent.set(sent);
                }
                OutputRef::Persist(state) => {
                    drop(core);
                    host::persist(&wit::DurableState { term: state.term, voted_for: state.voted_for })
                }
                OutputRef::Event(event) => {
                    drop(core);
                    self.event(now, event)
                }
            }
        }
        let next = self.core.borrow().poll_timeout();
        if next != self.wakeup.get() {
            self.wakeup.set(next);
            host::set_wakeup(next);
        }
    }

    fn event(&self, now: u64, event: Event) {
        match event {
            Event::BecameLeader { term } => {
                if host::became_leader(term).is_err() {
                    // Only fails if leadership already moved on, which cannot happen in between.
                    let _ = self.core.borrow_mut().leader_handler_failed(now, term);
                }
            }
            Event::BecameFollower { term, leader } => host::became_follower(term, leader.as_deref()),
            Event::PeerJoined { peer } => host::peer_joined(&peer),
            Event::PeerLeft { peer } => host::peer_left(&peer),
            Event::Message { from, payload } => host::message(&from, &payload),
            Event::ConfirmLeader { term } => {
                let granted = match host::confirm_leader(term) {
                    wit::ConfirmAnswer::Grant => true,
                    wit::ConfirmAnswer::Deny => false,
                    wit::ConfirmAnswer::Defer => return,
                };
                // Fails only if the confirmation is no longer pending (the host answered it
                // itself through a re-entrant call): nothing left to do then.
                let _ = self.core.borrow_mut().confirm_leader(now, term, granted);
            }
        }
    }
}

impl Drop for NodeResource {
    fn drop(&mut self) {
        NODE_LIVE.store(false, Ordering::Relaxed);
    }
}

impl GuestNode for NodeResource {
    fn new(config: wit::Config, now: u64) -> Result<Self, wit::ConfigError> {
        if NODE_LIVE.load(Ordering::Relaxed) {
            return Err(wit::ConfigError {
                code: wit::ConfigErrorCode::InstanceInUse,
                message: "this component instance already holds a live node: instantiate the component once per node"
                    .to_string(),
            });
        }
        // Every field at once, the WIT's absent options as `Config::new`'s defaults (the core's
        // constants; an absent switch or priority is off, its type's default): assigning over
        // `Config::new`'s fields would drop each default first (code for nothing).
        let c = tenure::Config {
            id: config.id,
            cluster: config.cluster,
            bootstrap: config.bootstrap,
            min_cluster_size: config.min_cluster_size.unwrap_or(tenure::DEFAULT_MIN_CLUSTER_SIZE),
            election_timeout_min: config.election_timeout_min,
            election_timeout_max: config.election_timeout_max,
            heartbeat_interval: config.heartbeat_interval.unwrap_or(tenure::DEFAULT_HEARTBEAT_INTERVAL),
            lease_duration: config.lease_duration,
            ghost_ttl: config.ghost_ttl.unwrap_or(tenure::DEFAULT_GHOST_TTL),
            pre_vote: config.pre_vote.unwrap_or(tenure::DEFAULT_PRE_VOTE),
            confirm_leader: config.confirm_leader.unwrap_or(tenure::DEFAULT_CONFIRM_LEADER),
            durable: config.durable,
            key: config.key,
            admit_unknown_peers: config.admit_unknown_peers.unwrap_or_default(),
            max_peers: config.max_peers.unwrap_or(tenure::DEFAULT_MAX_PEERS),
            max_clock_drift_ppm: config.max_clock_drift_ppm.unwrap_or(tenure::DEFAULT_MAX_CLOCK_DRIFT_PPM),
            incarnation: config.incarnation,
            value: config.value,
            priority: config.priority.unwrap_or_default(),
            never_lead: config.never_lead.unwrap_or_default(),
            preempt_after: config.preempt_after,
            observer: config.observer.unwrap_or_default(),
            observer_peers: config.observer_peers,
        };
        let restored = config.restored.map(|s| DurableState { term: s.term, voted_for: s.voted_for });
        let core = Core::new(c, config.seed, restored, now).map_err(config_error)?;
        let node = NodeResource { core: RefCell::new(core), wakeup: Cell::new(None), sent: Cell::new(Vec::new()) };
        NODE_LIVE.store(true, Ordering::Relaxed);
        node.drain(now);
        Ok(node)
    }

    fn handle_message(&self, now: u64, sender: String, bytes: Vec<u8>) -> Result<(), wit::DropReason> {
        self.input(now, |n| n.handle_message(now, &sender, &bytes)).map_err(drop_reason)
    }

    fn handle_timeout(&self, now: u64) {
        self.input(now, |n| n.handle_timeout(now))
    }

    fn join(&self, now: u64, peer: String) -> Result<(), wit::NodeError> {
        self.input(now, |n| n.join(now, &peer)).map_err(node_error)
    }

    fn leave(&self, now: u64, peer: String) -> Result<(), wit::NodeError> {
        self.input(now, |n| n.leave(now, &peer)).map_err(node_error)
    }

    fn peer_down(&self, now: u64, peer: String, reason: wit::PeerDownReason) -> Result<(), wit::NodeError> {
        let reason = match reason {
            wit::PeerDownReason::Terminated => PeerDownReason::Terminated,
            wit::PeerDownReason::NoConnection => PeerDownReason::NoConnection,
            wit::PeerDownReason::Refused => PeerDownReason::Refused,
        };
        self.input(now, |n| n.peer_down(now, &peer, reason)).map_err(node_error)
    }

    fn transfer_leadership(&self, now: u64, peer: String) -> Result<(), wit::NodeError> {
        self.input(now, |n| n.transfer_leadership(now, &peer)).map_err(node_error)
    }

    fn transfer_target(&self) -> Option<String> {
        self.core.borrow().transfer_target().map(String::from)
    }

    fn broadcast(&self, now: u64, payload: Vec<u8>) -> Result<(), wit::NodeError> {
        self.input(now, |n| n.broadcast(now, &payload)).map_err(node_error)
    }

    fn proclaim(&self, now: u64, value: String) -> Result<(), wit::NodeError> {
        self.input(now, |n| n.proclaim(now, &value)).map_err(node_error)
    }

    fn confirm_leader(&self, now: u64, term: u64, granted: bool) -> Result<(), wit::NodeError> {
        self.input(now, |n| n.confirm_leader(now, term, granted)).map_err(node_error)
    }

    fn leader_handler_failed(&self, now: u64, term: u64) -> Result<(), wit::NodeError> {
        self.input(now, |n| n.leader_handler_failed(now, term)).map_err(node_error)
    }

    fn id(&self) -> String {
        String::from(self.core.borrow().id())
    }

    fn role(&self) -> wit::Role {
        role(self.core.borrow().role())
    }

    fn term(&self) -> u64 {
        self.core.borrow().term()
    }

    fn leader(&self) -> Option<String> {
        self.core.borrow().leader().map(String::from)
    }

    fn leader_value(&self) -> Option<String> {
        self.core.borrow().leader_value().map(str::to_string)
    }

    fn is_leader(&self) -> bool {
        self.core.borrow().is_leader()
    }

    fn voted_for(&self) -> Option<String> {
        self.core.borrow().voted_for().map(String::from)
    }

    fn fencing_token(&self) -> Option<u64> {
        self.core.borrow().fencing_token()
    }

    fn lease_deadline(&self) -> Option<u64> {
        self.core.borrow().lease_deadline()
    }

    fn poll_timeout(&self) -> Option<u64> {
        self.wakeup.get()
    }

    fn view(&self) -> Vec<String> {
        self.core.borrow().view()
    }

    fn death_notices(&self) -> Vec<(String, Vec<u8>)> {
        self.core.borrow().death_notices()
    }

    fn warnings(&self) -> Vec<wit::ConfigWarning> {
        let core = self.core.borrow();
        let mut out = Vec::new();
        for w in core.warnings() {
            out.push(warning(w));
        }
        out
    }

    fn inspect(&self) -> wit::Inspect {
        // The role and the drop counters go out as WIT enums (below), so the core leaves their
        // names out. Those two fields and the per-peer times (native only) come back empty,
        // unallocated (`Vec::new`, `String::new`): nothing to free, no drop code to carry.
        let i = self.core.borrow().inspect_unnamed();
        debug_assert!(i.peer_heard_at.is_empty() && i.peer_acked_at.is_empty());
        debug_assert!(i.state.is_empty() && i.dropped_by_reason.is_empty());
        core::mem::forget((i.peer_heard_at, i.peer_acked_at, i.state, i.dropped_by_reason));
        wit::Inspect {
            id: i.id,
            state: role(self.core.borrow().role()),
            is_leader: i.is_leader,
            leader: i.leader,
            term: i.term,
            voted_for: i.voted_for,
            term_changed_at: i.term_changed_at,
            cluster: i.cluster,
            view_size: i.view_size,
            quorum: i.quorum,
            min_cluster_size: i.min_cluster_size,
            peers: i.peers,
            declared: i.declared,
            bootstrap: i.bootstrap,
            unreachable: i.unreachable,
            ghost_ttl: i.ghost_ttl,
            votes_granted: i.votes_granted,
            votes_count: i.votes_count,
            election_timer_armed: i.election_timer_armed,
            heartbeat_timer_armed: i.heartbeat_timer_armed,
            heartbeat_in_last: i.heartbeat_in_last,
            heartbeat_out_last: i.heartbeat_out_last,
            election_timeout_min: i.election_timeout_min,
            election_timeout_max: i.election_timeout_max,
            heartbeat_interval: i.heartbeat_interval,
            dropped_by_reason: {
                let core = self.core.borrow();
                DropReason::ALL.iter().map(|&r| (drop_reason(r), core.dropped(r))).collect()
            },
            send_failing_peers: i.send_failing_peers,
            confirm_denied: i.confirm_denied,
            last_denied_at: i.last_denied_at,
            lease_deadline: i.lease_deadline,
        }
    }
}
