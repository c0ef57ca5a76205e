//! Hosts the tenure WebAssembly component (`tenure:election`) under wasmtime.
//!
//! [`Loader`] compiles the component once; [`ComponentNode`] instantiates it and drives its
//! exported `node` resource. The node's outputs reach a [`Callbacks`] implementation while the
//! call into the node is running, in the order the core produced them. A callback must not call
//! back into the same node (wasmtime traps on re-entry): it records or queues instead, and the
//! host acts after the call returned (see `ComponentNode::callbacks_mut`).
//!
//! Every call returns `wasmtime::Result<…>`: `Err` is a trap (a guest panic, or a callback that
//! failed, such as `persist`), after which the node refuses every further call with an error
//! instead of running on in an unknown state.

use std::path::Path;

use wasmtime::component::{Component, HasSelf, Linker, ResourceAny};
use wasmtime::error::Context as _;
use wasmtime::{bail, format_err};
use wasmtime::{Config, Engine, Store};

mod engine;
pub use engine::{ComponentEngine, Queue};

mod generated {
    wasmtime::component::bindgen!({
        world: "election",
        path: "../../../wit",
        imports: { default: trappable },
        additional_derives: [PartialEq, Eq],
    });
}

pub use generated::exports::tenure::election::node::Guest as NodeExports;
pub use generated::tenure::election::types::{
    Config as NodeConfig, ConfigError, ConfigErrorCode, ConfigWarning, ConfirmAnswer, DropReason, DurableState,
    Inspect, LeaderRefusal, NodeError, NodeErrorCode, PeerDownReason, Role, WarningCode,
};
use generated::Election;

/// The path of the component built by this crate's build script (or `TENURE_COMPONENT_WASM`).
pub const COMPONENT_PATH: &str = env!("TENURE_COMPONENT_WASM");

/// What the host does with the node's outputs. Every method runs inside a call into the node:
/// none may call back into it.
pub trait Callbacks: Send + 'static {
    /// Transmit `bytes` to peer `to`.
    fn send(&mut self, to: &str, bytes: Vec<u8>);
    /// Wake the node (`handle_timeout`) at `deadline`; `None` cancels.
    fn set_wakeup(&mut self, deadline: Option<u64>);
    /// Make the pair durable before returning; an `Err` traps the node (it must not go on).
    fn persist(&mut self, state: &DurableState) -> Result<(), String>;
    /// This node leads `term`. An `Err` rolls leadership back.
    fn became_leader(&mut self, term: u64) -> Result<(), LeaderRefusal>;
    /// This node follows `leader` (or nobody known) in `term`.
    fn became_follower(&mut self, term: u64, leader: Option<&str>);
    /// The node won `term`: grant, deny, or defer (answer later with `confirm_leader`).
    fn confirm_leader(&mut self, term: u64) -> ConfirmAnswer;
    /// A peer entered the view.
    fn peer_joined(&mut self, peer: &str);
    /// A peer left the view.
    fn peer_left(&mut self, peer: &str);
    /// An application payload from `from`.
    fn message(&mut self, from: &str, payload: Vec<u8>);
}

struct HostState<C> {
    callbacks: C,
    memory: MemoryWatch,
}

/// Records the largest linear memory the instance asked for (wasmtime calls it for the initial
/// memory too); never refuses growth.
#[derive(Default)]
struct MemoryWatch {
    largest: usize,
}

impl wasmtime::ResourceLimiter for MemoryWatch {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.largest = self.largest.max(desired);
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, _desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(true)
    }
}

impl<C: Callbacks> generated::tenure::election::types::Host for HostState<C> {}

impl<C: Callbacks> generated::tenure::election::host::Host for HostState<C> {
    fn send(&mut self, to: String, bytes: Vec<u8>) -> wasmtime::Result<()> {
        self.callbacks.send(&to, bytes);
        Ok(())
    }
    fn set_wakeup(&mut self, deadline: Option<u64>) -> wasmtime::Result<()> {
        self.callbacks.set_wakeup(deadline);
        Ok(())
    }
    fn persist(&mut self, state: DurableState) -> wasmtime::Result<()> {
        self.callbacks.persist(&state).map_err(|e| format_err!("persist failed: {e}"))
    }
    fn became_leader(&mut self, term: u64) -> wasmtime::Result<Result<(), LeaderRefusal>> {
        Ok(self.callbacks.became_leader(term))
    }
    fn became_follower(&mut self, term: u64, leader: Option<String>) -> wasmtime::Result<()> {
        self.callbacks.became_follower(term, leader.as_deref());
        Ok(())
    }
    fn confirm_leader(&mut self, term: u64) -> wasmtime::Result<ConfirmAnswer> {
        Ok(self.callbacks.confirm_leader(term))
    }
    fn peer_joined(&mut self, peer: String) -> wasmtime::Result<()> {
        self.callbacks.peer_joined(&peer);
        Ok(())
    }
    fn peer_left(&mut self, peer: String) -> wasmtime::Result<()> {
        self.callbacks.peer_left(&peer);
        Ok(())
    }
    fn message(&mut self, sender: String, payload: Vec<u8>) -> wasmtime::Result<()> {
        self.callbacks.message(&sender, payload);
        Ok(())
    }
}

/// A compiled component and a linker for callbacks of type `C`: compile once, instantiate many.
/// Cloning is cheap (the compiled code is shared).
pub struct Loader<C: 'static> {
    engine: Engine,
    component: Component,
    linker: Linker<HostState<C>>,
}

impl<C> Clone for Loader<C> {
    fn clone(&self) -> Self {
        Loader { engine: self.engine.clone(), component: self.component.clone(), linker: self.linker.clone() }
    }
}

impl<C: Callbacks> Loader<C> {
    /// Compiles the component at `path`.
    pub fn from_file(path: impl AsRef<Path>) -> wasmtime::Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).with_context(|| format!("reading the component {}", path.display()))?;
        Self::from_bytes(&bytes)
    }

    /// Loads the component built with this crate ([`COMPONENT_PATH`]). The machine code that
    /// cranelift makes from it is cached next to it (in this crate's build output directory,
    /// keyed by the component's bytes and the engine's compatibility hash), so that only the
    /// first start-up pays for the compilation (seconds in a debug build).
    pub fn built() -> wasmtime::Result<Self> {
        let path = Path::new(COMPONENT_PATH);
        let bytes = std::fs::read(path).with_context(|| format!("reading the component {}", path.display()))?;
        let engine = Self::engine()?;
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            engine.precompile_compatibility_hash().hash(&mut h);
            h.finish()
        };
        let cached = path.with_file_name(format!("tenure-{key:016x}.cwasm"));
        if cached.exists() {
            // SAFETY: the file is machine code that this crate serialized itself, into its own
            // build output directory (not a shared temporary directory), for this exact
            // component and engine configuration; wasmtime checks the engine compatibility too.
            if let Ok(component) = unsafe { Component::deserialize_file(&engine, &cached) } {
                return Self::with_component(engine, component);
            }
        }
        let component = Component::from_binary(&engine, &bytes).context("compiling the component")?;
        if let Ok(code) = component.serialize() {
            // Write-then-rename, so that processes starting together never read a partial file.
            let tmp = cached.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, code).is_ok() && std::fs::rename(&tmp, &cached).is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
        }
        Self::with_component(engine, component)
    }

    /// Compiles a component from its bytes.
    pub fn from_bytes(bytes: &[u8]) -> wasmtime::Result<Self> {
        let engine = Self::engine()?;
        let component = Component::from_binary(&engine, bytes).context("compiling the component")?;
        Self::with_component(engine, component)
    }

    fn engine() -> wasmtime::Result<Engine> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        Engine::new(&config)
    }

    fn with_component(engine: Engine, component: Component) -> wasmtime::Result<Self> {
        let mut linker = Linker::new(&engine);
        Election::add_to_linker::<_, HasSelf<_>>(&mut linker, |s: &mut HostState<C>| s)?;
        Ok(Loader { engine, component, linker })
    }
}

/// One node running inside its own instance of the component.
pub struct ComponentNode<C: Callbacks> {
    store: Store<HostState<C>>,
    bindings: Election,
    node: ResourceAny,
    trapped: Option<String>,
}

/// The outcome of a call: `Err` is a trap (see the crate docs); `Ok` holds the node's answer.
pub type Call<T> = wasmtime::Result<T>;

impl<C: Callbacks> ComponentNode<C> {
    /// Instantiates the component and constructs a node at `now`. The outer `Err` is a trap or
    /// instantiation failure; the inner one is a configuration the node refused.
    pub fn new(loader: &Loader<C>, callbacks: C, config: &NodeConfig, now: u64) -> Call<Result<Self, ConfigError>> {
        let mut store = Store::new(&loader.engine, HostState { callbacks, memory: MemoryWatch::default() });
        store.limiter(|s| &mut s.memory);
        let bindings = Election::instantiate(&mut store, &loader.component, &loader.linker)?;
        let created = bindings.tenure_election_node().node().call_constructor(&mut store, config, now)?;
        Ok(created.map(|node| ComponentNode { store, bindings, node, trapped: None }))
    }

    /// The callbacks (for the host to inspect or act on queued work between calls).
    pub fn callbacks(&self) -> &C {
        &self.store.data().callbacks
    }

    /// The callbacks, mutably.
    pub fn callbacks_mut(&mut self) -> &mut C {
        &mut self.store.data_mut().callbacks
    }

    /// The size in bytes of the instance's linear memory: the guest's heap never shrinks it, so this
    /// is its high-water mark (a steady workload must leave it unchanged).
    pub fn memory_bytes(&self) -> usize {
        self.store.data().memory.largest
    }

    /// The trap that stopped this node, if one did.
    pub fn trapped(&self) -> Option<&str> {
        self.trapped.as_deref()
    }

    fn call<T>(
        &mut self,
        f: impl FnOnce(
            &generated::exports::tenure::election::node::GuestNode<'_>,
            &mut Store<HostState<C>>,
            ResourceAny,
        ) -> wasmtime::Result<T>,
    ) -> Call<T> {
        if let Some(t) = &self.trapped {
            bail!("the component trapped earlier and cannot be used: {t}");
        }
        let guest = self.bindings.tenure_election_node().node();
        match f(&guest, &mut self.store, self.node) {
            Ok(v) => Ok(v),
            Err(e) => {
                self.trapped = Some(format!("{e:#}"));
                Err(format_err!("the component trapped: {e:#}"))
            }
        }
    }

    /// A datagram from `from`.
    pub fn handle_message(&mut self, now: u64, from: &str, bytes: &[u8]) -> Call<Result<(), DropReason>> {
        self.call(|g, s, n| g.call_handle_message(s, n, now, from, bytes))
    }
    /// The wake-up deadline passed.
    pub fn handle_timeout(&mut self, now: u64) -> Call<()> {
        self.call(|g, s, n| g.call_handle_timeout(s, n, now))
    }
    /// Declares a peer.
    pub fn join(&mut self, now: u64, peer: &str) -> Call<Result<(), NodeError>> {
        self.call(|g, s, n| g.call_join(s, n, now, peer))
    }
    /// Withdraws a peer.
    pub fn leave(&mut self, now: u64, peer: &str) -> Call<Result<(), NodeError>> {
        self.call(|g, s, n| g.call_leave(s, n, now, peer))
    }
    /// Reports a peer down.
    pub fn peer_down(&mut self, now: u64, peer: &str, reason: PeerDownReason) -> Call<Result<(), NodeError>> {
        self.call(|g, s, n| g.call_peer_down(s, n, now, peer, reason))
    }
    /// Hands leadership to `peer`.
    pub fn transfer_leadership(&mut self, now: u64, peer: &str) -> Call<Result<(), NodeError>> {
        self.call(|g, s, n| g.call_transfer_leadership(s, n, now, peer))
    }
    /// The peer a graceful stop should hand leadership to.
    pub fn transfer_target(&mut self) -> Call<Option<String>> {
        self.call(|g, s, n| g.call_transfer_target(s, n))
    }
    /// Sends a payload to every member of the view.
    pub fn broadcast(&mut self, now: u64, payload: &[u8]) -> Call<Result<(), NodeError>> {
        self.call(|g, s, n| g.call_broadcast(s, n, now, payload))
    }
    /// Changes the value this node proclaims while it leads.
    pub fn proclaim(&mut self, now: u64, value: &str) -> Call<Result<(), NodeError>> {
        self.call(|g, s, n| g.call_proclaim(s, n, now, value))
    }
    /// Answers a deferred `confirm_leader`.
    pub fn confirm_leader(&mut self, now: u64, term: u64, granted: bool) -> Call<Result<(), NodeError>> {
        self.call(|g, s, n| g.call_confirm_leader(s, n, now, term, granted))
    }
    /// Rolls back leadership of `term`.
    pub fn leader_handler_failed(&mut self, now: u64, term: u64) -> Call<Result<(), NodeError>> {
        self.call(|g, s, n| g.call_leader_handler_failed(s, n, now, term))
    }
    /// This node's id.
    pub fn id(&mut self) -> Call<String> {
        self.call(|g, s, n| g.call_id(s, n))
    }
    /// The role.
    pub fn role(&mut self) -> Call<Role> {
        self.call(|g, s, n| g.call_role(s, n))
    }
    /// The term.
    pub fn term(&mut self) -> Call<u64> {
        self.call(|g, s, n| g.call_term(s, n))
    }
    /// The leader known in the current term.
    pub fn leader(&mut self) -> Call<Option<String>> {
        self.call(|g, s, n| g.call_leader(s, n))
    }
    /// The value the leader proclaims, as this node knows it.
    pub fn leader_value(&mut self) -> Call<Option<String>> {
        self.call(|g, s, n| g.call_leader_value(s, n))
    }
    /// Whether this node leads.
    pub fn is_leader(&mut self) -> Call<bool> {
        self.call(|g, s, n| g.call_is_leader(s, n))
    }
    /// Whom this node voted for in the current term.
    pub fn voted_for(&mut self) -> Call<Option<String>> {
        self.call(|g, s, n| g.call_voted_for(s, n))
    }
    /// The fencing token while leading.
    pub fn fencing_token(&mut self) -> Call<Option<u64>> {
        self.call(|g, s, n| g.call_fencing_token(s, n))
    }
    /// The leadership validity deadline while leading.
    pub fn lease_deadline(&mut self) -> Call<Option<u64>> {
        self.call(|g, s, n| g.call_lease_deadline(s, n))
    }
    /// The next wake-up deadline.
    pub fn poll_timeout(&mut self) -> Call<Option<u64>> {
        self.call(|g, s, n| g.call_poll_timeout(s, n))
    }
    /// This node and every peer it counts, sorted.
    pub fn view(&mut self) -> Call<Vec<String>> {
        self.call(|g, s, n| g.call_view(s, n))
    }
    /// Configuration warnings.
    pub fn warnings(&mut self) -> Call<Vec<ConfigWarning>> {
        self.call(|g, s, n| g.call_warnings(s, n))
    }
    /// While leading: this leadership's death notices, as (peer, datagram).
    pub fn death_notices(&mut self) -> Call<Vec<(String, Vec<u8>)>> {
        self.call(|g, s, n| g.call_death_notices(s, n))
    }
    /// The whole election state.
    pub fn inspect(&mut self) -> Call<Inspect> {
        self.call(|g, s, n| g.call_inspect(s, n))
    }

    /// The exported `default-config`: the core's defaults for `id` in `cluster`, seeded `seed`.
    pub fn default_config(&mut self, id: &str, cluster: &str, seed: u64) -> Call<NodeConfig> {
        if let Some(t) = &self.trapped {
            bail!("the component trapped earlier and cannot be used: {t}");
        }
        self.bindings.tenure_election_node().call_default_config(&mut self.store, id, cluster, seed)
    }

    /// Calls the constructor again in this node's instance: the component refuses (one node per
    /// instance, `instance-in-use`). For tests of that contract.
    pub fn construct_another(&mut self, config: &NodeConfig, now: u64) -> Call<Result<(), ConfigError>> {
        let created = self.bindings.tenure_election_node().node().call_constructor(&mut self.store, config, now)?;
        Ok(match created {
            Ok(other) => {
                other.resource_drop(&mut self.store)?;
                Ok(())
            }
            Err(e) => Err(e),
        })
    }
}

impl<C: Callbacks> Drop for ComponentNode<C> {
    fn drop(&mut self) {
        if self.trapped.is_none() {
            let _ = self.node.resource_drop(&mut self.store);
        }
    }
}

/// A component config that leaves every option to the guest's default, as the core's
/// `Config::new` does: not durable, no key, no restored state. Set fields on the result (struct
/// update syntax) for anything else.
pub fn default_node_config(id: &str, cluster: &str, bootstrap: &[String], seed: u64) -> NodeConfig {
    NodeConfig {
        id: id.to_string(),
        cluster: cluster.to_string(),
        bootstrap: bootstrap.to_vec(),
        min_cluster_size: None,
        election_timeout_min: None,
        election_timeout_max: None,
        heartbeat_interval: None,
        lease_duration: None,
        ghost_ttl: None,
        pre_vote: None,
        confirm_leader: None,
        durable: false,
        key: None,
        seed,
        restored: None,
        admit_unknown_peers: None,
        max_peers: None,
        max_clock_drift_ppm: None,
        incarnation: None,
        value: None,
        priority: None,
        never_lead: None,
        preempt_after: None,
        observer: None,
        observer_peers: Vec::new(),
    }
}

/// Builds a component config from the core's [`tenure::Config`] (as produced by the shared
/// command line), a seed and the restored durable state.
pub fn node_config(c: &tenure::Config, seed: u64, restored: Option<tenure::DurableState>) -> NodeConfig {
    NodeConfig {
        id: c.id.clone(),
        cluster: c.cluster.clone(),
        bootstrap: c.bootstrap.clone(),
        min_cluster_size: Some(c.min_cluster_size),
        election_timeout_min: c.election_timeout_min,
        election_timeout_max: c.election_timeout_max,
        heartbeat_interval: Some(c.heartbeat_interval),
        lease_duration: c.lease_duration,
        ghost_ttl: Some(c.ghost_ttl),
        pre_vote: Some(c.pre_vote),
        confirm_leader: Some(c.confirm_leader),
        durable: c.durable,
        key: c.key.clone(),
        seed,
        restored: restored.map(|s| DurableState { term: s.term, voted_for: s.voted_for }),
        admit_unknown_peers: Some(c.admit_unknown_peers),
        max_peers: Some(c.max_peers),
        max_clock_drift_ppm: Some(c.max_clock_drift_ppm),
        incarnation: c.incarnation,
        value: c.value.clone(),
        priority: Some(c.priority),
        never_lead: Some(c.never_lead),
        preempt_after: c.preempt_after,
        observer: Some(c.observer),
        observer_peers: c.observer_peers.clone(),
    }
}

/// A `role` as the core's lower-case name (the core's own table, through [`core_role`]).
pub fn role_name(r: Role) -> &'static str {
    core_role(r).as_str()
}

/// A component `role` as the core's [`tenure::Role`].
pub fn core_role(r: Role) -> tenure::Role {
    match r {
        Role::Unclustered => tenure::Role::Unclustered,
        Role::Follower => tenure::Role::Follower,
        Role::Candidate => tenure::Role::Candidate,
        Role::Leader => tenure::Role::Leader,
        Role::Observer => tenure::Role::Observer,
    }
}

/// The component's inspect record as the core's `Inspect` (so that it renders through the same
/// code, `inspect` lines included, as in every other runtime).
pub fn core_inspect(i: Inspect) -> tenure::Inspect {
    tenure::Inspect {
        id: i.id,
        state: role_name(i.state).to_string(),
        is_leader: i.is_leader,
        leader: i.leader,
        // Not in the WIT's inspect record: the engine reads it with `leader-value`.
        leader_value: None,
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
            // The component lists the reasons in `drop-reason` order, the core by name.
            let mut d: Vec<(String, u64)> = i
                .dropped_by_reason
                .into_iter()
                .map(|(reason, count)| (drop_reason_name(reason).to_string(), count))
                .collect();
            d.sort();
            d
        },
        send_failing_peers: i.send_failing_peers,
        confirm_denied: i.confirm_denied,
        last_denied_at: i.last_denied_at,
        lease_deadline: i.lease_deadline,
        // Not in the component's record (its size budget): the runtime tracks when it last
        // heard each peer itself; acknowledgements are not shown for this engine.
        peer_heard_at: Vec::new(),
        peer_acked_at: Vec::new(),
        // Not in the WIT's inspect record (its size budget): the engine adds its own rank from
        // its configuration; what it learned of the others' is not shown for this engine.
        priority: 0,
        never_lead: false,
        peer_priorities: Vec::new(),
    }
}

/// The component's `peer-down-reason` for the core's [`tenure::PeerDownReason`] (whose
/// `from_name` / `as_str` are the one table of names).
pub fn peer_down_reason(r: tenure::PeerDownReason) -> PeerDownReason {
    match r {
        tenure::PeerDownReason::Terminated => PeerDownReason::Terminated,
        tenure::PeerDownReason::NoConnection => PeerDownReason::NoConnection,
        tenure::PeerDownReason::Refused => PeerDownReason::Refused,
    }
}

/// A drop reason as the core's snake_case name (the core's own table, through
/// [`core_drop_reason`]).
pub fn drop_reason_name(r: DropReason) -> &'static str {
    core_drop_reason(r).as_str()
}

/// A component drop reason as the core's [`tenure::DropReason`].
pub fn core_drop_reason(r: DropReason) -> tenure::DropReason {
    match r {
        DropReason::Oversized => tenure::DropReason::Oversized,
        DropReason::Malformed => tenure::DropReason::Malformed,
        DropReason::UnknownVersion => tenure::DropReason::UnknownVersion,
        DropReason::WrongCluster => tenure::DropReason::WrongCluster,
        DropReason::BadMac => tenure::DropReason::BadMac,
        DropReason::SenderMismatch => tenure::DropReason::SenderMismatch,
        DropReason::FromSelf => tenure::DropReason::FromSelf,
        DropReason::RemovedPeer => tenure::DropReason::RemovedPeer,
        DropReason::UnknownPeer => tenure::DropReason::UnknownPeer,
        DropReason::ViewFull => tenure::DropReason::ViewFull,
        DropReason::ImplausibleTerm => tenure::DropReason::ImplausibleTerm,
        DropReason::Replay => tenure::DropReason::Replay,
        DropReason::NoticeMismatch => tenure::DropReason::NoticeMismatch,
    }
}

/// A node error code as the core's snake_case `Error::code()` (the core's own table, through the
/// conversion `tenure-wasmtime` uses).
pub fn node_error_name(c: NodeErrorCode) -> &'static str {
    engine::core_error(&NodeError { code: c, message: String::new() }, engine::Args::default()).code()
}

/// One callback, recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// `send`.
    Send {
        /// Destination.
        to: String,
        /// Bytes.
        bytes: Vec<u8>,
    },
    /// `set-wakeup`.
    SetWakeup(Option<u64>),
    /// `persist`.
    Persist(DurableState),
    /// `became-leader`.
    BecameLeader(u64),
    /// `became-follower`.
    BecameFollower(u64, Option<String>),
    /// `confirm-leader`.
    ConfirmLeader(u64),
    /// `peer-joined`.
    PeerJoined(String),
    /// `peer-left`.
    PeerLeft(String),
    /// `message`.
    Message(String, Vec<u8>),
}

/// A [`Callbacks`] that records every call, answers `confirm-leader` with a fixed answer and
/// `became-leader` with `Ok` (or a fixed error): for tests, simulations and replays.
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Everything the node called, in order (the host drains it between calls).
    pub records: Vec<Record>,
    /// The answer to `confirm-leader`.
    pub confirm: ConfirmAnswer,
    /// When set, `became-leader` refuses leadership for this reason.
    pub fail_leadership: Option<LeaderRefusal>,
    /// When set, `persist` fails (traps the node) with this message.
    pub fail_persist: Option<String>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder { records: Vec::new(), confirm: ConfirmAnswer::Grant, fail_leadership: None, fail_persist: None }
    }
}

impl Callbacks for Recorder {
    fn send(&mut self, to: &str, bytes: Vec<u8>) {
        self.records.push(Record::Send { to: to.to_string(), bytes });
    }
    fn set_wakeup(&mut self, deadline: Option<u64>) {
        self.records.push(Record::SetWakeup(deadline));
    }
    fn persist(&mut self, state: &DurableState) -> Result<(), String> {
        if let Some(e) = &self.fail_persist {
            return Err(e.clone());
        }
        self.records.push(Record::Persist(state.clone()));
        Ok(())
    }
    fn became_leader(&mut self, term: u64) -> Result<(), LeaderRefusal> {
        self.records.push(Record::BecameLeader(term));
        match self.fail_leadership {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
    fn became_follower(&mut self, term: u64, leader: Option<&str>) {
        self.records.push(Record::BecameFollower(term, leader.map(str::to_string)));
    }
    fn confirm_leader(&mut self, term: u64) -> ConfirmAnswer {
        self.records.push(Record::ConfirmLeader(term));
        self.confirm
    }
    fn peer_joined(&mut self, peer: &str) {
        self.records.push(Record::PeerJoined(peer.to_string()));
    }
    fn peer_left(&mut self, peer: &str) {
        self.records.push(Record::PeerLeft(peer.to_string()));
    }
    fn message(&mut self, from: &str, payload: Vec<u8>) {
        self.records.push(Record::Message(from.to_string(), payload));
    }
}
