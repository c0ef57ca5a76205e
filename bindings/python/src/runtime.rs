//! The runtime: `tenure-runtime` driven from Python. Converts arguments, events and errors and
//! nothing else; the policy (socket, timers, state file, DNS, handover, logging) is the crate's.
//!
//! Events reach Python on the runtime thread, which takes the GIL only to call the handler given
//! to `spawn_runtime` (the `tenure` package forwards them to its asyncio loop or its own thread).
//! Every blocking call releases the GIL, so that thread can always deliver.

use std::path::PathBuf;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use tenure_runtime::{
    native, Confirm, EngineInit, FailurePolicy, Handle, Handler, LeaderWorkVerdict, RuntimeConfig, RuntimeError,
    RuntimeEvent,
};

use crate::{config_from, errors_module, json_loads, millis, opt_millis};

/// `tenure.errors.from_runtime(message, code, kind)`: the typed exception for a runtime error.
/// Option names in the message are spelled as this package spells them (`confirm_timeout_ms`).
pub(crate) fn runtime_error(py: Python<'_>, e: &RuntimeError) -> PyErr {
    let message = tenure_runtime::vocabulary::ms_suffixed_names(&e.to_string());
    let made =
        errors_module(py).and_then(|m| m.getattr("from_runtime")).and_then(|f| f.call1((message, e.code(), e.kind())));
    match made {
        Ok(value) => PyErr::from_value(value),
        Err(err) => err,
    }
}

/// Forwards every event to a Python callable as a tuple `(kind, ...)`; a deferred confirmation
/// when asked to (Python answers with `Runtime.confirm_leader`).
struct PyHandler {
    callback: Py<PyAny>,
    defer_confirm: bool,
}

fn event_tuple<'py>(py: Python<'py>, event: RuntimeEvent) -> PyResult<Option<Bound<'py, PyTuple>>> {
    // The first item is the runtime's word for the event (`RuntimeEvent::kind`), as everywhere.
    let kind = event.kind();
    let t = match event {
        RuntimeEvent::Started { id, bound_addr, term } => (kind, id, bound_addr.to_string(), term).into_pyobject(py)?,
        // The value is not in the tuples (the callbacks' arguments): `Runtime.leader_value` reads
        // it, published before the event.
        RuntimeEvent::Leader { term, .. } => (kind, term).into_pyobject(py)?,
        RuntimeEvent::Follower { term, leader, .. } => (kind, term, leader).into_pyobject(py)?,
        RuntimeEvent::PeerJoined { peer } => (kind, peer).into_pyobject(py)?,
        RuntimeEvent::PeerLeft { peer } => (kind, peer).into_pyobject(py)?,
        RuntimeEvent::Message { from, payload } => (kind, from, PyBytes::new(py, &payload)).into_pyobject(py)?,
        RuntimeEvent::Warning { code, message } => (kind, code, message).into_pyobject(py)?,
        RuntimeEvent::Fatal { error } => (kind, runtime_error(py, &error).into_value(py)).into_pyobject(py)?,
        RuntimeEvent::Stopped { term } => (kind, term).into_pyobject(py)?,
        _ => return Ok(None),
    };
    Ok(Some(t))
}

impl Handler for PyHandler {
    fn on_event(&mut self, event: RuntimeEvent) {
        Python::attach(|py| {
            let result = event_tuple(py, event).and_then(|t| t.map(|t| self.callback.call1(py, t)).transpose());
            if let Err(e) = result {
                e.write_unraisable(py, Some(self.callback.bind(py)));
            }
        });
    }

    fn confirm_leader(&mut self, term: u64) -> Confirm {
        if !self.defer_confirm {
            return Confirm::Grant;
        }
        Python::attach(|py| {
            if let Err(e) = self.callback.call1(py, (tenure_runtime::CONFIRM_LEADER, term)) {
                e.write_unraisable(py, Some(self.callback.bind(py)));
            }
        });
        Confirm::Defer
    }
}

/// `(max_failures, max_step_downs, backoff_ms, max_backoff_ms)` (`None`: no limit) -> the
/// runtime's policy, checked by the runtime (a `ConfigError` naming the option).
type PolicyArgs<'py> = (u32, Option<u32>, Bound<'py, PyAny>, Bound<'py, PyAny>);

/// The default policy as Python values: `(max_failures, max_step_downs, backoff_ms, max_backoff_ms)`.
type PolicyDefaults = (u32, Option<u32>, u64, u64);

fn failure_policy(py: Python<'_>, args: PolicyArgs<'_>) -> PyResult<FailurePolicy> {
    let (max_failures, max_step_downs, backoff, max_backoff) = args;
    let first = millis(&backoff, "FailurePolicy.backoff_ms")?;
    let max = millis(&max_backoff, "FailurePolicy.max_backoff_ms")?;
    let mut policy = FailurePolicy::new(max_failures).backoff(first, max);
    policy.max_step_downs = max_step_downs;
    policy.validate().map_err(|e| runtime_error(py, &e))?;
    Ok(policy)
}

/// The runtime's default failure policy, as `PolicyArgs` (`tenure.FailurePolicy`'s defaults).
#[pyfunction]
pub(crate) fn failure_policy_defaults() -> PolicyDefaults {
    let d = FailurePolicy::default();
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    (d.max_failures, d.max_step_downs, ms(d.backoff), ms(d.max_backoff))
}

/// Checks a failure policy as the runtime will (`tenure.FailurePolicy` calls it when built).
#[pyfunction]
pub(crate) fn check_failure_policy(py: Python<'_>, policy: PolicyArgs<'_>) -> PyResult<()> {
    failure_policy(py, policy).map(|_| ())
}

/// The policy's retry delay in milliseconds after `failures` consecutive failures.
#[pyfunction]
pub(crate) fn failure_delay(py: Python<'_>, policy: PolicyArgs<'_>, failures: u32) -> PyResult<u64> {
    Ok(whole_ms(failure_policy(py, policy)?.delay(failures)))
}

fn whole_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Checks a duration argument of the package (`timeout_ms=`, `callback_timeout_ms=`) as every
/// `*_ms` argument is checked (see [`millis`]) and returns it.
#[pyfunction]
pub(crate) fn check_millis(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    millis(value, what).map(whole_ms)
}

/// A running runtime (see `tenure.Elector`); every method may be called from any thread.
#[pyclass(module = "tenure._native", name = "Runtime", frozen)]
pub(crate) struct PyRuntime {
    handle: Handle,
}

/// Starts the runtime: validates everything (typed errors, nothing left running on failure),
/// binds, reads and locks the state file, then delivers events to `callback` on its thread.
#[pyfunction]
#[pyo3(signature = (config, callback, *, bind=None, state_file=None, key_file=None, confirm_timeout_ms=None,
    handover_timeout_ms=None, defer_confirm=false, seed=None, log=false, http=None, ready_when=None,
    failure_policy=None, pod_label=None, service_account=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn_runtime(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    callback: Py<PyAny>,
    bind: Option<String>,
    state_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    confirm_timeout_ms: Option<Bound<'_, PyAny>>,
    handover_timeout_ms: Option<Bound<'_, PyAny>>,
    defer_confirm: bool,
    seed: Option<u64>,
    log: bool,
    http: Option<String>,
    ready_when: Option<String>,
    failure_policy: Option<PolicyArgs<'_>>,
    pod_label: Option<String>,
    service_account: Option<PathBuf>,
) -> PyResult<PyRuntime> {
    let options = RuntimeOptions {
        bind,
        state_file,
        key_file,
        confirm_timeout_ms,
        handover_timeout_ms,
        http,
        ready_when,
        pod_label,
        service_account,
    };
    // In the order of before: with two bad values, the same one is reported.
    let core = config_from(config)?;
    let policy = failure_policy.map(|p| self::failure_policy(py, p)).transpose()?;
    let mut rc = options.config(py, core)?.log(log);
    if let Some(p) = policy {
        rc.failure_policy = p;
    }
    let handler = PyHandler { callback, defer_confirm };
    let factory = move |mut init: EngineInit| {
        if let Some(seed) = seed {
            init.seed = seed;
        }
        native(init)
    };
    py.detach(|| tenure_runtime::spawn(rc, factory, handler))
        .map(|handle| PyRuntime { handle })
        .map_err(|e| runtime_error(py, &e))
}

impl PyRuntime {
    /// Runs a blocking handle call without the GIL and converts its error.
    fn call<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&Handle) -> Result<T, RuntimeError> + Send) -> PyResult<T> {
        let handle = &self.handle;
        py.detach(|| f(handle)).map_err(|e| runtime_error(py, &e))
    }
}

#[pymethods]
impl PyRuntime {
    /// The node id.
    #[getter]
    fn id(&self) -> &str {
        self.handle.id()
    }
    /// The local address the socket is bound to, `HOST:PORT`.
    #[getter]
    fn bound_addr(&self) -> String {
        self.handle.bound_addr().to_string()
    }
    /// Whether the runtime thread still runs.
    #[getter]
    fn running(&self) -> bool {
        self.handle.is_running()
    }
    /// The role (`unclustered`, `follower`, `candidate`, `leader`, `observer`) after the last
    /// round.
    #[getter]
    fn role(&self) -> &'static str {
        self.handle.role().as_str()
    }
    #[getter]
    fn is_leader(&self) -> bool {
        self.handle.is_leader()
    }
    #[getter]
    fn term(&self) -> u64 {
        self.handle.term()
    }
    #[getter]
    fn leader(&self) -> Option<String> {
        self.handle.leader()
    }
    /// The value the leader proclaims, as this node knows it, or None.
    #[getter]
    fn leader_value(&self) -> Option<String> {
        self.handle.leader_value()
    }
    /// The lease deadline on the runtime clock (`now_ms()`), or None.
    #[getter]
    fn lease_deadline(&self) -> Option<u64> {
        self.handle.lease_deadline_ms()
    }
    /// Milliseconds the lease has left (0 once expired), or None when not leading.
    #[getter]
    fn lease_remaining_ms(&self) -> Option<u64> {
        self.handle.lease_remaining_ms()
    }
    /// Whether this node leads `term` with a lease that holds now.
    fn lease_valid(&self, term: u64) -> bool {
        self.handle.lease_valid(term)
    }
    /// The runtime clock: monotonic milliseconds since the runtime started.
    fn now_ms(&self) -> u64 {
        self.handle.now_ms()
    }
    /// The error that stopped the runtime, if a fatal one did.
    fn fatal_error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.handle.fatal_error().map(|e| runtime_error(py, &e).into_value(py).into_any())
    }
    #[pyo3(signature = (peer=None))]
    fn transfer(&self, py: Python<'_>, peer: Option<String>) -> PyResult<()> {
        self.call(py, |h| h.transfer(peer.as_deref()))
    }
    fn inspect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let state = self.call(py, |h| h.inspect())?;
        json_loads(py)?.call1((state.to_string(),))
    }
    /// The runtime's metrics snapshot (`Handle::metrics`), as a dict.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_loads(py)?.call1((self.handle.metrics().to_json(),))
    }
    /// The HTTP sidecar's address, `HOST:PORT`, when one runs.
    #[getter]
    fn http_addr(&self) -> Option<String> {
        self.handle.http_addr().map(|a| a.to_string())
    }
    fn broadcast(&self, py: Python<'_>, payload: Vec<u8>) -> PyResult<()> {
        self.call(py, |h| h.broadcast(&payload))
    }
    fn proclaim(&self, py: Python<'_>, value: String) -> PyResult<()> {
        self.call(py, |h| h.proclaim(&value))
    }
    fn join(&self, py: Python<'_>, peer: String) -> PyResult<()> {
        self.call(py, |h| h.join(&peer))
    }
    fn leave(&self, py: Python<'_>, peer: String) -> PyResult<()> {
        self.call(py, |h| h.leave(&peer))
    }
    fn peer_down(&self, py: Python<'_>, peer: String, reason: &str) -> PyResult<()> {
        let reason = crate::convert::peer_down_reason_name(reason)?;
        self.call(py, |h| h.peer_down(&peer, reason))
    }
    fn confirm_leader(&self, py: Python<'_>, term: u64, granted: bool) -> PyResult<()> {
        self.call(py, |h| h.confirm_leader(term, granted))
    }
    /// `Handle::set_leader_work_running`: whether the elector's leader work is still running.
    fn set_leader_work_running(&self, running: bool) {
        self.handle.set_leader_work_running(running);
    }
    /// Reports a failure of leader work to the runtime's failure policy. Returns the delay in
    /// milliseconds before running it again in this leadership, or `None` (stepped down,
    /// stopping, or queued from the runtime thread).
    fn leader_work_failed(&self, py: Python<'_>, term: u64) -> PyResult<Option<u64>> {
        let verdict = self.call(py, |h| h.leader_work_failed(term))?;
        Ok(match verdict {
            LeaderWorkVerdict::Retry { after } => Some(whole_ms(after)),
            _ => None,
        })
    }
    /// Asks for a graceful stop without waiting.
    fn request_stop(&self) {
        self.handle.request_stop()
    }
    /// Stops gracefully (hand over, wait for the new leader up to the bound) and returns once the
    /// runtime thread ended. `handover_timeout_ms` overrides the configured bound.
    #[pyo3(signature = (handover_timeout_ms=None))]
    fn stop(&self, py: Python<'_>, handover_timeout_ms: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let bound = opt_millis(handover_timeout_ms.as_ref(), "handover_timeout_ms")?;
        let handle = &self.handle;
        py.detach(|| match bound {
            Some(t) => handle.stop_with(t),
            None => handle.stop(),
        });
        Ok(())
    }
    fn __repr__(&self) -> String {
        format!("<tenure._native.Runtime id={:?} running={}>", self.handle.id(), self.handle.is_running())
    }
}

/// The runtime's command line (`tenure run ...`): returns the exit status. Runs without the GIL;
/// SIGTERM/SIGINT stop it gracefully. `reexec` is the argv that runs this command line again
/// (`[sys.executable, "-m", "tenure"]`), for a leader-only command's supervisor.
#[pyfunction]
#[pyo3(signature = (argv, reexec=None))]
pub(crate) fn run_cli(py: Python<'_>, argv: Vec<String>, reexec: Option<Vec<String>>) -> i32 {
    py.detach(|| tenure_runtime::cli::main_with(argv, native, reexec))
}

/// Checks what `spawn_runtime` would be given, as the runtime checks it at start
/// (`RuntimeConfig::validate`: id, peers, bind, key file, options, the core's configuration), so
/// that the constructors raise where the bad value is given.
#[pyfunction]
#[pyo3(signature = (config, *, bind=None, state_file=None, key_file=None, http=None, ready_when=None,
    confirm_timeout_ms=None, handover_timeout_ms=None, pod_label=None, service_account=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn validate_runtime(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    bind: Option<String>,
    state_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    http: Option<String>,
    ready_when: Option<String>,
    confirm_timeout_ms: Option<Bound<'_, PyAny>>,
    handover_timeout_ms: Option<Bound<'_, PyAny>>,
    pod_label: Option<String>,
    service_account: Option<PathBuf>,
) -> PyResult<()> {
    let options = RuntimeOptions {
        bind,
        state_file,
        key_file,
        confirm_timeout_ms,
        handover_timeout_ms,
        http,
        ready_when,
        pod_label,
        service_account,
    };
    options.config(py, config_from(config)?)?.validate().map(|_| ()).map_err(|e| runtime_error(py, &e))
}

/// The runtime's options as `spawn_runtime` and `validate_runtime` both take them: one place
/// turns them into a `RuntimeConfig`, so that what is validated is what is started.
struct RuntimeOptions<'py> {
    bind: Option<String>,
    state_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    confirm_timeout_ms: Option<Bound<'py, PyAny>>,
    handover_timeout_ms: Option<Bound<'py, PyAny>>,
    http: Option<String>,
    ready_when: Option<String>,
    pod_label: Option<String>,
    service_account: Option<PathBuf>,
}

impl RuntimeOptions<'_> {
    fn config(self, py: Python<'_>, core: tenure::Config) -> PyResult<RuntimeConfig> {
        let mut rc = RuntimeConfig::new(core);
        rc.bind = self.bind;
        rc.state_file = self.state_file;
        rc.key_file = self.key_file;
        rc.confirm_timeout = opt_millis(self.confirm_timeout_ms.as_ref(), "confirm_timeout_ms")?;
        rc.handover_timeout = opt_millis(self.handover_timeout_ms.as_ref(), "handover_timeout_ms")?;
        rc.http = self.http;
        if let Some(w) = self.ready_when {
            rc.ready_when = w.parse().map_err(|e| runtime_error(py, &e))?;
        }
        rc.pod_label = self.pod_label;
        rc.service_account = self.service_account;
        Ok(rc)
    }
}
