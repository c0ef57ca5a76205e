//! `tenure._native`: the pyo3 binding of the tenure core.
//!
//! Thin by design: it converts arguments, outputs and errors between the core's Rust types and the
//! plain Python types defined in the `tenure` package (`tenure._types`, `tenure.errors`,
//! `tenure.wire`, `tenure.cli`), which it imports lazily and caches. No election logic lives here.
//! pyo3 turns a Rust panic into a Python `PanicException` instead of unwinding into the
//! interpreter, and every refused input becomes a `tenure.TenureError` subclass carrying the core's
//! stable code.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

use tenure::cli::{Command, Control, RunOptions};
use tenure::wire::{Envelope, Message};
use tenure::{
    Config, ConfigError, DropReason, DurableState, Error, Event, FenceChecker, FenceVerdict, Node, Output,
    PeerDownReason, Role,
};

// ----- cached Python objects ------------------------------------------------------------------

/// Defines a function returning a Python attribute `module.attr[.member]`, imported once.
macro_rules! cached {
    ($fn:ident, $module:literal, $attr:literal) => {
        fn $fn(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
            static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
            CELL.get_or_try_init(py, || Ok::<_, PyErr>(py.import($module)?.getattr($attr)?.unbind()))
                .map(|o| o.bind(py))
        }
    };
    ($fn:ident, $module:literal, $attr:literal, $member:literal) => {
        fn $fn(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
            static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
            CELL.get_or_try_init(py, || Ok::<_, PyErr>(py.import($module)?.getattr($attr)?.getattr($member)?.unbind()))
                .map(|o| o.bind(py))
        }
    };
}

cached!(cls_send, "tenure._types", "Send");
cached!(cls_persist, "tenure._types", "Persist");
cached!(cls_became_leader, "tenure._types", "BecameLeader");
cached!(cls_became_follower, "tenure._types", "BecameFollower");
cached!(cls_peer_joined, "tenure._types", "PeerJoined");
cached!(cls_peer_left, "tenure._types", "PeerLeft");
cached!(cls_confirm_leader, "tenure._types", "ConfirmLeader");
cached!(cls_message, "tenure._types", "Message");
cached!(cls_durable_state, "tenure._types", "DurableState");
cached!(cls_config, "tenure._types", "Config");
cached!(cls_valid_config, "tenure._types", "ValidConfig");
cached!(cls_config_warning, "tenure._types", "ConfigWarning");
cached!(role_unclustered, "tenure._types", "Role", "UNCLUSTERED");
cached!(role_follower, "tenure._types", "Role", "FOLLOWER");
cached!(role_candidate, "tenure._types", "Role", "CANDIDATE");
cached!(role_leader, "tenure._types", "Role", "LEADER");
cached!(cls_drop_reason, "tenure._types", "DropReason");
cached!(verdict_accepted, "tenure._types", "FenceVerdict", "ACCEPTED");
cached!(verdict_stale, "tenure._types", "FenceVerdict", "STALE");
cached!(verdict_already_fenced, "tenure._types", "FenceVerdict", "ALREADY_FENCED");
cached!(cls_envelope, "tenure.wire", "Envelope");
cached!(cls_pre_vote, "tenure.wire", "PreVote");
cached!(cls_pre_vote_reply, "tenure.wire", "PreVoteReply");
cached!(cls_vote, "tenure.wire", "Vote");
cached!(cls_vote_reply, "tenure.wire", "VoteReply");
cached!(cls_heartbeat, "tenure.wire", "Heartbeat");
cached!(cls_heartbeat_ack, "tenure.wire", "HeartbeatAck");
cached!(cls_timeout_now, "tenure.wire", "TimeoutNow");
cached!(cls_app, "tenure.wire", "App");
cached!(cls_run_options, "tenure.cli", "RunOptions");
cached!(json_loads, "json", "loads");
cached!(errors_module, "tenure", "errors");

// ----- errors ---------------------------------------------------------------------------------

/// Builds `tenure.errors.<class_name>(*args)` as a raisable error. If even that fails (the
/// package is broken), the failure itself is raised, so nothing is ever swallowed.
fn raise<'py, A>(py: Python<'py>, class_name: &str, args: A) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    match errors_module(py).and_then(|m| m.getattr(class_name)).and_then(|c| c.call1(args)) {
        Ok(value) => PyErr::from_value(value),
        Err(e) => e,
    }
}

fn node_error(py: Python<'_>, e: Error) -> PyErr {
    let class = match e {
        Error::InvalidPeer { .. } => "InvalidPeerError",
        Error::SelfPeer => "SelfPeerError",
        Error::UnknownPeer { .. } => "UnknownPeerError",
        Error::NotLeader => "NotLeaderError",
        Error::PayloadTooLarge { .. } => "PayloadTooLargeError",
        Error::NoPendingConfirm { .. } => "NoPendingConfirmError",
        Error::NotLeaderInTerm { .. } => "NotLeaderInTermError",
        Error::ViewFull { .. } => "ViewFullError",
    };
    raise(py, class, (e.to_string(), e.code()))
}

fn config_error(py: Python<'_>, e: ConfigError) -> PyErr {
    raise(py, "ConfigError", (e.to_string(), e.code()))
}

fn drop_reason<'py>(py: Python<'py>, r: DropReason) -> PyResult<Bound<'py, PyAny>> {
    cls_drop_reason(py)?.call1((r.as_str(),))
}

fn decode_error(py: Python<'_>, r: DropReason) -> PyErr {
    match drop_reason(py, r) {
        Ok(reason) => raise(py, "DecodeError", (format!("message dropped: {r}"), reason)),
        Err(e) => e,
    }
}

/// Reads `obj.<name>` and extracts it, naming the attribute in the `TypeError` on failure.
fn attr<'py, T>(obj: &Bound<'py, PyAny>, what: &str, name: &str) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py>,
{
    let value = obj.getattr(name).map_err(|_| {
        PyTypeError::new_err(format!("{what} must have a {name:?} attribute; got a {}", type_name(obj)))
    })?;
    value.extract::<T>().map_err(|e| {
        let e: PyErr = e.into();
        let detail = e.value(obj.py()).to_string();
        if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) {
            PyValueError::new_err(format!("{what}.{name} is out of range: {detail}"))
        } else {
            PyTypeError::new_err(format!("{what}.{name} has the wrong type ({}): {detail}", type_name(&value)))
        }
    })
}

// ----- conversions: core -> Python ------------------------------------------------------------

fn role<'py>(py: Python<'py>, r: Role) -> PyResult<Bound<'py, PyAny>> {
    Ok(match r {
        Role::Unclustered => role_unclustered(py)?,
        Role::Follower => role_follower(py)?,
        Role::Candidate => role_candidate(py)?,
        Role::Leader => role_leader(py)?,
    }
    .clone())
}

/// Builds an instance of one of the package's frozen, slotted output dataclasses (`Send`,
/// `Persist`, the events) without going through its generated `__init__`, which spends most of
/// its time in `object.__setattr__` calls: allocate, then fill the slots. Equivalent to
/// `cls(*values)` for these classes (plain fields, no `__post_init__`); on the hot path.
fn build<'py, const N: usize>(
    cls: &Bound<'py, PyAny>,
    names: [&Bound<'py, PyString>; N],
    values: [Bound<'py, PyAny>; N],
) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    let ty = cls.cast::<PyType>()?;
    // SAFETY: `ty` is a live type object; PyType_GenericAlloc returns a new reference or NULL
    // with an exception set, which `from_owned_ptr_or_err` turns into an error.
    let obj = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyType_GenericAlloc(ty.as_type_ptr(), 0))? };
    for (name, value) in names.iter().zip(values.iter()) {
        // SAFETY: all three pointers are live objects owned by this frame. The generic setattr
        // stores into the slot descriptors, bypassing the frozen class's `__setattr__` guard.
        let rc = unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) };
        if rc != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(obj)
}

fn event<'py>(py: Python<'py>, e: Event) -> PyResult<Bound<'py, PyAny>> {
    let term_name = intern!(py, "term");
    match e {
        Event::BecameLeader { term } => {
            build(cls_became_leader(py)?, [term_name], [term.into_pyobject(py)?.into_any()])
        }
        Event::BecameFollower { term, leader } => build(
            cls_became_follower(py)?,
            [term_name, intern!(py, "leader")],
            [term.into_pyobject(py)?.into_any(), leader.into_pyobject(py)?.into_any()],
        ),
        Event::PeerJoined { peer } => {
            build(cls_peer_joined(py)?, [intern!(py, "peer")], [PyString::new(py, &peer).into_any()])
        }
        Event::PeerLeft { peer } => {
            build(cls_peer_left(py)?, [intern!(py, "peer")], [PyString::new(py, &peer).into_any()])
        }
        Event::ConfirmLeader { term } => {
            build(cls_confirm_leader(py)?, [term_name], [term.into_pyobject(py)?.into_any()])
        }
        Event::Message { from, payload } => build(
            cls_message(py)?,
            [intern!(py, "sender"), intern!(py, "payload")],
            [PyString::new(py, &from).into_any(), PyBytes::new(py, &payload).into_any()],
        ),
    }
}

fn output<'py>(py: Python<'py>, o: Output) -> PyResult<Bound<'py, PyAny>> {
    match o {
        Output::Send { to, bytes } => build(
            cls_send(py)?,
            [intern!(py, "to"), intern!(py, "data")],
            [PyString::new(py, &to).into_any(), PyBytes::new(py, &bytes).into_any()],
        ),
        Output::Persist(s) => build(
            cls_persist(py)?,
            [intern!(py, "term"), intern!(py, "voted_for")],
            [s.term.into_pyobject(py)?.into_any(), s.voted_for.into_pyobject(py)?.into_any()],
        ),
        Output::Event(e) => event(py, e),
    }
}

fn durable_state<'py>(py: Python<'py>, s: DurableState) -> PyResult<Bound<'py, PyAny>> {
    cls_durable_state(py)?.call1((s.term, s.voted_for))
}

fn verdict<'py>(py: Python<'py>, v: FenceVerdict) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        FenceVerdict::Accepted => verdict_accepted(py)?,
        FenceVerdict::Stale => verdict_stale(py)?,
        FenceVerdict::AlreadyFenced => verdict_already_fenced(py)?,
    }
    .clone())
}

// ----- conversions: Python -> core ------------------------------------------------------------

fn config_from(obj: &Bound<'_, PyAny>) -> PyResult<Config> {
    const W: &str = "Config";
    if !is(obj, cls_config(obj.py()))? {
        return Err(PyTypeError::new_err(format!("config must be a tenure.Config, got {}", type_name(obj))));
    }
    let bootstrap_obj = obj.getattr("bootstrap")?;
    if bootstrap_obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("Config.bootstrap must be a sequence of str, not a single str"));
    }
    let mut c = Config::new(attr::<String>(obj, W, "id")?, attr::<String>(obj, W, "cluster")?);
    c.bootstrap = attr::<Vec<String>>(obj, W, "bootstrap")?;
    c.min_cluster_size = attr(obj, W, "min_cluster_size")?;
    c.election_timeout_min = attr(obj, W, "election_timeout_min")?;
    c.election_timeout_max = attr(obj, W, "election_timeout_max")?;
    c.heartbeat_interval = attr(obj, W, "heartbeat_interval")?;
    c.ghost_ttl = attr(obj, W, "ghost_ttl")?;
    c.pre_vote = attr(obj, W, "pre_vote")?;
    c.confirm_leader = attr(obj, W, "confirm_leader")?;
    c.durable = attr(obj, W, "durable")?;
    c.key = key_arg(&obj.getattr("key")?, "Config.key")?;
    c.admit_unknown_peers = attr(obj, W, "admit_unknown_peers")?;
    c.max_peers = attr(obj, W, "max_peers")?;
    c.max_clock_drift_ppm = attr(obj, W, "max_clock_drift_ppm")?;
    c.incarnation = attr(obj, W, "incarnation")?;
    Ok(c)
}

/// A key: `None`, `bytes` (or `bytearray`), never a `str` or a list of ints.
fn key_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<Vec<u8>>> {
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Some(b.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.cast::<pyo3::types::PyByteArray>() {
        return Ok(Some(b.to_vec()));
    }
    Err(PyTypeError::new_err(format!("{what} must be bytes or None, got {}", type_name(obj))))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

fn bytes_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    key_arg(obj, what)?.ok_or_else(|| PyTypeError::new_err(format!("{what} must be bytes, got None")))
}

fn restored_from(obj: &Bound<'_, PyAny>) -> PyResult<DurableState> {
    const W: &str = "restored";
    Ok(DurableState { term: attr(obj, W, "term")?, voted_for: attr(obj, W, "voted_for")? })
}

fn peer_down_reason(reason: &Bound<'_, PyAny>) -> PyResult<PeerDownReason> {
    let s = reason.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!("reason must be a PeerDownReason or str, got {}", type_name(reason)))
    })?;
    match s.to_cow()?.as_ref() {
        "terminated" => Ok(PeerDownReason::Terminated),
        "no_connection" => Ok(PeerDownReason::NoConnection),
        other => Err(PyValueError::new_err(format!(
            "unknown peer-down reason {other:?}: expected \"terminated\" or \"no_connection\""
        ))),
    }
}

fn drop_reason_arg(reason: &Bound<'_, PyAny>) -> PyResult<DropReason> {
    let s = reason
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("reason must be a DropReason or str, got {}", type_name(reason))))?;
    let s = s.to_cow()?;
    DropReason::ALL
        .into_iter()
        .find(|r| r.as_str() == s)
        .ok_or_else(|| PyValueError::new_err(format!("unknown drop reason {s:?}")))
}

fn is<'py>(obj: &Bound<'py, PyAny>, class: PyResult<&Bound<'py, PyAny>>) -> PyResult<bool> {
    obj.is_instance(class?)
}

fn event_from(event: &Bound<'_, PyAny>) -> PyResult<Event> {
    let py = event.py();
    const W: &str = "event";
    Ok(if is(event, cls_became_leader(py))? {
        Event::BecameLeader { term: attr(event, W, "term")? }
    } else if is(event, cls_became_follower(py))? {
        Event::BecameFollower { term: attr(event, W, "term")?, leader: attr(event, W, "leader")? }
    } else if is(event, cls_peer_joined(py))? {
        Event::PeerJoined { peer: attr(event, W, "peer")? }
    } else if is(event, cls_peer_left(py))? {
        Event::PeerLeft { peer: attr(event, W, "peer")? }
    } else if is(event, cls_confirm_leader(py))? {
        Event::ConfirmLeader { term: attr(event, W, "term")? }
    } else if is(event, cls_message(py))? {
        Event::Message { from: attr(event, W, "sender")?, payload: bytes_arg(&event.getattr("payload")?, "payload")? }
    } else {
        return Err(PyTypeError::new_err(format!("expected a tenure event, got {}", type_name(event))));
    })
}

// ----- Node -----------------------------------------------------------------------------------

/// One member of a tenure cluster: the sans-IO election state machine.
///
/// Feed it inputs (messages, timeouts, membership changes), each with the current time of a
/// monotonic millisecond clock; after every input drain its outputs (`drain()` or `poll_output()`
/// until `None`) and act on them in order; call `handle_timeout(now)` at `poll_timeout()`.
/// Use a node from one thread at a time (a call made while another thread's call on the same node
/// is running raises `RuntimeError`).
#[pyclass(module = "tenure", name = "Node")]
struct PyNode {
    inner: Node,
}

#[pymethods]
impl PyNode {
    /// Creates a node from a `Config`, at monotonic time `now` (ms). `seed` seeds the election
    /// timeout randomness (default: the OS random source); `restored` is the `DurableState`
    /// last persisted (durable nodes).
    #[new]
    #[pyo3(signature = (config, *, now, seed=None, restored=None))]
    fn new(
        config: &Bound<'_, PyAny>,
        now: u64,
        seed: Option<u64>,
        restored: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = config.py();
        let cfg = config_from(config)?;
        let restored = match restored {
            Some(r) if !r.is_none() => Some(restored_from(r)?),
            _ => None,
        };
        let seed = match seed {
            Some(s) => s,
            None => os_seed(py)?,
        };
        Node::new(cfg, seed, restored, now).map(|inner| PyNode { inner }).map_err(|e| config_error(py, e))
    }

    /// This node's id.
    #[getter]
    fn id(&self) -> &str {
        self.inner.id()
    }
    /// The cluster id.
    #[getter]
    fn cluster(&self) -> &str {
        self.inner.cluster()
    }
    /// The current `Role`.
    #[getter]
    fn role<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        role(py, self.inner.role())
    }
    /// The current term.
    #[getter]
    fn term(&self) -> u64 {
        self.inner.term()
    }
    /// Whom this node voted for in the current term.
    #[getter]
    fn voted_for(&self) -> Option<&str> {
        self.inner.voted_for()
    }
    /// The leader known in the current term (this node's id when leading), or None.
    #[getter]
    fn leader(&self) -> Option<&str> {
        self.inner.leader()
    }
    /// Whether this node is the (confirmed) leader.
    #[getter]
    fn is_leader(&self) -> bool {
        self.inner.is_leader()
    }
    /// The view: this node and every peer it counts, sorted.
    #[getter]
    fn view(&self) -> Vec<String> {
        self.inner.view()
    }
    /// Votes needed to win: a majority of the view, counting self.
    #[getter]
    fn quorum(&self) -> usize {
        self.inner.quorum()
    }
    /// The fencing token (the term) while leading, else None.
    #[getter]
    fn fencing_token(&self) -> Option<u64> {
        self.inner.fencing_token()
    }
    /// While leading: the last instant (monotonic ms) at which no other leader can have been
    /// elected, from the heartbeats a quorum acknowledged. None otherwise.
    #[getter]
    fn lease_deadline(&self) -> Option<u64> {
        self.inner.lease_deadline()
    }
    /// The configuration warnings (a list of `ConfigWarning`).
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .inner
            .warnings()
            .iter()
            .map(|w| cls_config_warning(py)?.call1((w.code(), w.to_string())))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// The next instant (monotonic ms) at which to call `handle_timeout`, or None.
    fn poll_timeout(&self) -> Option<u64> {
        self.inner.poll_timeout()
    }

    /// The next output (`Send`, `Persist` or an `Event`), or None when drained.
    fn poll_output<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.poll_output().map(|o| output(py, o)).transpose()
    }

    /// Every pending output, in order (the list may be empty).
    fn drain<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        while let Some(o) = self.inner.poll_output() {
            list.append(output(py, o)?)?;
        }
        Ok(list)
    }

    /// How many inbound messages were dropped for `reason` (a `DropReason` or its name).
    fn dropped(&self, reason: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.inner.dropped(drop_reason_arg(reason)?))
    }

    /// The whole election state as a dict (the keys listed in the SPEC, same in every binding).
    fn inspect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_loads(py)?.call1((self.inner.inspect().to_string(),))
    }

    /// Handles a datagram `data` received from peer `sender`. A dropped message (counted) raises
    /// `DecodeError` whose `reason` says why; the node is otherwise unchanged.
    fn handle_message(&mut self, py: Python<'_>, now: u64, sender: &str, data: &[u8]) -> PyResult<()> {
        self.inner.handle_message(now, sender, data).map_err(|r| decode_error(py, r))
    }

    /// Handles the passing of time; call at (or after) `poll_timeout()`. Early calls are harmless.
    fn handle_timeout(&mut self, now: u64) {
        self.inner.handle_timeout(now)
    }

    /// Declares a peer (idempotent).
    fn join(&mut self, py: Python<'_>, now: u64, peer: &str) -> PyResult<()> {
        self.inner.join(now, peer).map_err(|e| node_error(py, e))
    }

    /// Withdraws a peer from the view (refusing its traffic for one election timeout).
    fn leave(&mut self, py: Python<'_>, now: u64, peer: &str) -> PyResult<()> {
        self.inner.leave(now, peer).map_err(|e| node_error(py, e))
    }

    /// Reports a peer down: `PeerDownReason.TERMINATED` removes it at once, `NO_CONNECTION` keeps
    /// it in the view for `ghost_ttl` unless it is heard from again.
    fn peer_down(&mut self, py: Python<'_>, now: u64, peer: &str, reason: &Bound<'_, PyAny>) -> PyResult<()> {
        let reason = peer_down_reason(reason)?;
        self.inner.peer_down(now, peer, reason).map_err(|e| node_error(py, e))
    }

    /// Answers a `ConfirmLeader` event: True publishes leadership, False withholds it.
    fn confirm_leader(&mut self, py: Python<'_>, now: u64, term: u64, granted: bool) -> PyResult<()> {
        self.inner.confirm_leader(now, term, granted).map_err(|e| node_error(py, e))
    }

    /// Reports that the became-leader handler failed: leadership is rolled back.
    fn leader_handler_failed(&mut self, py: Python<'_>, now: u64, term: u64) -> PyResult<()> {
        self.inner.leader_handler_failed(now, term).map_err(|e| node_error(py, e))
    }

    /// Hands leadership to `peer`, which campaigns at once; this node stops leading now.
    fn transfer_leadership(&mut self, py: Python<'_>, now: u64, peer: &str) -> PyResult<()> {
        self.inner.transfer_leadership(now, peer).map_err(|e| node_error(py, e))
    }

    /// The peer a graceful stop should hand leadership to: of the peers that have answered and
    /// are not reported unreachable, the one heard from most recently (ties: the smaller id); None
    /// when no peer qualifies. Every runtime asks the core, so they all choose the same peer.
    fn transfer_target(&self) -> Option<&str> {
        self.inner.transfer_target()
    }

    /// Sends an application payload (bytes) to every member of the view.
    fn broadcast(&mut self, py: Python<'_>, now: u64, payload: &Bound<'_, PyAny>) -> PyResult<()> {
        let payload = bytes_arg(payload, "payload")?;
        self.inner.broadcast(now, &payload).map_err(|e| node_error(py, e))
    }

    fn __repr__(&self) -> String {
        format!(
            "<tenure.Node id={:?} cluster={:?} role={} term={}>",
            self.inner.id(),
            self.inner.cluster(),
            self.inner.role().as_str(),
            self.inner.term()
        )
    }
}

// ----- FenceChecker ---------------------------------------------------------------------------

/// The resource side of fencing: remembers the highest `(term, leader)` seen and refuses stale
/// writers. Store `highest` next to the resource, in the same transaction as the write it guards.
#[pyclass(module = "tenure", name = "FenceChecker")]
struct PyFenceChecker {
    inner: FenceChecker,
}

#[pymethods]
impl PyFenceChecker {
    /// A checker that has seen nothing, or restored from a stored `(term, leader)` pair.
    #[new]
    #[pyo3(signature = (highest=None))]
    fn new(highest: Option<(u64, String)>) -> Self {
        let inner = match highest {
            Some((term, leader)) => FenceChecker::with_highest(term, &leader),
            None => FenceChecker::new(),
        };
        PyFenceChecker { inner }
    }

    /// The highest `(term, leader)` accepted so far, or None.
    #[getter]
    fn highest(&self) -> Option<(u64, String)> {
        self.inner.highest().map(|(t, l)| (t, l.to_string()))
    }

    /// Checks a writer's `(term, leader)`, recording it when accepted; returns a `FenceVerdict`.
    fn check<'py>(&mut self, py: Python<'py>, term: u64, leader: &str) -> PyResult<Bound<'py, PyAny>> {
        verdict(py, self.inner.check(term, leader))
    }

    fn __repr__(&self) -> String {
        match self.inner.highest() {
            Some((t, l)) => format!("FenceChecker(highest=({t}, {l:?}))"),
            None => "FenceChecker()".to_string(),
        }
    }
}

// ----- module functions -----------------------------------------------------------------------

/// Checks a `Config` with the core; returns a `ValidConfig` or raises `ConfigError`.
#[pyfunction]
fn validate_config<'py>(config: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = config.py();
    let v = config_from(config)?.validate().map_err(|e| config_error(py, e))?;
    let warnings = v
        .warnings
        .iter()
        .map(|w| cls_config_warning(py)?.call1((w.code(), w.to_string())))
        .collect::<PyResult<Vec<_>>>()?;
    cls_valid_config(py)?.call1((
        v.election_timeout_min,
        v.election_timeout_max,
        v.heartbeat_interval,
        v.ghost_ttl,
        v.min_cluster_size,
        PyTuple::new(py, warnings)?,
        v.max_peers,
        v.max_clock_drift_ppm,
        v.lease_span,
    ))
}

/// A seed from the operating system's random source; raises `RandomSourceError` when it fails
/// (never a fixed fallback: two nodes must not draw identical timeouts).
#[pyfunction]
fn os_seed(py: Python<'_>) -> PyResult<u64> {
    tenure::os_seed().map_err(|e| raise(py, "RandomSourceError", (e.to_string(), "no_randomness")))
}

/// The state-file line for `(term, voted_for)`.
#[pyfunction]
#[pyo3(signature = (term, voted_for=None))]
fn encode_state(term: u64, voted_for: Option<String>) -> String {
    DurableState { term, voted_for }.encode()
}

/// Parses a state-file line into a `DurableState`, or None when it is not one.
#[pyfunction]
fn decode_state<'py>(py: Python<'py>, text: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    DurableState::decode(text).map(|s| durable_state(py, s)).transpose()
}

fn message_to_py<'py>(py: Python<'py>, m: Message) -> PyResult<Bound<'py, PyAny>> {
    match m {
        Message::PreVote => cls_pre_vote(py)?.call0(),
        Message::PreVoteReply { granted } => cls_pre_vote_reply(py)?.call1((granted,)),
        Message::Vote { transfer } => cls_vote(py)?.call1((transfer,)),
        Message::VoteReply { granted } => cls_vote_reply(py)?.call1((granted,)),
        Message::Heartbeat { sent_at } => cls_heartbeat(py)?.call1((sent_at,)),
        Message::HeartbeatAck { echo } => cls_heartbeat_ack(py)?.call1((echo,)),
        Message::TimeoutNow => cls_timeout_now(py)?.call0(),
        Message::App { seq, payload } => cls_app(py)?.call1((PyBytes::new(py, &payload), seq)),
    }
}

fn message_from(m: &Bound<'_, PyAny>) -> PyResult<Message> {
    let py = m.py();
    const W: &str = "message";
    Ok(if is(m, cls_pre_vote(py))? {
        Message::PreVote
    } else if is(m, cls_pre_vote_reply(py))? {
        Message::PreVoteReply { granted: attr(m, W, "granted")? }
    } else if is(m, cls_vote(py))? {
        Message::Vote { transfer: attr(m, W, "transfer")? }
    } else if is(m, cls_vote_reply(py))? {
        Message::VoteReply { granted: attr(m, W, "granted")? }
    } else if is(m, cls_heartbeat(py))? {
        Message::Heartbeat { sent_at: attr(m, W, "sent_at")? }
    } else if is(m, cls_heartbeat_ack(py))? {
        Message::HeartbeatAck { echo: attr(m, W, "echo")? }
    } else if is(m, cls_timeout_now(py))? {
        Message::TimeoutNow
    } else if is(m, cls_app(py))? {
        Message::App { seq: attr(m, W, "seq")?, payload: bytes_arg(&m.getattr("payload")?, "message.payload")? }
    } else {
        return Err(PyTypeError::new_err(format!("expected a tenure.wire message, got {}", type_name(m))));
    })
}

/// Encodes a `tenure.wire.Envelope` (tagged with HMAC-SHA256 when `key` is given).
#[pyfunction]
#[pyo3(signature = (envelope, key=None))]
fn encode<'py>(envelope: &Bound<'py, PyAny>, key: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyBytes>> {
    let py = envelope.py();
    if !is(envelope, cls_envelope(py))? {
        return Err(PyTypeError::new_err(format!("expected a tenure.wire.Envelope, got {}", type_name(envelope))));
    }
    const W: &str = "Envelope";
    let env = Envelope {
        cluster: attr(envelope, W, "cluster")?,
        from: attr(envelope, W, "sender")?,
        term: attr(envelope, W, "term")?,
        incarnation: attr(envelope, W, "incarnation")?,
        message: message_from(&envelope.getattr("message")?)?,
    };
    let key = match key {
        Some(k) => key_arg(k, "key")?,
        None => None,
    };
    match tenure::wire::encode(&env, key.as_deref()) {
        Ok(bytes) => Ok(PyBytes::new(py, &bytes)),
        Err(DropReason::Oversized) => Err(raise(
            py,
            "PayloadTooLargeError",
            (format!("the encoded message would exceed {} bytes", tenure::MAX_MESSAGE_SIZE), "payload_too_large"),
        )),
        // A term above MAX_TERM: every receiver would drop the bytes as malformed.
        Err(r) => Err(match drop_reason(py, r) {
            Ok(reason) => raise(
                py,
                "DecodeError",
                (format!("term {} is above MAX_TERM ({}): {}", env.term, tenure::MAX_TERM, r.text()), reason),
            ),
            Err(e) => e,
        }),
    }
}

/// Decodes one message into a `tenure.wire.Envelope`; raises `DecodeError` on bad input.
#[pyfunction]
#[pyo3(signature = (data, key=None))]
fn decode<'py>(data: &Bound<'py, PyAny>, key: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let py = data.py();
    let data = bytes_arg(data, "data")?;
    let key = match key {
        Some(k) => key_arg(k, "key")?,
        None => None,
    };
    let env = tenure::wire::decode(&data, key.as_deref()).map_err(|r| decode_error(py, r))?;
    let message = message_to_py(py, env.message)?;
    cls_envelope(py)?.call1((env.cluster, env.from, env.term, message, env.incarnation))
}

/// Parses the shared command line (the arguments after the program name). Returns a
/// `tenure.cli.RunOptions`, or None for `--help`; raises `UsageError` otherwise.
#[pyfunction]
fn parse_args<'py>(py: Python<'py>, args: Vec<String>) -> PyResult<Option<Bound<'py, PyAny>>> {
    match tenure::cli::parse_args(&args) {
        Ok(Command::Help) => Ok(None),
        Ok(Command::Run(o)) => {
            let kwargs = PyDict::new(py);
            kwargs.set_item("id", &o.id)?;
            kwargs.set_item("peers", PyTuple::new(py, &o.peers)?)?;
            kwargs.set_item("cluster", &o.cluster)?;
            kwargs.set_item("min_cluster_size", o.min_cluster_size)?;
            kwargs.set_item("election_timeout_min", o.election_timeout_min)?;
            kwargs.set_item("election_timeout_max", o.election_timeout_max)?;
            kwargs.set_item("heartbeat_interval", o.heartbeat_interval)?;
            kwargs.set_item("ghost_ttl", o.ghost_ttl)?;
            kwargs.set_item("state_file", o.state_file)?;
            kwargs.set_item("key_file", o.key_file)?;
            cls_run_options(py)?.call((), Some(&kwargs)).map(Some)
        }
        Err(message) => Err(raise(py, "UsageError", (message, "usage"))),
    }
}

/// The `Config` a `RunOptions` describes (`key`: the key file's contents, see `key_from_file`).
#[pyfunction]
#[pyo3(signature = (options, key=None))]
fn run_config<'py>(options: &Bound<'py, PyAny>, key: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let py = options.py();
    const W: &str = "RunOptions";
    let o = RunOptions {
        id: attr(options, W, "id")?,
        peers: attr(options, W, "peers")?,
        cluster: attr(options, W, "cluster")?,
        min_cluster_size: attr(options, W, "min_cluster_size")?,
        election_timeout_min: attr(options, W, "election_timeout_min")?,
        election_timeout_max: attr(options, W, "election_timeout_max")?,
        heartbeat_interval: attr(options, W, "heartbeat_interval")?,
        ghost_ttl: attr(options, W, "ghost_ttl")?,
        state_file: attr(options, W, "state_file")?,
        key_file: attr(options, W, "key_file")?,
    };
    let key = match key {
        Some(k) => key_arg(k, "key")?,
        None => None,
    };
    let c = o.config(key);
    let kwargs = PyDict::new(py);
    kwargs.set_item("id", c.id)?;
    kwargs.set_item("cluster", c.cluster)?;
    kwargs.set_item("bootstrap", PyTuple::new(py, c.bootstrap)?)?;
    kwargs.set_item("min_cluster_size", c.min_cluster_size)?;
    kwargs.set_item("election_timeout_min", c.election_timeout_min)?;
    kwargs.set_item("election_timeout_max", c.election_timeout_max)?;
    kwargs.set_item("heartbeat_interval", c.heartbeat_interval)?;
    kwargs.set_item("ghost_ttl", c.ghost_ttl)?;
    kwargs.set_item("pre_vote", c.pre_vote)?;
    kwargs.set_item("confirm_leader", c.confirm_leader)?;
    kwargs.set_item("durable", c.durable)?;
    kwargs.set_item("key", c.key.map(|k| PyBytes::new(py, &k)))?;
    cls_config(py)?.call((), Some(&kwargs))
}

/// The shared JSON line for an event, or None for `ConfirmLeader` (a request, not news).
#[pyfunction]
fn event_line(ts_ms: u64, id: &str, event: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    Ok(tenure::cli::event_line(ts_ms, id, &event_from(event)?))
}

/// The shared JSON line for a runtime lifecycle event (`started`, `stopped`).
#[pyfunction]
fn lifecycle_line(ts_ms: u64, id: &str, event: &str, term: u64) -> String {
    tenure::cli::lifecycle_line(ts_ms, id, event, term)
}

/// The shared JSON `warning` line.
#[pyfunction]
fn warning_line(ts_ms: u64, id: &str, code: &str, message: &str) -> String {
    tenure::cli::warning_line(ts_ms, id, code, message)
}

/// Parses one stdin control line of the command-line runtime: `("transfer", peer)`,
/// `("inspect", None)`, `("broadcast", payload_bytes)`, or None for a blank line; raises
/// `UsageError` for anything else.
#[pyfunction]
fn parse_control<'py>(py: Python<'py>, line: &str) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let parsed = tenure::cli::parse_control(line).map_err(|message| raise(py, "UsageError", (message, "usage")))?;
    Ok(match parsed {
        None => None,
        Some(Control::Transfer(peer)) => {
            Some(PyTuple::new(py, [PyString::new(py, "transfer").into_any(), PyString::new(py, &peer).into_any()])?)
        }
        Some(Control::Inspect) => {
            Some(PyTuple::new(py, [PyString::new(py, "inspect").into_any(), py.None().into_bound(py)])?)
        }
        Some(Control::Broadcast(payload)) => {
            Some(PyTuple::new(py, [PyString::new(py, "broadcast").into_any(), PyBytes::new(py, &payload).into_any()])?)
        }
    })
}

/// The shared JSON `inspect` line with the node's whole state.
#[pyfunction]
fn inspect_line(ts_ms: u64, id: &str, node: PyRef<'_, PyNode>) -> String {
    tenure::cli::inspect_line(ts_ms, id, &node.inner.inspect())
}

/// The key in a key file's contents (trailing whitespace removed).
#[pyfunction]
fn key_from_file<'py>(py: Python<'py>, contents: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let contents = bytes_arg(contents, "contents")?;
    Ok(PyBytes::new(py, &tenure::cli::key_from_file(&contents)))
}

/// The tenure core compiled into this extension.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNode>()?;
    m.add_class::<PyFenceChecker>()?;
    m.add_function(wrap_pyfunction!(validate_config, m)?)?;
    m.add_function(wrap_pyfunction!(os_seed, m)?)?;
    m.add_function(wrap_pyfunction!(encode_state, m)?)?;
    m.add_function(wrap_pyfunction!(decode_state, m)?)?;
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(parse_args, m)?)?;
    m.add_function(wrap_pyfunction!(run_config, m)?)?;
    m.add_function(wrap_pyfunction!(event_line, m)?)?;
    m.add_function(wrap_pyfunction!(lifecycle_line, m)?)?;
    m.add_function(wrap_pyfunction!(warning_line, m)?)?;
    m.add_function(wrap_pyfunction!(key_from_file, m)?)?;
    m.add_function(wrap_pyfunction!(parse_control, m)?)?;
    m.add_function(wrap_pyfunction!(inspect_line, m)?)?;
    m.add("VERSION", tenure::VERSION)?;
    m.add("USAGE", tenure::cli::USAGE)?;
    m.add("MAX_MESSAGE_SIZE", tenure::MAX_MESSAGE_SIZE)?;
    m.add("MAX_TERM", tenure::MAX_TERM)?;
    m.add("MAX_ID_LEN", tenure::MAX_ID_LEN)?;
    Ok(())
}
