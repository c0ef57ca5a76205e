//! The supervisor: a small process, in a session of its own, that runs the leader-only command
//! (on Linux under a guard, see `crate::os::process`) and enforces the lease
//! deadline, so that a paused (SIGSTOP) or killed (SIGKILL) runtime cannot leave the command
//! running (see `docs/command.md`).
//!
//! The runtime starts it as `PROG __supervise GRACE_MS -- CMD ARGS...` (the same command line,
//! re-invoked) with its stdin the channel (`crate::os::process`: a Unix socket on Unix, an
//! anonymous pipe on Windows, whose first line hands over the pipe for the reports); stdout and
//! stderr are the runtime's, and the command inherits them. The runtime writes orders, one line
//! each, and the supervisor answers with reports on the channel:
//!
//! - `start TERM DEADLINE_NS LEADER_ID`: start the command in a tree of its own (a process group on
//!   Unix, a Job Object on Windows) with `TENURE_TERM` and `TENURE_LEADER_ID`, to be dead by
//!   `DEADLINE_NS`;
//! - `lease DEADLINE_NS`: the lease was renewed;
//! - `stop`: ask the tree to stop now (SIGTERM; on Windows Ctrl-Break), kill it after the grace or
//!   at the deadline, whichever is first.
//!
//! Deadlines are absolute monotonic nanoseconds (`crate::clock`: both processes share the host's
//! clock), so an order read late never extends a lease. When no renewal comes, the tree is killed
//! at the deadline. When the channel reaches end of file (the runtime died, even by SIGKILL), the
//! tree is stopped as by `stop` and the supervisor exits once it is gone.
//!
//! Reports: `started PGID PID TERM` (the command's process group, led by its guard, and the
//! command's own pid), `failed TERM MESSAGE` (the command could not be spawned),
//! `expired TERM` (the deadline had passed before the start order was read), and
//! `exited PGID PID TERM CAUSE STATUS DEADLINE` with CAUSE `stopped` (ordered), `deadline` (the lease
//! ran out), `runtime_gone` (end of file) or `exited` (by itself), STATUS `code:N` or `signal:N`,
//! and DEADLINE the last lease deadline it was held to, in wall-clock milliseconds.

use std::io::Write;
use std::process::{ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::watchdog::{Death, Watchdog};
use crate::clock::ns_to_instant;

use crate::os::process::{
    become_subreaper, ignore_stop_requests, spawn_tree, status_text, supervisor_link, Attachment, ReportSink, Tree,
};

/// The hidden subcommand that runs the supervisor.
pub(crate) const SUBCOMMAND: &str = "__supervise";

pub(crate) enum Msg {
    Order(String),
    /// A descriptor the runtime handed over (see [`super::watchdog`]).
    Fd(Attachment),
    Eof,
    /// The runtime's process is dead (its pidfd turned readable).
    ParentDead,
    Exited(u32, ExitStatus),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cause {
    Stopped,
    Deadline,
    RuntimeGone,
}

impl Cause {
    fn as_str(self) -> &'static str {
        match self {
            Cause::Stopped => "stopped",
            Cause::Deadline => "deadline",
            Cause::RuntimeGone => "runtime_gone",
        }
    }
}

struct Running {
    /// The tree's id: the guard's pid, which is the command's process group (on Linux; elsewhere
    /// on Unix the command's, and on Windows the command's pid).
    pid: u32,
    /// The command's own pid (what `$$` is in a shell command).
    command: u32,
    tree: Tree,
    term: u64,
    deadline: Instant,
    cause: Option<Cause>,
    kill_at: Option<Instant>,
    killed: bool,
}

/// Test hook (documented in `docs/command.md`): `TENURE_TEST_NO_DEADLINE_KILL=1` disables the
/// deadline kill, so the overlap test can show that its check catches the bug.
fn deadline_kill_disabled() -> bool {
    std::env::var_os("TENURE_TEST_NO_DEADLINE_KILL").is_some_and(|v| v == "1")
}

/// Runs the supervisor; `args` are the arguments after the subcommand: `GRACE_MS -- CMD ARGS...`
/// (no `CMD`: a watchdog only). Returns the exit status.
pub(crate) fn main(args: &[String]) -> i32 {
    let (grace, argv) = match args {
        [grace, dashes, cmd @ ..] if dashes == "--" => match grace.parse::<u64>() {
            Ok(g) => (Duration::from_millis(g), cmd.to_vec()),
            Err(_) => return usage(),
        },
        _ => return usage(),
    };
    // A stop request meant for the runtime (Ctrl-C, a service manager's SIGTERM) must not end the
    // supervisor before the command: it stops the command when the runtime orders it or goes
    // away.
    become_subreaper();
    ignore_stop_requests();
    let Ok((reader, socket)) = supervisor_link() else { return usage() };
    let (tx, rx) = mpsc::channel();
    let orders_tx = tx.clone();
    std::thread::spawn(move || super::watchdog::read_orders(reader, &orders_tx));
    Supervisor {
        argv,
        grace,
        socket,
        tx,
        running: None,
        gone: false,
        no_deadline_kill: deadline_kill_disabled(),
        watchdog: Watchdog::default(),
        death: Death::NoCommand,
    }
    .run(rx)
}

fn usage() -> i32 {
    eprintln!(
        "{SUBCOMMAND}: internal subcommand of the tenure command line (GRACE_MS -- CMD ARGS...; stdin its channel)"
    );
    2
}

struct Supervisor {
    argv: Vec<String>,
    grace: Duration,
    socket: ReportSink,
    tx: mpsc::Sender<Msg>,
    running: Option<Running>,
    /// The runtime went away: exit once nothing runs (and the watchdog has settled).
    gone: bool,
    no_deadline_kill: bool,
    watchdog: Watchdog,
    /// What the command was doing when the runtime went away (decides whether notices may go).
    death: Death,
}

impl Supervisor {
    fn report(&mut self, line: &str) {
        let _ = writeln!(self.socket, "{line}");
    }

    fn run(mut self, rx: mpsc::Receiver<Msg>) -> i32 {
        loop {
            if self.gone && self.running.is_none() {
                self.watchdog.fire(self.death);
                if self.watchdog.settled() {
                    return 0;
                }
            }
            let next = self.running.as_ref().filter(|r| !r.killed).and_then(|r| {
                let deadline = if self.no_deadline_kill { None } else { Some(r.deadline) };
                [deadline, r.kill_at].into_iter().flatten().min()
            });
            let next = [next, self.watchdog.next_deadline()].into_iter().flatten().min();
            let msg = match next {
                Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                    Ok(m) => Some(m),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return 1,
                },
                None => match rx.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return 1,
                },
            };
            match msg {
                None => self.timers(),
                Some(Msg::Order(line)) => {
                    if !self.watchdog.order(&line) {
                        self.order(&line);
                    }
                }
                Some(Msg::Fd(fd)) => self.watchdog.fd(fd, &self.tx),
                Some(Msg::ParentDead) => self.watchdog.dead = true,
                Some(Msg::Eof) => {
                    self.gone = true;
                    self.watchdog.closed_at = Some(Instant::now());
                    if self.running.is_some() {
                        self.death = Death::CommandRunning;
                    }
                    self.stop(Cause::RuntimeGone);
                }
                Some(Msg::Exited(pid, status)) => self.exited(pid, status),
            }
        }
    }

    fn timers(&mut self) {
        let now = Instant::now();
        let no_deadline_kill = self.no_deadline_kill;
        let Some(r) = self.running.as_mut().filter(|r| !r.killed) else { return };
        let past_deadline = !no_deadline_kill && now >= r.deadline;
        if past_deadline || r.kill_at.is_some_and(|k| now >= k) {
            if past_deadline && r.cause.is_none() {
                r.cause = Some(Cause::Deadline);
            }
            r.killed = true;
            r.tree.kill();
        }
    }

    fn order(&mut self, line: &str) {
        let mut words = line.splitn(4, ' ');
        match (words.next(), words.next(), words.next(), words.next()) {
            (Some("start"), Some(term), Some(deadline), Some(leader)) => {
                let (Ok(term), Ok(deadline)) = (term.parse::<u64>(), deadline.parse::<u64>()) else { return };
                self.start(term, ns_to_instant(deadline), leader);
            }
            (Some("lease"), Some(deadline), None, None) => {
                if let (Ok(d), Some(r)) = (deadline.parse::<u64>(), self.running.as_mut()) {
                    r.deadline = ns_to_instant(d);
                    if let Some(k) = r.kill_at {
                        r.kill_at = Some(k.min(r.deadline));
                    }
                }
            }
            (Some("stop"), None, None, None) => self.stop(Cause::Stopped),
            _ => {}
        }
    }

    fn start(&mut self, term: u64, deadline: Instant, leader: &str) {
        if self.running.is_some() || self.gone || self.argv.is_empty() {
            return;
        }
        if !self.no_deadline_kill && Instant::now() >= deadline {
            self.report(&format!("expired {term}"));
            return;
        }
        let mut cmd = std::process::Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..])
            .env("TENURE_TERM", term.to_string())
            .env("TENURE_LEADER_ID", leader)
            .stdin(Stdio::null());
        match spawn_tree(&mut cmd) {
            Ok((mut child, tree)) => {
                let pid = tree.id();
                let tx = self.tx.clone();
                std::thread::spawn(move || {
                    if let Ok(status) = child.wait() {
                        let _ = tx.send(Msg::Exited(pid, status));
                    }
                });
                let command = tree.command_pid();
                self.running =
                    Some(Running { pid, command, tree, term, deadline, cause: None, kill_at: None, killed: false });
                self.report(&format!("started {pid} {command} {term}"));
            }
            Err(e) => {
                let message = format!("cannot start {:?}: {e}", self.argv[0]);
                self.report(&format!("failed {term} {}", message.replace('\n', " ")));
            }
        }
    }

    fn stop(&mut self, cause: Cause) {
        let grace = self.grace;
        let Some(r) = self.running.as_mut() else { return };
        if r.cause.is_some() || r.killed {
            return;
        }
        r.cause = Some(cause);
        let kill_at = Instant::now() + grace;
        r.kill_at = Some(if self.no_deadline_kill { kill_at } else { kill_at.min(r.deadline) });
        r.tree.stop();
    }

    fn exited(&mut self, pid: u32, status: ExitStatus) {
        let Some(r) = self.running.take_if(|r| r.pid == pid) else { return };
        // Whatever the command left in its tree goes with it (on Linux also what left the group
        // and was handed to this subreaper when the guard died before it could end them).
        r.tree.ended();
        if self.death == Death::CommandRunning {
            // The guard exits only once the command's whole tree is gone, and the orphans handed
            // here are reaped above: the leadership's work ended now.
            self.death = if Instant::now() < r.deadline { Death::CommandEndedInTime } else { Death::CommandEndedLate };
        }
        let cause = r.cause.map_or("exited", Cause::as_str);
        // The lease deadline it was held to, on the wall clock (for the event line).
        let now = Instant::now();
        let wall = crate::clock::wall_ms();
        let deadline_wall = match r.deadline.checked_duration_since(now) {
            Some(ahead) => wall.saturating_add(u64::try_from(ahead.as_millis()).unwrap_or(u64::MAX)),
            None => wall.saturating_sub(u64::try_from(now.duration_since(r.deadline).as_millis()).unwrap_or(u64::MAX)),
        };
        self.report(&format!("exited {pid} {} {} {cause} {} {deadline_wall}", r.command, r.term, status_text(status)));
    }
}
