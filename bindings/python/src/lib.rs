//! `tenure._native`: the pyo3 binding of the tenure core and of `tenure-runtime`.
//!
//! Thin by design: it converts arguments, outputs and errors between the Rust types and the
//! plain Python types defined in the `tenure` package (`tenure._types`, `tenure.errors`,
//! `tenure.wire`), which it imports lazily and caches. No election or host logic lives here.
//! Seams: `errors` (exceptions), `convert` (types both ways), `node` (`Node`, `FenceChecker`),
//! `wire` (envelopes), `runtime` (the runtime: `spawn_runtime`, `Runtime`, `run_cli`).
//! pyo3 turns a Rust panic into a Python `PanicException` instead of unwinding into the
//! interpreter, and every refused input becomes a `tenure.TenureError` subclass carrying the core's
//! stable code.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

mod convert;
mod errors;
mod node;
mod runtime;
mod wire;

use convert::*;
use errors::*;
use node::*;
use wire::*;

use tenure::wire::{Envelope, Message};
use tenure::{
    Config, ConfigError, DropReason, DurableState, Error, Event, FenceChecker, FenceVerdict, Node, OutputRef,
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
cached!(role_observer, "tenure._types", "Role", "OBSERVER");
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
cached!(cls_hello, "tenure.wire", "Hello");
cached!(cls_death_notice, "tenure.wire", "DeathNotice");
cached!(cls_value, "tenure.wire", "Value");
cached!(cls_value_ack, "tenure.wire", "ValueAck");
cached!(cls_priority, "tenure.wire", "Priority");
cached!(cls_observe, "tenure.wire", "Observe");
cached!(json_loads, "json", "loads");
cached!(errors_module, "tenure", "errors");

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
        v.lease_duration,
    ))
}

/// A seed from the operating system's random source; raises `RandomSourceError` when it fails
/// (never a fixed fallback: two nodes must not draw identical timeouts).
#[pyfunction]
fn os_seed(py: Python<'_>) -> PyResult<u64> {
    tenure::os_seed().map_err(|e| raise(py, "RandomSourceError", (e.to_string(), "no_randomness")))
}

/// The state file's text for `(term, voted_for)` (the runtime's one format).
#[pyfunction]
#[pyo3(signature = (term, voted_for=None))]
fn encode_state(term: u64, voted_for: Option<String>) -> String {
    tenure_runtime::state::encode(&DurableState { term, voted_for })
}

/// Parses a state file's text (the runtime's format, or the old one-line one) into a
/// `DurableState`, or None when it is neither.
#[pyfunction]
fn decode_state<'py>(py: Python<'py>, text: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    tenure_runtime::state::decode(text).ok().map(|s| durable_state(py, s)).transpose()
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
    m.add_class::<runtime::PyRuntime>()?;
    m.add_function(wrap_pyfunction!(runtime::spawn_runtime, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::validate_runtime, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::check_failure_policy, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::failure_policy_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::failure_delay, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::check_millis, m)?)?;
    m.add("VERSION", tenure::VERSION)?;
    m.add("MAX_MESSAGE_SIZE", tenure::MAX_MESSAGE_SIZE)?;
    m.add("MAX_TERM", tenure::MAX_TERM)?;
    m.add("MAX_ID_LEN", tenure::MAX_ID_LEN)?;
    Ok(())
}
