//! `tenure.Node` (the sans-IO state machine) and `tenure.FenceChecker`.

#[allow(unused_imports)]
use super::*;

// ----- Node -----------------------------------------------------------------------------------

/// One member of a tenure cluster: the sans-IO election state machine.
///
/// Feed it inputs (messages, timeouts, membership changes), each with the current time of a
/// monotonic millisecond clock; after every input drain its outputs (`drain()` or `poll_output()`
/// until `None`) and act on them in order; call `handle_timeout(now)` at `poll_timeout()`.
/// Use a node from one thread at a time (a call made while another thread's call on the same node
/// is running raises `RuntimeError`).
#[pyclass(module = "tenure", name = "Node")]
pub(crate) struct PyNode {
    inner: Node,
    /// The last `handle_message` sender and its UTF-8 text. Reading a `str` argument into a Rust
    /// string copies it on every call; a follower hears almost only from its leader, so the same
    /// `str` comes back and its text is reused.
    sender: Option<(Py<PyString>, String)>,
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
        Node::new(cfg, seed, restored, now).map(|inner| PyNode { inner, sender: None }).map_err(|e| config_error(py, e))
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
    /// The value the leader proclaims, as this node knows it (its own while leading), or None.
    #[getter]
    fn leader_value(&self) -> Option<&str> {
        self.inner.leader_value()
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
        let PyNode { inner, sender } = self;
        inner.poll_output_ref().map(|o| node_output(py, sender, o)).transpose()
    }

    /// Every pending output, in order (the list may be empty).
    fn drain<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        // Borrowed outputs: a send's id and bytes are read from the core's queue, with no
        // per-output `String`/`Vec`.
        let PyNode { inner, sender } = self;
        let Some(first) = inner.poll_output_ref() else {
            return Ok(PyList::empty(py));
        };
        let first = node_output(py, sender, first)?;
        let Some(second) = inner.poll_output_ref() else {
            // The common case (a follower's ack): a list of one, built at its final size.
            return PyList::new(py, [first]);
        };
        let list = PyList::new(py, [first, node_output(py, sender, second)?])?;
        while let Some(o) = inner.poll_output_ref() {
            list.append(node_output(py, sender, o)?)?;
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
    fn handle_message(&mut self, py: Python<'_>, now: u64, sender: &Bound<'_, PyString>, data: &[u8]) -> PyResult<()> {
        // The same object, or an equal exact `str` (compared without allocating; a subclass could
        // override `__eq__`), reuses the text.
        let cached = match &self.sender {
            Some((obj, _)) => {
                obj.is(sender) || (sender.is_exact_instance_of::<PyString>() && obj.bind(py).as_any().eq(sender)?)
            }
            None => false,
        };
        if !cached {
            self.sender = Some((sender.clone().unbind(), sender.to_cow()?.into_owned()));
        }
        let from = self.sender.as_ref().map_or("", |(_, s)| s.as_str());
        self.inner.handle_message(now, from, data).map_err(|r| decode_error(py, r))
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

    /// Changes the value this node proclaims while it leads (empty: none).
    fn proclaim(&mut self, py: Python<'_>, now: u64, value: &str) -> PyResult<()> {
        self.inner.proclaim(now, value).map_err(|e| node_error(py, e))
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

impl PyNode {}

/// One output as its Python object. A `Send` to the last sender of `handle_message` (a
/// follower's ack to its leader) reuses that sender's `str` instead of decoding a new one.
fn node_output<'py>(
    py: Python<'py>,
    sender: &Option<(Py<PyString>, String)>,
    o: OutputRef<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    match (o, sender) {
        // An exact `str` only: a subclass instance given as the sender stays the caller's.
        (OutputRef::Send { to, bytes }, Some((obj, text)))
            if to == text && obj.bind(py).is_exact_instance_of::<PyString>() =>
        {
            send(py, obj.bind(py).clone(), bytes)
        }
        (o, _) => output(py, o),
    }
}

// ----- FenceChecker ---------------------------------------------------------------------------

/// The resource side of fencing: remembers the highest `(term, leader)` seen and refuses stale
/// writers. Store `highest` next to the resource, in the same transaction as the write it guards.
#[pyclass(module = "tenure", name = "FenceChecker")]
pub(crate) struct PyFenceChecker {
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
