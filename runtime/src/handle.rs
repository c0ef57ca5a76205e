//! [`Handle`]: the application's side of a running runtime (`Send + Sync`, cheap to clone).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, OnceLock};
use std::thread::{JoinHandle, ThreadId};
use std::time::Instant;

use tenure::{Inspect, PeerDownReason, Role};

use crate::config::parse_peer;
use crate::metrics::{Counters, Metrics};
use crate::{Clock, LeaderWorkVerdict, RuntimeError};

pub(crate) type Reply<T> = Option<mpsc::Sender<Result<T, RuntimeError>>>;

/// A request to the runtime thread.
pub(crate) enum Command {
    Transfer(Option<String>, Reply<()>),
    Inspect(Reply<Inspect>),
    Broadcast(Vec<u8>, Reply<()>),
    Proclaim(String, Reply<()>),
    Join(String, Reply<()>),
    Leave(String, Reply<()>),
    PeerDown(String, PeerDownReason, Reply<()>),
    ConfirmLeader(u64, bool, Reply<()>),
    /// (term, the whole leadership failed).
    LeaderWorkFailed(u64, bool, Reply<LeaderWorkVerdict>),
    /// Stop gracefully; `Some(ms)` overrides the configured handover timeout.
    Stop(Option<u64>),
    /// From a helper thread of the runtime's (the pod label): a warning to deliver.
    #[cfg_attr(not(feature = "kubernetes"), allow(dead_code))]
    Warning {
        code: String,
        message: String,
    },
    /// From the resolver thread: the addresses of a name (`Err`: why the lookup failed).
    Resolved {
        name: String,
        result: Result<Vec<SocketAddr>, String>,
    },
}

const NO_LEASE: u64 = u64::MAX;

/// What the runtime thread publishes after every round, for cheap reads from any thread.
pub(crate) struct Snapshot {
    pub(crate) role: AtomicU8,
    pub(crate) term: AtomicU64,
    pub(crate) lease: AtomicU64,
    pub(crate) leader: Mutex<Option<String>>,
    /// The value the leader proclaims, as this node knows it (`Node::leader_value`).
    pub(crate) leader_value: Mutex<Option<String>>,
    /// Called on the runtime thread when the role, the term or the lease changed, and when the
    /// runtime ends: threads that follow leadership wait for these instead of polling.
    watchers: Mutex<Vec<Box<dyn Fn() + Send + Sync>>>,
}

pub(crate) fn role_code(r: Role) -> u8 {
    match r {
        Role::Unclustered => 0,
        Role::Follower => 1,
        Role::Candidate => 2,
        Role::Leader => 3,
        Role::Observer => 4,
    }
}

impl Snapshot {
    pub(crate) fn new(term: u64) -> Self {
        Snapshot {
            role: AtomicU8::new(role_code(Role::Follower)),
            term: AtomicU64::new(term),
            lease: AtomicU64::new(NO_LEASE),
            leader: Mutex::new(None),
            leader_value: Mutex::new(None),
            watchers: Mutex::new(Vec::new()),
        }
    }
    pub(crate) fn publish(
        &self,
        role: Role,
        term: u64,
        leader: Option<String>,
        leader_value: Option<String>,
        lease: Option<u64>,
    ) {
        let role = role_code(role);
        let lease = lease.unwrap_or(NO_LEASE);
        let changed = (self.role.swap(role, Ordering::AcqRel) != role)
            | (self.term.swap(term, Ordering::AcqRel) != term)
            | (self.lease.swap(lease, Ordering::AcqRel) != lease);
        let mut l = self.leader.lock().unwrap_or_else(|p| p.into_inner());
        if *l != leader {
            *l = leader;
        }
        drop(l);
        let mut v = self.leader_value.lock().unwrap_or_else(|p| p.into_inner());
        if *v != leader_value {
            *v = leader_value;
        }
        drop(v);
        if changed {
            self.notify();
        }
    }
    // Read by the leader-only command's runner, which is not built where the command cannot be
    // supervised (`crate::os::process`).
    #[cfg_attr(windows, allow(dead_code))]
    pub(crate) fn watch(&self, f: Box<dyn Fn() + Send + Sync>) {
        self.watchers.lock().unwrap_or_else(|p| p.into_inner()).push(f);
    }
    pub(crate) fn notify(&self) {
        for f in self.watchers.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            f();
        }
    }
}

pub(crate) struct Shared {
    pub(crate) id: String,
    pub(crate) bound: SocketAddr,
    pub(crate) clock: Clock,
    pub(crate) tx: mpsc::Sender<Command>,
    pub(crate) waker: Arc<mio::Waker>,
    pub(crate) snapshot: Snapshot,
    pub(crate) running: AtomicBool,
    /// Set (and notified) when the runtime thread has ended, its socket and lock released.
    pub(crate) ended: (Mutex<bool>, Condvar),
    pub(crate) thread: Mutex<Option<JoinHandle<()>>>,
    pub(crate) thread_id: OnceLock<ThreadId>,
    pub(crate) fatal: Mutex<Option<RuntimeError>>,
    /// What the run loop counts (see [`crate::metrics`]).
    pub(crate) counters: Counters,
    /// The HTTP sidecar's bound address, when one runs.
    pub(crate) http_addr: Option<SocketAddr>,
    /// Run once when the runtime thread ends (the HTTP sidecar's shutdown).
    pub(crate) on_end: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
    /// This leadership's death notices and the socket they leave from, for a watchdog.
    pub(crate) notices: crate::notice::Published,
    /// The application says leader work it runs in this process is still running
    /// ([`Handle::set_leader_work_running`]).
    pub(crate) leader_work: AtomicBool,
}

/// A running runtime. Every method may be called from any thread. Dropping the last handle does
/// not stop the runtime: call [`Handle::stop`].
///
/// Commands (`transfer`, `inspect`, `broadcast`, membership, confirmations) are carried out on the
/// runtime thread; called from another thread they wait for its answer (one loop round, well
/// under a millisecond when idle). Called from the runtime thread itself — inside a
/// [`crate::Handler`] — they cannot wait: they are queued, run right after the handler returns,
/// return `Ok(())` at once, and a refusal is delivered as a [`crate::RuntimeEvent::Warning`]
/// carrying the error's code; [`Handle::inspect`] returns [`RuntimeError::OnRuntimeThread`]
/// there, and [`Handle::stop`] only requests the stop.
///
/// Snapshot reads (`is_leader`, `term`, `leader`, `lease_deadline`) are published after every
/// round and before a `Leader` or `Follower` event is delivered, so a handler (or a thread woken
/// by it) sees them agree with the event.
///
/// After the runtime stopped, commands return [`RuntimeError::Stopped`].
#[derive(Clone)]
pub struct Handle {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("id", &self.shared.id)
            .field("bound_addr", &self.shared.bound)
            .field("running", &self.is_running())
            .finish()
    }
}

/// Marks the runtime ended when dropped: at the end of the runtime thread, after the loop (and with
/// it the socket and the state file's lock) was dropped, or while unwinding from a panic.
pub(crate) struct EndGuard(pub(crate) Arc<Shared>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        self.0.running.store(false, Ordering::Release);
        let hooks = std::mem::take(&mut *self.0.on_end.lock().unwrap_or_else(|p| p.into_inner()));
        for hook in hooks {
            hook();
        }
        let (lock, cvar) = &self.0.ended;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cvar.notify_all();
        self.0.snapshot.notify();
    }
}

impl Handle {
    fn on_runtime_thread(&self) -> bool {
        self.shared.thread_id.get() == Some(&std::thread::current().id())
    }

    fn request<T>(&self, make: impl FnOnce(Reply<T>) -> Command, default: T) -> Result<T, RuntimeError> {
        if !self.is_running() {
            return Err(RuntimeError::Stopped);
        }
        if self.on_runtime_thread() {
            self.shared.tx.send(make(None)).map_err(|_| RuntimeError::Stopped)?;
            return Ok(default);
        }
        let (tx, rx) = mpsc::channel();
        self.shared.tx.send(make(Some(tx))).map_err(|_| RuntimeError::Stopped)?;
        let _ = self.shared.waker.wake();
        rx.recv().unwrap_or(Err(RuntimeError::Stopped))
    }

    /// The node id (as configured).
    pub fn id(&self) -> &str {
        &self.shared.id
    }
    /// The local address the socket is bound to.
    pub fn bound_addr(&self) -> SocketAddr {
        self.shared.bound
    }
    /// Whether the runtime thread is still running (false once `Stopped` was delivered).
    pub fn is_running(&self) -> bool {
        self.shared.running.load(Ordering::Acquire)
    }
    /// The role after the runtime's last round.
    pub fn role(&self) -> Role {
        match self.shared.snapshot.role.load(Ordering::Acquire) {
            0 => Role::Unclustered,
            2 => Role::Candidate,
            3 => Role::Leader,
            4 => Role::Observer,
            _ => Role::Follower,
        }
    }
    /// Whether this node leads (after the runtime's last round).
    pub fn is_leader(&self) -> bool {
        self.role() == Role::Leader
    }
    /// The current term (after the runtime's last round).
    pub fn term(&self) -> u64 {
        self.shared.snapshot.term.load(Ordering::Acquire)
    }
    /// The leader known in the current term (this node's id while it leads).
    pub fn leader(&self) -> Option<String> {
        self.shared.snapshot.leader.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    /// The value the leader proclaims, as this node knows it (after the runtime's last round):
    /// its own while it leads; `None` when no leader is known or it has no value.
    pub fn leader_value(&self) -> Option<String> {
        self.shared.snapshot.leader_value.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    /// While leading: the lease deadline on the runtime clock ([`Handle::now_ms`]); `None` when
    /// not leading or before a quorum acknowledged a heartbeat.
    pub fn lease_deadline_ms(&self) -> Option<u64> {
        match self.shared.snapshot.lease.load(Ordering::Acquire) {
            NO_LEASE => None,
            t => Some(t),
        }
    }
    /// While leading: the lease deadline as an [`Instant`] (leader-only work checks
    /// `Instant::now() < deadline` before each irreversible step).
    pub fn lease_deadline(&self) -> Option<Instant> {
        self.lease_deadline_ms().map(|ms| self.shared.clock.instant(ms))
    }
    /// While leading: milliseconds until the lease deadline (0 once it passed and was not renewed
    /// yet); `None` when not leading or before a quorum acknowledged a heartbeat. The one place
    /// every host's "remaining" comes from.
    pub fn lease_remaining_ms(&self) -> Option<u64> {
        self.lease_remaining_at(self.now_ms())
    }
    fn lease_remaining_at(&self, now: u64) -> Option<u64> {
        self.lease_deadline_ms().map(|d| d.saturating_sub(now))
    }
    /// Whether this node leads `term` with a lease that holds now: what leader-only work checks
    /// before each irreversible step (passing `term`, the fencing token, to the resource). False
    /// once the runtime stopped, leadership of `term` ended, or the lease lapsed (a paused or
    /// partitioned leader). The one place every host's lease validity comes from.
    pub fn lease_valid(&self, term: u64) -> bool {
        // The snapshot's fields are stored one by one: a term read before and after the others
        // makes sure they belong to the same round's term.
        let before = self.term();
        let valid = self.is_running() && self.is_leader() && self.lease_remaining_ms().is_some_and(|r| r > 0);
        valid && before == term && self.term() == term
    }
    /// The runtime clock: monotonic milliseconds since [`crate::spawn`].
    pub fn now_ms(&self) -> u64 {
        self.shared.clock.now()
    }
    /// What the runtime counts and knows now, for monitoring: role, term, leader, lease, counters
    /// (leaderships, campaigns, drops by reason), peers by state and the failover histogram. A
    /// cheap read of state the run loop publishes after every round (no round trip to it); the
    /// HTTP sidecar's `/metrics` and the Python and Node.js collectors are this snapshot.
    pub fn metrics(&self) -> Metrics {
        let now = self.now_ms();
        let (leader_changes, elections, dropped, peers, failover) = self.shared.counters.read();
        let (peer_last_heard_ms, peer_last_ack_ms, quorum_slack, silent_peers) = self.shared.counters.read_quorum(now);
        let role = self.role();
        Metrics {
            id: self.shared.id.clone(),
            role,
            term: self.term(),
            leader: self.leader(),
            leader_value: self.leader_value(),
            is_leader: role == Role::Leader,
            lease_remaining_ms: self.lease_remaining_at(now),
            running: self.is_running(),
            stopping: self.shared.counters.stopping.load(Ordering::Acquire),
            loop_age_ms: now.saturating_sub(self.shared.counters.alive_at.load(Ordering::Acquire)),
            leader_changes,
            elections,
            dropped,
            peers,
            failover,
            peer_last_heard_ms,
            peer_last_ack_ms,
            quorum_slack,
            silent_peers,
            leader_work_failures: self.shared.counters.leader_work_failures.load(Ordering::Relaxed),
            leader_work_step_downs: self.shared.counters.leader_work_step_downs.load(Ordering::Relaxed),
            wire_version: Some(self.shared.counters.wire_version.load(Ordering::Relaxed)).filter(|v| *v > 0),
        }
    }
    /// The address the HTTP sidecar listens on, when [`crate::RuntimeConfig::http`] was set
    /// (the bound port when it asked for port 0).
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.shared.http_addr
    }
    /// The error that stopped the runtime, if a fatal one did.
    pub fn fatal_error(&self) -> Option<RuntimeError> {
        self.shared.fatal.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Hands leadership to `peer`, or with `None` to the core's `transfer_target()` (the peer
    /// heard from most recently). Errors: `not_leader`, `unknown_peer`, `no_transfer_target`.
    pub fn transfer(&self, peer: Option<&str>) -> Result<(), RuntimeError> {
        self.request(|r| Command::Transfer(peer.map(str::to_string), r), ())
    }
    /// The whole election state, as the core reports it.
    pub fn inspect(&self) -> Result<Inspect, RuntimeError> {
        if self.on_runtime_thread() {
            return Err(RuntimeError::OnRuntimeThread { method: "inspect" });
        }
        let (tx, rx) = mpsc::channel();
        if !self.is_running() {
            return Err(RuntimeError::Stopped);
        }
        self.shared.tx.send(Command::Inspect(Some(tx))).map_err(|_| RuntimeError::Stopped)?;
        let _ = self.shared.waker.wake();
        rx.recv().unwrap_or(Err(RuntimeError::Stopped))
    }
    /// Sends `payload` to every member of the view (delivered as `Message` events there).
    pub fn broadcast(&self, payload: &[u8]) -> Result<(), RuntimeError> {
        self.request(|r| Command::Broadcast(payload.to_vec(), r), ())
    }
    /// Changes the value this node proclaims while it leads (empty: none); every member reports
    /// it with the leader within a heartbeat interval. Errors: `not_leader`, `value_too_long`.
    pub fn proclaim(&self, value: &str) -> Result<(), RuntimeError> {
        if value.len() > tenure::MAX_VALUE_LEN {
            return Err(RuntimeError::Node(tenure::Error::ValueTooLong { len: value.len() }));
        }
        self.request(|r| Command::Proclaim(value.to_string(), r), ())
    }
    /// Declares a peer (`HOST:PORT`; checked here, before anything is sent).
    pub fn join(&self, peer: &str) -> Result<(), RuntimeError> {
        parse_peer(peer)?;
        self.request(|r| Command::Join(peer.to_string(), r), ())
    }
    /// Withdraws a peer from the view (and stops resolving its name).
    pub fn leave(&self, peer: &str) -> Result<(), RuntimeError> {
        self.request(|r| Command::Leave(peer.to_string(), r), ())
    }
    /// Reports a peer down (`terminated`: removed at once; `no_connection`: a ghost for
    /// `ghost_ttl`).
    pub fn peer_down(&self, peer: &str, reason: PeerDownReason) -> Result<(), RuntimeError> {
        self.request(|r| Command::PeerDown(peer.to_string(), reason, r), ())
    }
    /// Answers a deferred confirmation (see [`crate::Confirm::Defer`]).
    pub fn confirm_leader(&self, term: u64, granted: bool) -> Result<(), RuntimeError> {
        self.request(|r| Command::ConfirmLeader(term, granted, r), ())
    }
    /// The application's leader-only work for `term` failed once. The runtime's
    /// [`crate::FailurePolicy`] decides: [`LeaderWorkVerdict::Retry`] (run it again after the
    /// delay), [`LeaderWorkVerdict::SteppedDown`] (leadership rolled back; the node backs off before
    /// it campaigns again) or [`LeaderWorkVerdict::Stopping`] (too many failed leaderships in a row).
    /// Errors: `not_leader_in_term` when this node does not lead `term`.
    pub fn leader_work_failed(&self, term: u64) -> Result<LeaderWorkVerdict, RuntimeError> {
        self.request(|r| Command::LeaderWorkFailed(term, false, r), LeaderWorkVerdict::Queued)
    }
    /// Whether leader work the application runs in this process is still running: `true` when
    /// it starts, `false` once it has returned after leadership ended (cancellation included).
    /// While it runs after a step-down, a transfer's `TimeoutNow` waits for it (a preemption, or
    /// [`Handle::transfer`]), so the next leader cannot start its work beside this one (the
    /// same as [`crate::Handler::leader_work_running`], for hosts whose work is not the handler's).
    /// A bool, not a count: the host tracks its own pieces of work. Never blocks.
    pub fn set_leader_work_running(&self, running: bool) {
        self.shared.leader_work.store(running, Ordering::Release);
    }

    /// The whole leadership of `term` failed (an `on_leader` callback raised): steps down at once,
    /// counted like [`Handle::leader_work_failed`]'s step-downs (never [`LeaderWorkVerdict::Retry`]).
    pub fn leadership_failed(&self, term: u64) -> Result<LeaderWorkVerdict, RuntimeError> {
        self.request(|r| Command::LeaderWorkFailed(term, true, r), LeaderWorkVerdict::Queued)
    }

    /// The leader-only command of `term` failed: the same [`crate::FailurePolicy`] as any leader
    /// work (docs/command.md).
    // Called by the leader-only command's runner, which is not built where the command cannot be
    // supervised (`crate::os::process`).
    #[cfg_attr(windows, allow(dead_code))]
    pub(crate) fn command_failed(&self, term: u64) -> Result<LeaderWorkVerdict, RuntimeError> {
        self.leader_work_failed(term)
    }

    /// Asks the runtime to stop gracefully (see the crate docs) without waiting.
    pub fn request_stop(&self) {
        let _ = self.shared.tx.send(Command::Stop(None));
        let _ = self.shared.waker.wake();
    }
    /// [`Handle::stop`] with another handover bound than the configured `handover_timeout`
    /// (zero: a leader hands over and stops at once, without waiting for the new leader).
    pub fn stop_with(&self, handover_timeout: std::time::Duration) {
        let ms = u64::try_from(handover_timeout.as_millis()).unwrap_or(u64::MAX);
        let _ = self.shared.tx.send(Command::Stop(Some(ms)));
        let _ = self.shared.waker.wake();
        self.wait();
    }
    /// Stops gracefully: a leader hands leadership over and waits for the new leader (at most
    /// `handover_timeout`), then the runtime delivers `Stopped` and its thread ends. Returns after
    /// that (called from the runtime thread itself: only requests it). Idempotent.
    pub fn stop(&self) {
        self.request_stop();
        self.wait();
    }
    /// Waits until the runtime thread has ended (after a stop or a fatal error); returns at once
    /// on the runtime thread itself.
    pub fn wait(&self) {
        if self.on_runtime_thread() {
            return;
        }
        let (lock, cvar) = &self.shared.ended;
        let mut ended = lock.lock().unwrap_or_else(|p| p.into_inner());
        while !*ended {
            ended = cvar.wait(ended).unwrap_or_else(|p| p.into_inner());
        }
        drop(ended);
        if let Some(t) = self.shared.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = t.join();
        }
    }
}
