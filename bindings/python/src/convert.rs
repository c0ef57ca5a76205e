//! Conversions between the core's types and the plain Python types of `tenure._types`.

#[allow(unused_imports)]
use super::*;

/// Reads `obj.<name>` and extracts it, naming the attribute in the `TypeError` on failure.
pub(crate) fn attr<'py, T>(obj: &Bound<'py, PyAny>, what: &str, name: &str) -> PyResult<T>
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

pub(crate) fn role<'py>(py: Python<'py>, r: Role) -> PyResult<Bound<'py, PyAny>> {
    Ok(match r {
        Role::Unclustered => role_unclustered(py)?,
        Role::Follower => role_follower(py)?,
        Role::Candidate => role_candidate(py)?,
        Role::Leader => role_leader(py)?,
        Role::Observer => role_observer(py)?,
    }
    .clone())
}

/// Builds an instance of one of the package's frozen, slotted output dataclasses (`Send`,
/// `Persist`, the events) without going through its generated `__init__`, which spends most of
/// its time in `object.__setattr__` calls: allocate, then fill the slots. Equivalent to
/// `cls(*values)` for these classes (plain fields, no `__post_init__`); on the hot path.
pub(crate) fn build<'py, const N: usize>(
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

pub(crate) fn event<'py>(py: Python<'py>, e: Event) -> PyResult<Bound<'py, PyAny>> {
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

/// A `Send` output; `to` is given as a `str` so that the caller can reuse one it holds.
pub(crate) fn send<'py>(py: Python<'py>, to: Bound<'py, PyString>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    build(cls_send(py)?, [intern!(py, "to"), intern!(py, "data")], [to.into_any(), PyBytes::new(py, bytes).into_any()])
}

pub(crate) fn output<'py>(py: Python<'py>, o: OutputRef<'_>) -> PyResult<Bound<'py, PyAny>> {
    match o {
        OutputRef::Send { to, bytes } => send(py, PyString::new(py, to), bytes),
        OutputRef::Persist(s) => build(
            cls_persist(py)?,
            [intern!(py, "term"), intern!(py, "voted_for")],
            [s.term.into_pyobject(py)?.into_any(), s.voted_for.into_pyobject(py)?.into_any()],
        ),
        OutputRef::Event(e) => event(py, e),
    }
}

pub(crate) fn durable_state<'py>(py: Python<'py>, s: DurableState) -> PyResult<Bound<'py, PyAny>> {
    cls_durable_state(py)?.call1((s.term, s.voted_for))
}

pub(crate) fn verdict<'py>(py: Python<'py>, v: FenceVerdict) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        FenceVerdict::Accepted => verdict_accepted(py)?,
        FenceVerdict::Stale => verdict_stale(py)?,
        FenceVerdict::AlreadyFenced => verdict_already_fenced(py)?,
    }
    .clone())
}

// ----- conversions: Python -> core ------------------------------------------------------------

pub(crate) fn config_from(obj: &Bound<'_, PyAny>) -> PyResult<Config> {
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
    c.lease_duration = attr(obj, W, "lease_duration")?;
    c.ghost_ttl = attr(obj, W, "ghost_ttl")?;
    c.pre_vote = attr(obj, W, "pre_vote")?;
    c.confirm_leader = attr(obj, W, "confirm_leader")?;
    c.durable = attr(obj, W, "durable")?;
    c.key = key_arg(&obj.getattr("key")?, "Config.key")?;
    c.admit_unknown_peers = attr(obj, W, "admit_unknown_peers")?;
    c.max_peers = attr(obj, W, "max_peers")?;
    c.max_clock_drift_ppm = attr(obj, W, "max_clock_drift_ppm")?;
    c.incarnation = attr(obj, W, "incarnation")?;
    c.value = attr(obj, W, "value")?;
    c.priority = attr(obj, W, "priority")?;
    c.never_lead = attr(obj, W, "never_lead")?;
    c.preempt_after = attr(obj, W, "preempt_after")?;
    c.observer = attr(obj, W, "observer")?;
    if obj.getattr("observer_peers")?.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("Config.observer_peers must be a sequence of str, not a single str"));
    }
    c.observer_peers = attr::<Vec<String>>(obj, W, "observer_peers")?;
    Ok(c)
}

/// A key: `None`, `bytes` (or `bytearray`), never a `str` or a list of ints.
pub(crate) fn key_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<Vec<u8>>> {
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

pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

pub(crate) fn bytes_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    key_arg(obj, what)?.ok_or_else(|| PyTypeError::new_err(format!("{what} must be bytes, got None")))
}

pub(crate) fn restored_from(obj: &Bound<'_, PyAny>) -> PyResult<DurableState> {
    const W: &str = "restored";
    Ok(DurableState { term: attr(obj, W, "term")?, voted_for: attr(obj, W, "voted_for")? })
}

pub(crate) fn peer_down_reason(reason: &Bound<'_, PyAny>) -> PyResult<PeerDownReason> {
    let s = reason.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!("reason must be a PeerDownReason or str, got {}", type_name(reason)))
    })?;
    peer_down_reason_name(s.to_cow()?.as_ref())
}

/// The core's peer-down reason named `name` (`PeerDownReason::from_name`).
pub(crate) fn peer_down_reason_name(name: &str) -> PyResult<PeerDownReason> {
    PeerDownReason::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = PeerDownReason::ALL.iter().map(|r| r.as_str()).collect();
        PyValueError::new_err(format!("unknown peer-down reason {name:?}: expected one of {names:?}"))
    })
}

pub(crate) fn drop_reason_arg(reason: &Bound<'_, PyAny>) -> PyResult<DropReason> {
    let s = reason
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("reason must be a DropReason or str, got {}", type_name(reason))))?;
    let s = s.to_cow()?;
    DropReason::ALL
        .into_iter()
        .find(|r| r.as_str() == s)
        .ok_or_else(|| PyValueError::new_err(format!("unknown drop reason {s:?}")))
}

pub(crate) fn is<'py>(obj: &Bound<'py, PyAny>, class: PyResult<&Bound<'py, PyAny>>) -> PyResult<bool> {
    obj.is_instance(class?)
}

/// A duration in whole milliseconds, as every `*_ms` argument of the package takes it. The
/// errors are the Node.js package's for the same option: a value of the wrong type (a `bool`, a
/// `str`, ...) is a `TypeError` (Node.js: `TypeError`), a number that is not a whole number from
/// 0 up (negative, fractional, or a `float` at all) a `ValueError` (Node.js: `RangeError`).
pub(crate) fn millis(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<std::time::Duration> {
    use pyo3::types::{PyBool, PyFloat, PyInt};
    if obj.is_instance_of::<PyBool>() || !(obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyFloat>()) {
        return Err(PyTypeError::new_err(format!("{what} must be an int (milliseconds), got {}", type_name(obj))));
    }
    match obj.extract::<u64>() {
        Ok(ms) if obj.is_instance_of::<PyInt>() => Ok(std::time::Duration::from_millis(ms)),
        _ => Err(PyValueError::new_err(format!(
            "{what} must be a whole number of milliseconds from 0 to {}, got {}",
            u64::MAX,
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        ))),
    }
}

/// [`millis`] for an optional argument (`None`: not given).
pub(crate) fn opt_millis(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<std::time::Duration>> {
    match obj {
        Some(o) if !o.is_none() => millis(o, what).map(Some),
        _ => Ok(None),
    }
}
