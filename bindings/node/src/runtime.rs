//! The runtime (`tenure-runtime`) for JavaScript: `NativeRuntimeConfig` (validated when built),
//! `NativeRuntime` (a running node's handle) and `runCli`. Events cross to the JS thread through
//! a napi thread-safe function owned by the runtime's handler: when the runtime thread ends it is
//! released, so the process can exit by itself after `stop()`.

use std::time::Duration;

use napi::bindgen_prelude::{AsyncTask, Buffer, Env, Function, JsValue, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Result, Status, Task};
use napi_derive::napi;
use tenure_runtime::{
    Confirm, FailurePolicy, Handle, Handler, LeaderWorkVerdict, RuntimeConfig, RuntimeError, RuntimeEvent,
};

use crate::config_from_js;
use crate::conv::{boolean, is_nullish, object, only_keys, opt_string, prop, u64_arg, MAX_SAFE};

/// Throws an `Error` with the runtime error's stable `code` and its family as `kind` (the JS
/// layer picks the `TenureError` subclass from them). Option names in the message are spelled
/// as this API spells them (`electionTimeoutMin`).
pub(crate) fn runtime_error(env: &Env, e: &RuntimeError) -> napi::Error {
    let message = tenure_runtime::vocabulary::camel_case_names(&e.to_string());
    let err = napi::JsError::from(napi::Error::new(e.code(), message)).into_unknown(*env);
    if let Ok(mut obj) = err.coerce_to_object() {
        let _ = obj.set("kind", e.kind());
    }
    unsafe { napi::sys::napi_throw(env.raw(), err.raw()) };
    napi::Error::from_status(Status::PendingException)
}

fn ms(env: &Env, v: Option<Unknown>, what: &str) -> Result<Option<Duration>> {
    match v {
        Some(v) if !is_nullish(&v)? => Ok(Some(Duration::from_millis(u64_arg(env, &v, what)?))),
        _ => Ok(None),
    }
}

const OPTION_KEYS: &[&str] = &[
    "bind",
    "stateFile",
    "keyFile",
    "confirmTimeout",
    "handoverTimeout",
    "resolveInterval",
    "log",
    "deferConfirm",
    "http",
    "readyWhen",
    "failurePolicy",
];

const POLICY_KEYS: &[&str] = &["maxFailures", "maxStepDowns", "backoff", "maxBackoff"];

/// `{ maxFailures, maxStepDowns, backoff, maxBackoff }` (durations in ms; each optional, the
/// runtime's defaults for the rest) -> the runtime's `FailurePolicy`, checked by the runtime.
fn failure_policy(env: &Env, v: &Unknown) -> Result<FailurePolicy> {
    let o = object(env, v, "options.failurePolicy")?;
    only_keys(env, &o, "options.failurePolicy", POLICY_KEYS)?;
    let mut policy = FailurePolicy::default();
    let count = |name: &str, what: &str| -> Result<Option<u32>> {
        match prop(&o, name)? {
            Some(v) if !is_nullish(&v)? => Ok(Some(u32::try_from(u64_arg(env, &v, what)?).unwrap_or(u32::MAX))),
            _ => Ok(None),
        }
    };
    if let Some(n) = count("maxFailures", "options.failurePolicy.maxFailures")? {
        policy.max_failures = n;
    }
    policy.max_step_downs = count("maxStepDowns", "options.failurePolicy.maxStepDowns")?;
    if let Some(d) = ms(env, prop(&o, "backoff")?, "options.failurePolicy.backoff")? {
        policy.backoff = d;
    }
    if let Some(d) = ms(env, prop(&o, "maxBackoff")?, "options.failurePolicy.maxBackoff")? {
        policy.max_backoff = d;
    }
    policy.validate().map_err(|e| runtime_error(env, &e))?;
    Ok(policy)
}

/// A runtime configuration, validated when built (ids, peers, bind address, the core's
/// configuration, option ranges) so that bad input fails at the `Elector`'s construction.
#[napi]
pub struct NativeRuntimeConfig {
    config: RuntimeConfig,
    defer_confirm: bool,
}

#[napi]
impl NativeRuntimeConfig {
    /// `new NativeRuntimeConfig(nodeConfig, { bind, stateFile, keyFile, confirmTimeout,
    /// handoverTimeout, resolveInterval, log, deferConfirm, http, readyWhen, failurePolicy })`.
    /// `failurePolicy`: the runtime's `FailurePolicy` (`{ maxFailures, maxStepDowns, backoff,
    /// maxBackoff }`, durations in ms).
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, node: Unknown, options: Unknown) -> Result<Self> {
        let node = config_from_js(&env, &node)?;
        let mut config = RuntimeConfig::new(node);
        let mut defer_confirm = false;
        if !is_nullish(&options)? {
            let o = object(&env, &options, "options")?;
            only_keys(&env, &o, "options", OPTION_KEYS)?;
            config.bind = opt_string(&env, prop(&o, "bind")?.as_ref(), "options.bind")?;
            config.state_file = opt_string(&env, prop(&o, "stateFile")?.as_ref(), "options.stateFile")?.map(Into::into);
            config.key_file = opt_string(&env, prop(&o, "keyFile")?.as_ref(), "options.keyFile")?.map(Into::into);
            config.confirm_timeout = ms(&env, prop(&o, "confirmTimeout")?, "options.confirmTimeout")?;
            config.handover_timeout = ms(&env, prop(&o, "handoverTimeout")?, "options.handoverTimeout")?;
            if let Some(d) = ms(&env, prop(&o, "resolveInterval")?, "options.resolveInterval")? {
                config.resolve_interval = d;
            }
            config.http = opt_string(&env, prop(&o, "http")?.as_ref(), "options.http")?;
            if let Some(w) = opt_string(&env, prop(&o, "readyWhen")?.as_ref(), "options.readyWhen")? {
                config.ready_when = w.parse().map_err(|e| runtime_error(&env, &e))?;
            }
            if let Some(v) = prop(&o, "log")? {
                config.log = boolean(&env, &v, "options.log")?;
            }
            if let Some(v) = prop(&o, "failurePolicy")? {
                if !is_nullish(&v)? {
                    config.failure_policy = failure_policy(&env, &v)?;
                }
            }
            if let Some(v) = prop(&o, "deferConfirm")? {
                defer_confirm = boolean(&env, &v, "options.deferConfirm")?;
            }
        }
        config.validate().map_err(|e| runtime_error(&env, &e))?;
        Ok(NativeRuntimeConfig { config, defer_confirm })
    }

    /// Binds the socket and starts the node; `onEvent` receives every `RuntimeEventJs`, in order,
    /// on the JS thread, the last being `{ type: "stopped" }`.
    #[napi(catch_unwind, ts_args_type = "onEvent: (event: RuntimeEventJs) => void")]
    pub fn spawn(&self, env: Env, on_event: Function<RuntimeEventJs, ()>) -> Result<NativeRuntime> {
        let tsfn =
            on_event.build_threadsafe_function().callee_handled::<false>().build_callback(|ctx| Ok(ctx.value))?;
        let handler = JsHandler { tsfn, defer_confirm: self.defer_confirm };
        let handle = tenure_runtime::spawn(self.config.clone(), tenure_runtime::native, handler)
            .map_err(|e| runtime_error(&env, &e))?;
        Ok(NativeRuntime { handle })
    }
}

type Tsfn = ThreadsafeFunction<RuntimeEventJs, (), RuntimeEventJs, Status, false>;

struct JsHandler {
    tsfn: Tsfn,
    defer_confirm: bool,
}

impl JsHandler {
    fn send(&self, e: RuntimeEventJs) {
        // Unbounded queue: never blocks the runtime thread.
        let _ = self.tsfn.call(e, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

impl Handler for JsHandler {
    fn on_event(&mut self, event: RuntimeEvent) {
        if let Some(e) = RuntimeEventJs::from_event(event) {
            self.send(e)
        }
    }
    fn confirm_leader(&mut self, term: u64) -> Confirm {
        if !self.defer_confirm {
            return Confirm::Grant;
        }
        self.send(RuntimeEventJs::new(tenure_runtime::CONFIRM_LEADER, Some(term)));
        Confirm::Defer
    }
}

fn num(v: u64) -> f64 {
    // Terms are bounded by the core far below 2^53; clamp rather than round silently.
    v.min(MAX_SAFE) as f64
}

/// One runtime event as a plain object (`type` in snake_case, as the JSON lines name them).
#[napi(object)]
pub struct RuntimeEventJs {
    /// `started`, `leader`, `follower`, `peer_joined`, `peer_left`, `message`, `warning`,
    /// `confirm_leader`, `fatal` or `stopped`.
    #[napi(js_name = "type")]
    pub kind: String,
    pub term: Option<f64>,
    pub id: Option<String>,
    pub bound_addr: Option<String>,
    /// The leader (`follower`); `null` crosses as `undefined`.
    pub leader: Option<String>,
    /// The leader's proclaimed value (`leader`, `follower`).
    pub value: Option<String>,
    pub peer: Option<String>,
    /// `message`: the peer that sent it.
    pub sender: Option<String>,
    pub payload: Option<Buffer>,
    /// `warning`: its code; `fatal`: the error's code.
    pub code: Option<String>,
    pub kind_of_error: Option<String>,
    pub message: Option<String>,
}

impl RuntimeEventJs {
    fn new(kind: &str, term: Option<u64>) -> Self {
        RuntimeEventJs {
            kind: kind.into(),
            term: term.map(num),
            id: None,
            bound_addr: None,
            leader: None,
            value: None,
            peer: None,
            sender: None,
            payload: None,
            code: None,
            kind_of_error: None,
            message: None,
        }
    }
    fn from_event(e: RuntimeEvent) -> Option<Self> {
        // The kind is the runtime's word for the event (`RuntimeEvent::kind`), as everywhere.
        let kind = e.kind();
        Some(match e {
            RuntimeEvent::Started { id, bound_addr, term } => {
                RuntimeEventJs { id: Some(id), bound_addr: Some(bound_addr.to_string()), ..Self::new(kind, Some(term)) }
            }
            RuntimeEvent::Leader { term, value } => RuntimeEventJs { value, ..Self::new(kind, Some(term)) },
            RuntimeEvent::Follower { term, leader, value } => {
                RuntimeEventJs { leader, value, ..Self::new(kind, Some(term)) }
            }
            RuntimeEvent::PeerJoined { peer } => RuntimeEventJs { peer: Some(peer), ..Self::new(kind, None) },
            RuntimeEvent::PeerLeft { peer } => RuntimeEventJs { peer: Some(peer), ..Self::new(kind, None) },
            RuntimeEvent::Message { from, payload } => {
                RuntimeEventJs { sender: Some(from), payload: Some(payload.into()), ..Self::new(kind, None) }
            }
            RuntimeEvent::Warning { code, message } => {
                let message = tenure_runtime::vocabulary::camel_case_names(&message);
                RuntimeEventJs { code: Some(code), message: Some(message), ..Self::new(kind, None) }
            }
            RuntimeEvent::Fatal { error } => RuntimeEventJs {
                code: Some(error.code().into()),
                kind_of_error: Some(error.kind().into()),
                message: Some(tenure_runtime::vocabulary::camel_case_names(&error.to_string())),
                ..Self::new(kind, None)
            },
            RuntimeEvent::Stopped { term } => Self::new(kind, Some(term)),
            _ => return None,
        })
    }
}

/// A running runtime (`tenure_runtime::Handle`). Commands wait one loop round (well under a
/// millisecond); `requestStop` returns at once and `{ type: "stopped" }` follows.
#[napi]
pub struct NativeRuntime {
    handle: Handle,
}

fn peer_arg(env: &Env, v: &Unknown, what: &str) -> Result<Option<String>> {
    opt_string(env, Some(v), what)
}

#[napi]
impl NativeRuntime {
    /// Hands leadership to `peer` (or, with `null`, the core's transfer target).
    #[napi(catch_unwind, ts_args_type = "peer?: string | null")]
    pub fn transfer(&self, env: Env, peer: Unknown) -> Result<()> {
        let peer = peer_arg(&env, &peer, "peer")?;
        self.handle.transfer(peer.as_deref()).map_err(|e| runtime_error(&env, &e))
    }
    /// The core's `inspect` as JSON (the SPEC's snake_case keys).
    #[napi(catch_unwind)]
    pub fn inspect_json(&self, env: Env) -> Result<String> {
        self.handle.inspect().map(|i| i.to_string()).map_err(|e| runtime_error(&env, &e))
    }
    /// The runtime's metrics snapshot as JSON (`Handle::metrics`, snake_case keys).
    #[napi(catch_unwind)]
    pub fn metrics_json(&self) -> String {
        self.handle.metrics().to_json()
    }
    /// The HTTP sidecar's address (`HOST:PORT`), when one runs.
    #[napi(getter, catch_unwind)]
    pub fn http_addr(&self) -> Option<String> {
        self.handle.http_addr().map(|a| a.to_string())
    }
    #[napi(catch_unwind, ts_args_type = "payload: Uint8Array")]
    pub fn broadcast(&self, env: Env, payload: Unknown) -> Result<()> {
        let bytes = crate::conv::bytes(&env, &payload, "payload")?;
        self.handle.broadcast(bytes).map_err(|e| runtime_error(&env, &e))
    }
    #[napi(catch_unwind, ts_args_type = "value: string")]
    pub fn proclaim(&self, env: Env, value: Unknown) -> Result<()> {
        let value = crate::conv::string(&env, &value, "value")?;
        self.handle.proclaim(&value).map_err(|e| runtime_error(&env, &e))
    }
    #[napi(catch_unwind, ts_args_type = "peer: string")]
    pub fn join(&self, env: Env, peer: Unknown) -> Result<()> {
        let peer = crate::conv::string(&env, &peer, "peer")?;
        self.handle.join(&peer).map_err(|e| runtime_error(&env, &e))
    }
    #[napi(catch_unwind, ts_args_type = "peer: string")]
    pub fn leave(&self, env: Env, peer: Unknown) -> Result<()> {
        let peer = crate::conv::string(&env, &peer, "peer")?;
        self.handle.leave(&peer).map_err(|e| runtime_error(&env, &e))
    }
    /// Answers a deferred confirmation.
    #[napi(catch_unwind, ts_args_type = "term: number, granted: boolean")]
    pub fn confirm_leader(&self, env: Env, term: Unknown, granted: Unknown) -> Result<()> {
        let term = u64_arg(&env, &term, "term")?;
        let granted = boolean(&env, &granted, "granted")?;
        self.handle.confirm_leader(term, granted).map_err(|e| runtime_error(&env, &e))
    }
    /// Whether the elector's leader work is still running (`Handle::set_leader_work_running`):
    /// a transfer's `TimeoutNow` waits for it after a step-down.
    #[napi(catch_unwind, ts_args_type = "running: boolean")]
    pub fn set_leader_work_running(&self, env: Env, running: Unknown) -> Result<()> {
        let running = boolean(&env, &running, "running")?;
        self.handle.set_leader_work_running(running);
        Ok(())
    }
    /// Reports a failure of the leader work of `term` to the runtime's failure policy. Returns the
    /// delay in ms before running it again in this leadership, or `null` (stepped down, or
    /// stopping: a `fatal` event with `leader_work_failed` follows).
    #[napi(catch_unwind, ts_args_type = "term: number")]
    pub fn leader_work_failed(&self, env: Env, term: Unknown) -> Result<Option<f64>> {
        let term = u64_arg(&env, &term, "term")?;
        let verdict = self.handle.leader_work_failed(term).map_err(|e| runtime_error(&env, &e))?;
        Ok(match verdict {
            LeaderWorkVerdict::Retry { after } => Some(num(u64::try_from(after.as_millis()).unwrap_or(u64::MAX))),
            _ => None,
        })
    }
    /// Requests a graceful stop (`handoverTimeout` in ms overrides the configured bound); returns
    /// at once, `{ type: "stopped" }` follows.
    #[napi(catch_unwind, ts_args_type = "handoverTimeout?: number | null")]
    pub fn request_stop(&self, env: Env, handover_timeout: Unknown) -> Result<()> {
        match ms(&env, Some(handover_timeout), "handoverTimeout")? {
            None => self.handle.request_stop(),
            Some(d) => {
                // `stop_with` waits for the runtime thread: do that off the JS thread.
                let h = self.handle.clone();
                std::thread::Builder::new()
                    .name("tenure-stop".into())
                    .spawn(move || h.stop_with(d))
                    .map_err(|e| napi::Error::from_reason(e.to_string()))?;
            }
        }
        Ok(())
    }
    #[napi(getter, catch_unwind)]
    pub fn running(&self) -> bool {
        self.handle.is_running()
    }
    #[napi(getter, catch_unwind)]
    pub fn role(&self) -> String {
        self.handle.role().as_str().into()
    }
    #[napi(getter, catch_unwind)]
    pub fn term(&self) -> f64 {
        num(self.handle.term())
    }
    #[napi(getter, catch_unwind)]
    pub fn leader(&self) -> Option<String> {
        self.handle.leader()
    }
    #[napi(getter, catch_unwind)]
    pub fn leader_value(&self) -> Option<String> {
        self.handle.leader_value()
    }
    #[napi(getter, catch_unwind)]
    pub fn bound_addr(&self) -> String {
        self.handle.bound_addr().to_string()
    }
    /// Milliseconds the lease has left (0 when expired), or `null` when not leading.
    #[napi(getter, catch_unwind)]
    pub fn lease_remaining(&self) -> Option<f64> {
        self.handle.lease_remaining_ms().map(num)
    }
    /// The lease deadline on the runtime's clock ([`NativeRuntime::now_ms`]), or `null` when not
    /// leading with a confirmed lease.
    #[napi(getter, catch_unwind)]
    pub fn lease_deadline(&self) -> Option<f64> {
        self.handle.lease_deadline_ms().map(num)
    }
    /// The runtime's clock: monotonic milliseconds.
    #[napi(catch_unwind)]
    pub fn now_ms(&self) -> f64 {
        num(self.handle.now_ms())
    }
    /// Whether this node leads `term` with a lease that holds now (the runtime's decision).
    #[napi(catch_unwind, ts_args_type = "term: number")]
    pub fn lease_valid(&self, env: Env, term: Unknown) -> Result<bool> {
        Ok(self.handle.lease_valid(u64_arg(&env, &term, "term")?))
    }
}

/// `tenure_runtime::cli::main` on a worker thread: resolves with the exit status.
pub struct Cli {
    args: Vec<String>,
    reexec: Option<Vec<String>>,
}

impl Task for Cli {
    type Output = i32;
    type JsValue = i32;
    fn compute(&mut self) -> Result<i32> {
        let args = std::mem::take(&mut self.args);
        let reexec = self.reexec.take();
        std::panic::catch_unwind(move || tenure_runtime::cli::main_with(args, tenure_runtime::native, reexec))
            .map_err(|_| napi::Error::from_reason("tenure: the command line panicked"))
    }
    fn resolve(&mut self, _env: Env, output: i32) -> Result<i32> {
        Ok(output)
    }
}

/// Runs the runtime's command line (`argv` with the program name first) off the JS thread.
/// `reexec` is the argv that runs this command line again (`[process.execPath, cliPath]`), for a
/// leader-only command's supervisor.
#[napi(catch_unwind, ts_args_type = "argv: string[], reexec?: string[]", ts_return_type = "Promise<number>")]
pub fn run_cli(env: Env, argv: Unknown, reexec: Option<Unknown>) -> Result<AsyncTask<Cli>> {
    let args = crate::conv::strings(&env, &argv, "argv")?;
    let reexec = reexec.map(|r| crate::conv::strings(&env, &r, "reexec")).transpose()?;
    Ok(AsyncTask::new(Cli { args, reexec }))
}
