//! The leader-only command of the command line (`tenure run ... -- CMD ARGS...`): the runtime's
//! side. It starts a [supervisor](super::supervisor) process once, then orders it to start the
//! command when this node leads with a lease, forwards every lease renewal as an absolute
//! monotonic deadline (`crate::clock`), orders a stop when leadership is lost, and hands leadership over
//! through the core when the command fails. The rules are in `docs/command.md`.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::supervisor::SUBCOMMAND;
use crate::clock::{instant_to_ns, ns_to_instant};
use crate::event::{json_line, json_str, warning_fields};
use crate::os::process::{end_tree, kill_tree, spawn_supervisor, Orders, Reports};
use crate::{Handle, Handler, LeaderWorkVerdict, RuntimeEvent};

/// The default `--kill-grace`: milliseconds between SIGTERM and SIGKILL on an ordered stop.
pub const DEFAULT_KILL_GRACE: u64 = 1000;

/// How often a handover re-checks whether the command is gone while it waits for the
/// supervisor's report (a bound on a missed notification, not a poll of the runtime).
const TICK: Duration = Duration::from_millis(5);

/// The leader-only command: what to run and how to re-invoke this command line as its
/// supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// `CMD ARGS...`.
    pub argv: Vec<String>,
    /// Milliseconds between SIGTERM and SIGKILL on an ordered stop (never past the lease deadline).
    pub kill_grace: u64,
    /// The argv prefix that runs the supervisor (`PREFIX __supervise ...`): `tenure-supervise` (see
    /// `super::own_supervisor`), else this command line again (`[current_exe]`, `[python, -m,
    /// tenure]`, `[node, cli.js]`).
    pub reexec: Vec<String>,
}

/// How long past the command's lease deadline the runtime waits for the supervisor's report
/// before it ends the command's process group itself (see [`Runner::backstop`]).
const BACKSTOP: Duration = Duration::from_millis(20);

/// How long the guard has to end the command's tree before the runtime SIGKILLs its group.
const GUARD_GRACE: Duration = Duration::from_millis(10);

/// Test hook (documented in `docs/command.md`): `TENURE_TEST_CLOSE_WATCHDOG_MS=N` closes the
/// supervisor's socket N ms after the watchdog is armed, while this process lives on — what the
/// watchdog sees when a runtime thread ends inside a living Python or Node.js process.
fn close_socket_for_test(sock: &Orders) {
    let Some(ms) = std::env::var("TENURE_TEST_CLOSE_WATCHDOG_MS").ok().and_then(|v| v.parse::<u64>().ok()) else {
        return;
    };
    if let Ok(sock) = sock.try_clone() {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(ms));
            sock.close();
        });
    }
}

/// What the supervisor currently runs (or was ordered to start) for this node.
struct Active {
    term: u64,
    deadline_ns: u64,
    pid: Option<u32>,
    stopping: bool,
    /// When the runtime began ending the command itself (the supervisor did not by the deadline):
    /// `CLOCK_MONOTONIC` ns.
    backstop_ns: Option<u64>,
}

struct State {
    supervisor: Option<(Orders, Child)>,
    /// After a failed attempt to start the supervisor: when to try again (once a second).
    retry_supervisor: Option<Instant>,
    active: Option<Active>,
    /// The last term whose command ended by itself (exit 0 or failure): not started again.
    done_term: Option<u64>,
    /// The last term whose `leader` event was delivered (printed): the command of a term starts
    /// only after it, so its `command_started` line never comes before that `leader` line.
    announced: Option<u64>,
    /// A voluntary handover is under way: start nothing.
    hold: bool,
    /// When the command may start again after a failure (the failure policy's retry delay).
    not_before: Option<Instant>,
    shutdown: bool,
    /// The supervisor watches this process's pidfd: it can prove this process's death.
    watching: bool,
    /// The death notices the supervisor (the watchdog) holds.
    armed: Option<Arc<crate::notice::Armed>>,
}

impl State {
    /// A command runs, or is being stopped and the supervisor has not reported its end. One the
    /// runtime ended itself is gone, whatever a stopped supervisor reports later.
    fn command_alive(&self) -> bool {
        self.active.as_ref().is_some_and(|a| a.backstop_ns.is_none()) && self.supervisor.is_some()
    }
}

struct Inner {
    spec: CommandSpec,
    id: String,
    emit: Box<dyn Fn(String) + Send + Sync>,
    state: Mutex<State>,
    changed: Condvar,
    /// Bumped by every [`Runner::wake`] (a leadership or lease change published by the runtime, a
    /// report, a hold): [`Runner::follow`] sleeps until it moves or a deadline of its own comes.
    pulse: (Mutex<u64>, Condvar),
    handle: OnceLock<Handle>,
}

/// Runs the command while this node leads. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Runner {
    inner: Arc<Inner>,
}

impl Runner {
    /// `emit` prints one JSON event line (without `ts_ms`, `id` and `event`: see [`Runner::line`]).
    pub(crate) fn new(spec: CommandSpec, id: String, emit: impl Fn(String) + Send + Sync + 'static) -> Self {
        let state = State {
            supervisor: None,
            retry_supervisor: None,
            active: None,
            done_term: None,
            announced: None,
            hold: false,
            not_before: None,
            shutdown: false,
            watching: false,
            armed: None,
        };
        Runner {
            inner: Arc::new(Inner {
                spec,
                id,
                emit: Box::new(emit),
                state: Mutex::new(state),
                changed: Condvar::new(),
                pulse: (Mutex::new(0), Condvar::new()),
                handle: OnceLock::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn line(&self, event: &str, rest: &str) {
        (self.inner.emit)(json_line(crate::clock::wall_ms(), &self.inner.id, event, rest));
    }

    fn warn(&self, code: &str, message: &str) {
        log::warn!(target: "tenure", "{}: {message} [{code}]", self.inner.id);
        self.line("warning", &warning_fields(code, message));
    }

    /// Starts the supervisor process now (so the first leadership does not wait for it), then the
    /// thread that follows the runtime's leadership.
    pub(crate) fn start(&self, handle: Handle) {
        // Renewals and leadership changes wake the runner as the runtime publishes them.
        let weak = Arc::downgrade(&self.inner);
        handle.shared.snapshot.watch(Box::new(move || {
            if let Some(inner) = weak.upgrade() {
                Runner { inner }.wake();
            }
        }));
        let _ = self.inner.handle.set(handle);
        let mut st = self.lock();
        self.ensure_supervisor(&mut st);
        drop(st);
        let me = self.clone();
        let _ = std::thread::Builder::new().name("tenure-command".into()).spawn(move || me.follow());
    }

    fn ensure_supervisor(&self, st: &mut State) -> bool {
        if st.supervisor.is_some() {
            return true;
        }
        if st.retry_supervisor.is_some_and(|t| Instant::now() < t) {
            return false;
        }
        let spec = &self.inner.spec;
        let result = (|| {
            let Some(program) = spec.reexec.first() else {
                return Err(std::io::Error::other("no command line to re-invoke as the supervisor"));
            };
            let mut cmd = std::process::Command::new(program);
            cmd.args(&spec.reexec[1..]).arg(SUBCOMMAND).arg(spec.kill_grace.to_string()).arg("--").args(&spec.argv);
            // Its own session (Unix) or process group (Windows), its stdout and stderr this
            // process's: see `spawn_supervisor`.
            spawn_supervisor(cmd)
        })();
        match result {
            Ok((ours, reader, child)) => {
                // The proof of this process's death that the watchdog acts on (see
                // `super::watchdog`). Without it the watchdog is never armed; where this OS has
                // none, the command line has said so already (`death_notice_off`).
                st.watching = match crate::os::process::DEATH_PROOF
                    .map_err(std::io::Error::other)
                    .and_then(|()| crate::os::process::own_death_proof())
                    .and_then(|fd| ours.send_with(b"watch\n", &fd))
                {
                    Ok(()) => true,
                    Err(_) if crate::os::process::DEATH_PROOF.is_err() => false,
                    Err(e) => {
                        self.warn(
                            "death_notice_off",
                            &format!(
                                "cannot hand the watchdog a proof of this process's death ({e}): a crash fails over by \
                                 the lease"
                            ),
                        );
                        false
                    }
                };
                st.armed = None;
                let me = self.clone();
                let _ = std::thread::Builder::new().name("tenure-supervisor".into()).spawn(move || me.reports(reader));
                st.supervisor = Some((ours, child));
                true
            }
            Err(e) => {
                st.retry_supervisor = Some(Instant::now() + Duration::from_secs(1));
                self.warn("command_failed", &format!("cannot start the command's supervisor {:?}: {e}", spec.reexec));
                false
            }
        }
    }

    /// Writes an order. A supervisor that cannot take it has closed its socket: the report reader
    /// sees the end of file and treats it (the command failed, the supervisor is started again).
    fn order(&self, st: &mut State, line: &str) {
        if let Some((sock, _)) = &st.supervisor {
            let _ = sock.send(format!("{line}\n").as_bytes());
        }
    }

    /// Follows the runtime: start, renew, stop (see the module docs).
    fn follow(&self) {
        let Some(handle) = self.inner.handle.get().cloned() else { return };
        loop {
            let seen = self.pulse();
            let mut st = self.lock();
            let term = handle.term();
            let lease = handle.lease_deadline();
            let leading =
                handle.is_leader() && handle.term() == term && handle.is_running() && st.announced == Some(term);
            let backoff = st.not_before.is_some_and(|t| Instant::now() < t);
            let want = leading
                && !self.inner.spec.argv.is_empty()
                && !st.hold
                && !st.shutdown
                && !backoff
                && st.done_term != Some(term);
            if !st.shutdown {
                self.ensure_supervisor(&mut st);
            }
            self.arm(&mut st, &handle);
            match st.active.as_mut() {
                None => {
                    // A lease already past (a runtime that resumes from a pause) starts nothing.
                    if let (true, Some(lease)) = (want, lease.filter(|l| *l > Instant::now())) {
                        if self.ensure_supervisor(&mut st) {
                            let deadline_ns = instant_to_ns(lease);
                            st.active =
                                Some(Active { term, deadline_ns, pid: None, stopping: false, backstop_ns: None });
                            self.order(&mut st, &format!("start {term} {deadline_ns} {}", self.inner.id));
                        }
                    }
                }
                Some(a) if !a.stopping => {
                    if !want || a.term != term {
                        a.stopping = true;
                        self.order(&mut st, "stop");
                    } else if let Some(lease) = lease {
                        let deadline_ns = instant_to_ns(lease);
                        // A changed lease (not the same one converted again, a few µs apart).
                        if deadline_ns.abs_diff(a.deadline_ns) > 500_000 {
                            a.deadline_ns = deadline_ns;
                            self.order(&mut st, &format!("lease {deadline_ns}"));
                        }
                    }
                }
                Some(_) => {}
            }
            self.backstop(&mut st);
            if st.shutdown && st.active.is_none() {
                return;
            }
            let next = Self::next_deadline(&st);
            drop(st);
            self.sleep(seen, next);
        }
    }

    /// Keeps the watchdog armed with the notices the runtime publishes while this node leads, and
    /// disarmed during a voluntary handover or a stop (see `super::watchdog`).
    fn arm(&self, st: &mut State, handle: &Handle) {
        let want = if st.hold || st.shutdown || !st.watching { None } else { handle.shared.notices.get() };
        let same = match (&want, &st.armed) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if same {
            return;
        }
        let Some((sock, _)) = &st.supervisor else { return };
        match &want {
            Some(armed) => {
                let Some(socket) = handle.shared.notices.socket() else { return };
                let order = super::watchdog::arm_order(&self.inner.id, armed);
                if sock.send_with(order.as_bytes(), &socket).is_err() {
                    return;
                }
                close_socket_for_test(sock);
            }
            None => {
                let _ = sock.send(b"disarm\n");
            }
        }
        st.armed = want;
    }

    /// The next instant at which [`Runner::follow`] has something to do without being woken: the
    /// end of a restart backoff, a retry of the supervisor, a backstop step.
    fn next_deadline(st: &State) -> Option<Instant> {
        let backstop = st.active.as_ref().filter(|a| a.pid.is_some()).map(|a| match a.backstop_ns {
            None => ns_to_instant(a.deadline_ns.saturating_add(BACKSTOP.as_nanos() as u64)),
            Some(at) => ns_to_instant(at.saturating_add(GUARD_GRACE.as_nanos() as u64)),
        });
        [st.not_before, st.retry_supervisor, backstop].into_iter().flatten().min()
    }

    fn pulse(&self) -> u64 {
        *self.inner.pulse.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sleeps until a [`Runner::wake`] after the pulse `seen`, or until `until`.
    fn sleep(&self, seen: u64, until: Option<Instant>) {
        let (lock, cvar) = &self.inner.pulse;
        let mut pulse = lock.lock().unwrap_or_else(|p| p.into_inner());
        while *pulse == seen {
            pulse = match until {
                Some(t) => {
                    let left = t.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return;
                    }
                    cvar.wait_timeout(pulse, left).map_or_else(|p| p.into_inner().0, |(g, _)| g)
                }
                None => cvar.wait(pulse).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }

    /// The supervisor holds the command to its lease deadline, but a supervisor that is stopped
    /// (SIGSTOP of its pid or its session) holds nothing. So the runtime, while it runs, ends the
    /// command's process group itself once the last deadline it sent is [`BACKSTOP`] past with no
    /// report that the command ended. The group's leader is the supervisor's unreaped child until
    /// the supervisor reports it, so its id cannot have been reused. (On Windows the runtime cannot
    /// reach the command's Job Object: it ends the supervisor, whose death ends the job.)
    fn backstop(&self, st: &mut State) {
        let supervisor = st.supervisor.as_mut().map(|(_, child)| child);
        let Some(a) = st.active.as_mut() else { return };
        let Some(pid) = a.pid else { return };
        let now = crate::clock::monotonic_ns();
        match a.backstop_ns {
            None if now >= a.deadline_ns.saturating_add(BACKSTOP.as_nanos() as u64) => {
                a.backstop_ns = Some(now);
                let term = a.term;
                // First the guard, which also reaches what left the group; then, a moment later,
                // the group itself (a guard that is stopped too).
                if end_tree(pid, supervisor) {
                    self.warn(
                        "command_failed",
                        &format!(
                            "the supervisor did not end the command of term {term} by its lease deadline (is it \
                             stopped?): ending {} {pid}",
                            crate::os::process::BACKSTOP_ENDS
                        ),
                    );
                }
            }
            Some(at) if now >= at.saturating_add(GUARD_GRACE.as_nanos() as u64) => {
                a.pid = None;
                kill_tree(pid, supervisor);
            }
            _ => {}
        }
    }

    /// Reads the supervisor's reports.
    fn reports(&self, reader: Reports) {
        for line in BufReader::new(reader).lines().map_while(Result::ok) {
            let words: Vec<&str> = line.splitn(7, ' ').collect();
            match words.as_slice() {
                ["started", pgid, pid, term] => {
                    let (Ok(pgid), Ok(pid), Ok(term)) = (pgid.parse::<u32>(), pid.parse::<u32>(), term.parse::<u64>())
                    else {
                        continue;
                    };
                    if let Some(a) = self.lock().active.as_mut().filter(|a| a.term == term) {
                        a.pid = Some(pgid);
                    }
                    self.line("command_started", &format!(",\"term\":{term},\"pid\":{pid},\"pgid\":{pgid}"));
                }
                ["expired", term] => {
                    let mut st = self.lock();
                    if st.active.as_ref().is_some_and(|a| a.term.to_string() == *term) {
                        st.active = None;
                    }
                }
                ["failed", term, rest @ ..] => {
                    let Ok(term) = term.parse::<u64>() else { continue };
                    self.line(
                        "command_exited",
                        &format!(
                            ",\"term\":{term},\"pid\":null,\"pgid\":null,\"cause\":\"spawn_failed\",\"code\":null,\"signal\":null"
                        ),
                    );
                    {
                        let mut st = self.lock();
                        st.active = None;
                        // Nothing starts again in this term until the failure policy has answered.
                        st.done_term = Some(term);
                    }
                    self.failed(term, &rest.join(" "));
                }
                ["exited", pgid, pid, term, cause, status, deadline] => {
                    let (Ok(pgid), Ok(pid), Ok(term)) = (pgid.parse::<u32>(), pid.parse::<u32>(), term.parse::<u64>())
                    else {
                        continue;
                    };
                    let (code, signal) = match status.split_once(':') {
                        Some(("code", n)) => (n.parse::<i32>().ok(), None),
                        Some(("signal", n)) => (None, n.parse::<i32>().ok()),
                        _ => (None, None),
                    };
                    let opt = |v: Option<i32>| v.map_or("null".to_string(), |n| n.to_string());
                    let event = if *cause == "exited" { "command_exited" } else { "command_stopped" };
                    self.line(
                        event,
                        &format!(
                            ",\"term\":{term},\"pid\":{pid},\"pgid\":{pgid},\"cause\":{},\"code\":{},\"signal\":{},\"lease_deadline_ts_ms\":{}",
                            json_str(cause),
                            opt(code),
                            opt(signal),
                            deadline.parse::<u64>().map_or("null".into(), |d| d.to_string())
                        ),
                    );
                    let mut st = self.lock();
                    st.active = None;
                    match *cause {
                        "exited" if code == Some(0) => st.done_term = Some(term),
                        "exited" => {
                            // Nothing starts again in this term until the failure policy has answered.
                            st.done_term = Some(term);
                            drop(st);
                            self.failed(term, &format!("the command of term {term} ended ({status})"));
                        }
                        // "deadline": killed because the lease ran out (a paused or cut-off node):
                        // leadership ended, the command did not fail. Nothing to hand over and no
                        // backoff; it starts again if this node still leads with a renewed lease.
                        // "stopped": ordered.
                        _ => {}
                    }
                }
                _ => {}
            }
            self.wake();
        }
        // End of file: the supervisor is gone.
        let mut st = self.lock();
        let mut gone = st.supervisor.take();
        let status = gone.as_mut().and_then(|(_, child)| child.wait().ok());
        st.watching = false;
        st.armed = None;
        let lost = st.active.take();
        if let Some(a) = &lost {
            // Nothing starts again in that term until the failure policy has answered.
            st.done_term = Some(a.term);
        }
        // The guard ends the command's tree when the supervisor dies; this is the backstop for a
        // guard that could not. The guard was the supervisor's child and may be reaped by init
        // from now on, so this runs once, at once.
        if let Some(pid) = lost.as_ref().and_then(|a| a.pid) {
            // The guard first: a group kill would end the guard before it ends what left the group.
            end_tree(pid, gone.as_mut().map(|(_, child)| child));
            std::thread::sleep(GUARD_GRACE);
            kill_tree(pid, gone.as_mut().map(|(_, child)| child));
        }
        let shutdown = st.shutdown;
        if !shutdown {
            st.retry_supervisor = Some(Instant::now() + Duration::from_secs(1));
        }
        drop(st);
        self.wake();
        if !shutdown {
            let status = status.map_or("unknown status".into(), |s| s.to_string());
            let spec = &self.inner.spec;
            self.warn(
                "command_failed",
                &format!(
                    "the command's supervisor {:?} exited unexpectedly ({status}); starting it again in 1 s",
                    spec.reexec
                ),
            );
        }
        if let (Some(a), false) = (lost, shutdown) {
            self.failed(a.term, &format!("the command of term {} lost its supervisor", a.term));
        }
    }

    /// The command of `term` failed (`why`). The runtime's failure policy decides, as for every
    /// host's leader work (`FailurePolicy`): start it again in this leadership after a delay, or
    /// hand leadership over and campaign last (the runtime does both), or, at a limit the user
    /// set, stop (the command line then exits 1). A failure reported after this node stopped
    /// leading `term` (leadership was lost while the command ran) is not one of leader work:
    /// nothing to hand over, no backoff.
    fn failed(&self, term: u64, why: &str) {
        let Some(h) = self.inner.handle.get() else { return };
        let verdict = h.command_failed(term);
        let mut st = self.lock();
        match verdict {
            Ok(LeaderWorkVerdict::Retry { after }) => {
                st.not_before = Some(Instant::now() + after);
                if st.done_term == Some(term) {
                    st.done_term = None;
                }
                drop(st);
                let ms = after.as_millis();
                self.warn("command_backoff", &format!("{why}: starting it again in {ms} ms (the failure policy)"));
            }
            Ok(LeaderWorkVerdict::Stopping) => {
                st.done_term = Some(term);
                drop(st);
                self.warn(
                    "command_failed",
                    &format!("{why}: the failure policy's limit is reached: handing leadership over and stopping"),
                );
            }
            Ok(_) => {
                st.done_term = Some(term);
                drop(st);
                self.warn("command_failed", &format!("{why}: handing leadership over (the failure policy)"));
            }
            Err(_) => {
                st.done_term = Some(term);
                drop(st);
                log::info!(target: "tenure", "{}: {why}, after leadership of term {term} ended", self.inner.id);
            }
        }
        self.wake();
    }

    /// The `leader` event of `term` was delivered: its command may start.
    fn announced(&self, term: u64) {
        self.lock().announced = Some(term);
    }

    fn wake(&self) {
        let (lock, cvar) = &self.inner.pulse;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        cvar.notify_all();
        self.inner.changed.notify_all();
    }

    /// Whether a command runs (or is being stopped and has not been seen to end). A command the
    /// runtime ended itself, past the deadline, counts as gone, as in [`Runner::hold`].
    pub(crate) fn running(&self) -> bool {
        self.lock().command_alive()
    }

    /// Stops the command before a voluntary handover and waits until it is gone (at most the
    /// grace and a margin). Starts nothing until [`Runner::release`].
    pub(crate) fn hold(&self) {
        let mut st = self.lock();
        st.hold = true;
        // Disarmed before the handover: once another node may lead, this node's death is no
        // longer news worth a notice.
        if let Some(h) = self.inner.handle.get() {
            self.arm(&mut st, h);
        }
        drop(self.wait_idle(st));
    }

    /// Ends a [`Runner::hold`]: the command starts again if this node still leads.
    pub(crate) fn release(&self) {
        self.lock().hold = false;
        self.wake();
    }

    /// Stops the command for good and waits until it is gone (the runtime stops).
    pub(crate) fn shutdown(&self) {
        let mut st = self.lock();
        st.shutdown = true;
        if let Some(h) = self.inner.handle.get() {
            self.arm(&mut st, h);
        }
        st = self.wait_idle(st);
        // Closing the socket ends the supervisor.
        if let Some((sock, mut child)) = st.supervisor.take() {
            sock.close();
            drop(st);
            let _ = child.wait();
        }
    }

    fn wait_idle<'a>(&'a self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.wake();
        let limit = Instant::now() + Duration::from_millis(self.inner.spec.kill_grace) + Duration::from_millis(500);
        while st.command_alive() {
            let left = limit.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            st = self.inner.changed.wait_timeout(st, left.min(TICK)).map_or_else(|p| p.into_inner().0, |(g, _)| g);
        }
        st
    }
}

/// The command line's handler: the event printer, waking the runner on leadership changes.
pub(crate) struct WithCommand<F> {
    pub(crate) runner: Option<Runner>,
    pub(crate) on_event: F,
}

impl<F: FnMut(RuntimeEvent) + Send + 'static> Handler for WithCommand<F> {
    fn on_event(&mut self, event: RuntimeEvent) {
        let wake =
            matches!(event, RuntimeEvent::Leader { .. } | RuntimeEvent::Follower { .. } | RuntimeEvent::Stopped { .. });
        let led = if let RuntimeEvent::Leader { term, .. } = &event { Some(*term) } else { None };
        (self.on_event)(event);
        if let (Some(term), Some(r)) = (led, &self.runner) {
            r.announced(term);
        }
        if let (true, Some(r)) = (wake, &self.runner) {
            r.wake();
        }
    }
    fn leader_work_running(&self) -> bool {
        self.runner.as_ref().is_some_and(Runner::running)
    }
}

/// A voluntary handover (`transfer`): the command stops first, then `transfer` runs; the command
/// starts again if this node still leads afterwards (the transfer was refused).
pub(crate) fn handover<T>(runner: Option<&Runner>, transfer: impl FnOnce() -> T) -> T {
    if let Some(r) = runner {
        r.hold();
    }
    let result = transfer();
    if let Some(r) = runner {
        r.release();
    }
    result
}
