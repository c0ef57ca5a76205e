//! The command line every host shares: `tenure run ...` (this crate's `tenure` binary),
//! `tenure-wasmtime run ...`, `python -m tenure run ...` and `npx tenure run ...` are all
//! [`main`] with another engine. One parser, one help text, one JSON event stream, one set of
//! stdin control lines.
//!
//! Exit codes: 0 after a graceful stop (SIGTERM, SIGINT), 1 after a fatal error while running
//! (the state file became unwritable, ...), 2 for a usage error or a bad value (id, peer, bind,
//! configuration), 3 when the socket cannot be bound (address in use), 4 for a state file problem
//! at start (missing directory, unwritable, corrupt, locked by another process), 5 for an
//! unreadable key file.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use crate::event::{json_line, json_str};
use crate::process::command::{handover, CommandSpec, Runner, WithCommand};
use crate::{spawn, Engine, EngineInit, Handle, RuntimeConfig, RuntimeError, RuntimeEvent};

/// The `--help` text after `usage: PROG `.
pub const USAGE: &str = "run --id HOST:PORT --peer HOST:PORT [--peer HOST:PORT ...] --cluster NAME
    [--bind IP[:PORT]] [--min-cluster-size N] [--election-timeout-min MS] [--election-timeout-max MS]
    [--heartbeat-interval MS] [--lease-duration MS] [--ghost-ttl MS] [--state-file PATH]
    [--key-file PATH] [--admit-unknown-peers] [--max-peers N] [--value TEXT] [--priority N]
    [--never-lead] [--preempt-after MS] [--http IP:PORT]
    [--ready-when node|leader] [--no-failure-detection] [--kill-grace MS] [--max-failures N]
    [--max-step-downs N] [--app-health URL] [--app-health-interval MS] [--pod-label KEY]
    [--service-account DIR] [--no-death-notice | --death-notice] [--observer]
    [--observer-peer HOST:PORT ...] [-- CMD ARGS...]
       | --help | --version

Runs one tenure node over UDP and prints one JSON object per line to stdout for every event:
{\"ts_ms\": <wall-clock ms>, \"id\": \"HOST:PORT\", \"event\": \"leader\", \"term\": 4}.
Events: started, leader (with \"value\"), follower (with \"leader\": id or null, and \"value\": the
leader's proclaimed value or null; again when it changes), peer_joined, peer_left, message,
warning (with \"code\" and \"message\"), inspect, fatal, stopped, and with --http one
http_listening (with \"addr\", the bound TCP address). SIGTERM or SIGINT stops the node
gracefully (a leader hands leadership over first). Control lines on stdin: `transfer [PEER]` (a
leader hands leadership to PEER, or to the peer heard from most recently), `inspect` (prints an
`inspect` line with the whole state, the leader's value as `leader_value`), `broadcast TEXT` (sends TEXT to every member), `join PEER`
(declares PEER a member), `leave PEER` (withdraws PEER from the view), `proclaim TEXT` (a leader
changes its value to TEXT; empty: none).

  --id HOST:PORT               this node's id: the address (IP or DNS name) peers send to (required)
  --peer HOST:PORT             a peer (repeat; at least one, unless --min-cluster-size 1 or
                               --admit-unknown-peers)
  --cluster NAME               the cluster id (required)
  --bind IP[:PORT]             the local address to listen on (default: the id's address; every
                               interface when the id is a DNS name)
  --min-cluster-size N         no leader below N members (default 3)
  --election-timeout-min MS    default 150 (or half of --election-timeout-max)
  --election-timeout-max MS    default 300 (or twice --election-timeout-min)
  --heartbeat-interval MS      default 50
  --lease-duration MS          how long a promise (and so the leader's lease) lasts; at most
                               --election-timeout-min, above --heartbeat-interval (default:
                               --election-timeout-min)
  --ghost-ttl MS               default 5000
  --state-file PATH            make term and vote durable in PATH (locked: one node per file)
  --key-file PATH              authenticate every message with the key in PATH
  --admit-unknown-peers        admit a sender missing from --peer on its first valid message
                               (default: membership is closed; such messages are dropped)
  --max-peers N                most peers the view may hold (default 64)
  --value TEXT                 the value this node proclaims whenever it leads (at most 256
                               bytes; its service URL, say): every member reports it with the
                               leader (follower lines, /leader, inspect)
  --priority N                 among healthy members a higher priority campaigns first, and a
                               leader hands leadership to a member of higher priority that
                               answered it steadily for --preempt-after (default 0 everywhere:
                               no preference)
  --never-lead                 a witness: votes and acknowledges (it counts in every quorum) but
                               never campaigns, never takes a transfer and is never preempted to
  --preempt-after MS           how long a member of higher priority must answer the leader
                               steadily before it hands over (default: twice
                               --election-timeout-max; 0: never)
  --observer                   observe the members given as --peer: report the leader, its term
                               and its value (follower lines, /leader, inspect, metrics; role
                               \"observer\") without ever voting, campaigning or counting toward
                               any quorum; only members that list it (--observer-peer) tell it
  --observer-peer HOST:PORT    an observer this member keeps informed (repeat; default none:
                               messages of an observer not listed are dropped, unknown_peer)
  --no-failure-detection       do not probe a quiet leader for a refused port (ICMP); a dead
                               leader is then replaced after an election timeout only
  --kill-grace MS              SIGTERM to SIGKILL for the leader-only command (default 1000)
  -- CMD ARGS...               run CMD only while this node leads (in its own process group, under
                               a supervisor process; env TENURE_TERM, TENURE_LEADER_ID): started
                               once leadership has a lease, stopped (SIGTERM, then SIGKILL after
                               --kill-grace) when it ends, SIGKILLed at the lease deadline when
                               renewals stop (even if this process is paused or killed), stopped
                               before a transfer or a graceful stop hands over. Its own exit:
                               0 keeps leading without it; otherwise it starts again after a
                               backoff (100 ms, doubling, at most 5 s), and after --max-failures
                               failures in one leadership this node hands leadership over and
                               campaigns last for a while. Events: command_started,
                               command_stopped, command_exited.
  --max-failures N             failures of CMD in one leadership before handing over (default 3)
  --max-step-downs N           stop (exit 1) after N leaderships in a row handed over because CMD
                               kept failing (default: never; keep trying and recover)
  --http IP:PORT               serve GET /leader, /healthz, /readyz and /metrics (Prometheus) on
                               this TCP address (port 0: any free port; an `http_listening` line
                               gives the address); see docs/http.md
  --ready-when node|leader     /readyz is 200 while the node runs (node, the default) or only
                               while it leads with a valid lease (leader)
  --app-health URL             GET this http:// URL (the application beside this node) every
                               --app-health-interval MS (default 1000); after 3 answers in a row
                               that are not 2xx, a leader steps down (warning app_unhealthy) and
                               does so again whenever it is elected until the URL answers
  --pod-label KEY              Kubernetes: label this node's own pod KEY=true while it leads and
                               KEY=false otherwise (a Service selecting KEY=true follows the
                               leader); needs POD_NAME, POD_NAMESPACE and a service account
                               allowed to patch the pod (builds with the kubernetes feature)
  --service-account DIR        the token and ca.crt for --pod-label (default
                               /var/run/secrets/kubernetes.io/serviceaccount)
  --no-death-notice            no watchdog: a crash of this process fails over by the lease
                               (about an election timeout) instead of at once
  --death-notice               keep the death notice with --http, which turns it off otherwise
                               (/leader publishes the lease deadline to other processes, which a
                               notice can cut short; see docs/command.md)
  --help, --version

Exit status: 0 stopped by a signal, 1 fatal error while running, 2 usage error or bad value,
3 cannot bind the address, 4 state file problem, 5 key file problem. TENURE_LOG sets the stderr
log level (error, warn, info, debug; default info).
";

/// Parsed `run` options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RunOptions {
    /// `--id`.
    pub id: String,
    /// `--peer`, in order.
    pub peers: Vec<String>,
    /// `--cluster`.
    pub cluster: String,
    /// `--bind`.
    pub bind: Option<String>,
    /// `--min-cluster-size`.
    pub min_cluster_size: Option<u32>,
    /// `--election-timeout-min`.
    pub election_timeout_min: Option<u64>,
    /// `--election-timeout-max`.
    pub election_timeout_max: Option<u64>,
    /// `--heartbeat-interval`.
    pub heartbeat_interval: Option<u64>,
    /// `--lease-duration`.
    pub lease_duration: Option<u64>,
    /// `--ghost-ttl`.
    pub ghost_ttl: Option<u64>,
    /// `--state-file`.
    pub state_file: Option<String>,
    /// `--key-file`.
    pub key_file: Option<String>,
    /// `--admit-unknown-peers`.
    pub admit_unknown_peers: bool,
    /// `--no-failure-detection`.
    pub no_failure_detection: bool,
    /// `--no-death-notice`.
    pub no_death_notice: bool,
    /// `--death-notice` (keeps it on with `--http`).
    pub death_notice: bool,
    /// `--max-peers`.
    pub max_peers: Option<u32>,
    /// `--kill-grace`.
    pub kill_grace: Option<u64>,
    /// `--max-failures` (the failure policy's `max_failures`).
    pub max_failures: Option<u32>,
    /// `--max-step-downs` (the failure policy's `max_step_downs`).
    pub max_step_downs: Option<u32>,
    /// `-- CMD ARGS...` (empty: none).
    pub command: Vec<String>,
    /// `--http`.
    pub http: Option<String>,
    /// `--value`.
    pub value: Option<String>,
    /// `--priority`.
    pub priority: Option<u32>,
    /// `--never-lead`.
    pub never_lead: bool,
    /// `--preempt-after`.
    pub preempt_after: Option<u64>,
    /// `--ready-when`.
    pub ready_when: Option<String>,
    /// `--app-health`.
    pub app_health: Option<String>,
    /// `--app-health-interval`.
    pub app_health_interval: Option<u64>,
    /// `--pod-label`.
    pub pod_label: Option<String>,
    /// `--service-account`.
    pub service_account: Option<String>,
    /// `--observer`.
    pub observer: bool,
    /// `--observer-peer`, in order.
    pub observer_peers: Vec<String>,
}

/// What the command line asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command {
    /// `run ...`
    Run(Box<RunOptions>),
    /// `--help`, `-h` or `help`.
    Help,
    /// `--version` or `-V`.
    Version,
}

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value.parse().map_err(|_| format!("{flag} expects a non-negative whole number, got \"{value}\""))
}

fn once<T>(slot: &mut Option<T>, flag: &str, value: T) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("{flag} given more than once"));
    }
    *slot = Some(value);
    Ok(())
}

/// Parses the arguments after the program name. `Err` is the one-line usage error.
pub fn parse_args<I, S>(args: I) -> Result<Command, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let args: Vec<String> = args.into_iter().map(|s| s.as_ref().to_string()).collect();
    // Every host hands its arguments over decoded lossily (Rust's `args_os`, Python's
    // surrogate escapes, Node.js's own decoding all turn bytes that are not UTF-8 into U+FFFD):
    // the replacement character marks an argument that was not UTF-8 (a literal one in an
    // argument is refused too).
    if let Some((n, bad)) = args.iter().enumerate().find(|(_, a)| a.contains('\u{FFFD}')) {
        return Err(format!("argument {} (\"{}\") is not valid UTF-8", n + 1, bad.escape_debug()));
    }
    let mut it = args.iter();
    match it.next().map(String::as_str) {
        Some("run") => {}
        Some("--help") | Some("-h") | Some("help") | None => return Ok(Command::Help),
        Some("--version") | Some("-V") => return Ok(Command::Version),
        Some(other) => return Err(format!("unknown command \"{other}\"; expected \"run\"")),
    }
    let mut o = RunOptions::default();
    let (mut id, mut cluster) = (None, None);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--version" | "-V" => return Ok(Command::Version),
            "--" => {
                o.command = it.by_ref().cloned().collect();
                if o.command.is_empty() {
                    return Err("-- needs a command to run while leading (-- CMD ARGS...)".into());
                }
                break;
            }
            _ => {}
        }
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag.as_str(), None),
        };
        if !name.starts_with("--") {
            return Err(format!("unexpected argument \"{flag}\""));
        }
        if matches!(
            name,
            "--admit-unknown-peers"
                | "--no-failure-detection"
                | "--no-death-notice"
                | "--death-notice"
                | "--never-lead"
                | "--observer"
        ) {
            if inline.is_some() {
                return Err(format!("{name} takes no value"));
            }
            let slot = match name {
                "--admit-unknown-peers" => &mut o.admit_unknown_peers,
                "--no-death-notice" => &mut o.no_death_notice,
                "--death-notice" => &mut o.death_notice,
                "--never-lead" => &mut o.never_lead,
                "--observer" => &mut o.observer,
                _ => &mut o.no_failure_detection,
            };
            if *slot {
                return Err(format!("{name} given more than once"));
            }
            *slot = true;
            continue;
        }
        const KNOWN: [&str; 26] = [
            "--id",
            "--peer",
            "--cluster",
            "--bind",
            "--min-cluster-size",
            "--election-timeout-min",
            "--election-timeout-max",
            "--heartbeat-interval",
            "--lease-duration",
            "--ghost-ttl",
            "--state-file",
            "--key-file",
            "--max-peers",
            "--kill-grace",
            "--max-failures",
            "--max-step-downs",
            "--http",
            "--ready-when",
            "--app-health",
            "--app-health-interval",
            "--pod-label",
            "--service-account",
            "--value",
            "--priority",
            "--preempt-after",
            "--observer-peer",
        ];
        if !KNOWN.contains(&name) {
            return Err(format!("unknown option \"{name}\""));
        }
        let value = match inline {
            Some(v) => v,
            None => it.next().cloned().ok_or_else(|| format!("{name} needs a value"))?,
        };
        match name {
            "--id" => once(&mut id, name, value)?,
            "--peer" => o.peers.push(value),
            "--cluster" => once(&mut cluster, name, value)?,
            "--bind" => once(&mut o.bind, name, value)?,
            "--min-cluster-size" => once(&mut o.min_cluster_size, name, number(name, &value)?)?,
            "--election-timeout-min" => once(&mut o.election_timeout_min, name, number(name, &value)?)?,
            "--election-timeout-max" => once(&mut o.election_timeout_max, name, number(name, &value)?)?,
            "--heartbeat-interval" => once(&mut o.heartbeat_interval, name, number(name, &value)?)?,
            "--lease-duration" => once(&mut o.lease_duration, name, number(name, &value)?)?,
            "--ghost-ttl" => once(&mut o.ghost_ttl, name, number(name, &value)?)?,
            "--state-file" => once(&mut o.state_file, name, value)?,
            "--max-peers" => once(&mut o.max_peers, name, number(name, &value)?)?,
            "--kill-grace" => once(&mut o.kill_grace, name, number(name, &value)?)?,
            "--max-failures" => once(&mut o.max_failures, name, number(name, &value)?)?,
            "--max-step-downs" => once(&mut o.max_step_downs, name, number(name, &value)?)?,
            "--http" => once(&mut o.http, name, value)?,
            "--ready-when" => once(&mut o.ready_when, name, value)?,
            "--app-health" => once(&mut o.app_health, name, value)?,
            "--app-health-interval" => once(&mut o.app_health_interval, name, number(name, &value)?)?,
            "--pod-label" => once(&mut o.pod_label, name, value)?,
            "--service-account" => once(&mut o.service_account, name, value)?,
            "--value" => once(&mut o.value, name, value)?,
            "--priority" => once(&mut o.priority, name, number(name, &value)?)?,
            "--preempt-after" => once(&mut o.preempt_after, name, number(name, &value)?)?,
            "--observer-peer" => o.observer_peers.push(value),
            _ => once(&mut o.key_file, name, value)?,
        }
    }
    if let Some(r) = &o.ready_when {
        r.parse::<crate::ReadyWhen>().map_err(|_| format!("--ready-when expects node or leader, got \"{r}\""))?;
    }
    o.id = id.ok_or("--id HOST:PORT is required")?;
    o.cluster = cluster.ok_or("--cluster NAME is required")?;
    if let Some(url) = &o.app_health {
        crate::sidecar::app_health::parse_url(url)?;
    }
    if o.app_health_interval == Some(0) || (o.app_health_interval.is_some() && o.app_health.is_none()) {
        return Err("--app-health-interval expects a positive number of ms and needs --app-health URL".into());
    }
    if o.service_account.is_some() && o.pod_label.is_none() {
        return Err("--service-account applies to --pod-label KEY".into());
    }
    if o.death_notice && o.no_death_notice {
        return Err("--death-notice and --no-death-notice contradict each other".into());
    }
    if o.observer && !o.command.is_empty() {
        return Err("--observer never leads: a leader-only command (-- CMD ARGS...) would never run".into());
    }
    if o.observer && !o.observer_peers.is_empty() {
        return Err("--observer-peer is a member's list of its observers; an observer keeps nobody informed".into());
    }
    if o.kill_grace.is_some() && o.command.is_empty() {
        return Err("--kill-grace applies to a leader-only command: add -- CMD ARGS...".into());
    }
    check_platform(&o, crate::os::process::LEADER_COMMAND, crate::os::process::DEATH_PROOF)?;
    Ok(Command::Run(Box::new(o)))
}

/// Refuses what this OS cannot honour (`crate::os::process`): a leader-only command where it
/// cannot be supervised, `--death-notice` where the watchdog cannot be given a proof of this
/// process's death. The OS's answers are arguments, so that every OS's refusal is tested on any
/// host.
fn check_platform(
    o: &RunOptions,
    leader_command: Result<(), &str>,
    death_proof: Result<(), &str>,
) -> Result<(), String> {
    if let (false, Err(why)) = (o.command.is_empty(), leader_command) {
        return Err(format!("a leader-only command (-- CMD ARGS...) is {why}"));
    }
    if let (true, Err(why)) = (o.death_notice, death_proof) {
        return Err(format!("--death-notice cannot be honoured: {why}"));
    }
    Ok(())
}

impl RunOptions {
    /// Whether this node runs a watchdog that sends its leadership's death notices: on by
    /// default; off with `--no-death-notice`, and off with `--http` unless `--death-notice` (a
    /// notice lets another node lead before the lease deadline `/leader` published has passed).
    /// Off, with a warning, where this OS cannot prove this process's death to a watchdog
    /// ([`RunOptions::death_notice_unavailable`]).
    pub fn death_notices(&self) -> bool {
        self.death_notice_wanted() && crate::os::process::DEATH_PROOF.is_ok()
    }

    fn death_notice_wanted(&self) -> bool {
        !self.no_death_notice && (self.http.is_none() || self.death_notice)
    }

    /// Why the death notice these options ask for (by default) is off on this OS, if it is.
    pub fn death_notice_unavailable(&self) -> Option<&'static str> {
        crate::os::process::DEATH_PROOF.err().filter(|_| self.death_notice_wanted())
    }

    /// The runtime configuration these options describe.
    pub fn runtime_config(&self) -> RuntimeConfig {
        let mut c = tenure::Config::new(self.id.clone(), self.cluster.clone()).bootstrap(self.peers.iter().cloned());
        if let Some(n) = self.min_cluster_size {
            c.min_cluster_size = n;
        }
        c.election_timeout_min = self.election_timeout_min;
        c.election_timeout_max = self.election_timeout_max;
        if let Some(h) = self.heartbeat_interval {
            c.heartbeat_interval = h;
        }
        c.lease_duration = self.lease_duration;
        if let Some(g) = self.ghost_ttl {
            c.ghost_ttl = g;
        }
        c.admit_unknown_peers = self.admit_unknown_peers;
        if let Some(n) = self.max_peers {
            c.max_peers = n;
        }
        c.value = self.value.clone();
        c.priority = self.priority.unwrap_or(0);
        c.never_lead = self.never_lead;
        c.preempt_after = self.preempt_after;
        c.observer = self.observer;
        c.observer_peers = self.observer_peers.clone();
        let mut r = RuntimeConfig::new(c);
        r.bind = self.bind.clone();
        r.state_file = self.state_file.as_ref().map(PathBuf::from);
        r.key_file = self.key_file.as_ref().map(PathBuf::from);
        r.http = self.http.clone();
        r.failure_detection = !self.no_failure_detection;
        r.death_notices = self.death_notices();
        r.ready_when = self.ready_when.as_deref().and_then(|w| w.parse().ok()).unwrap_or_default();
        if let Some(n) = self.max_failures {
            r.failure_policy.max_failures = n;
        }
        r.failure_policy.max_step_downs = self.max_step_downs;
        r.pod_label = self.pod_label.clone();
        r.service_account = self.service_account.as_ref().map(PathBuf::from);
        r
    }
}

pub use crate::config::key_from_file;

/// The exit status for an error that stopped the command line (see the module docs).
pub fn exit_code(e: &RuntimeError) -> i32 {
    match e.kind() {
        "address" | "config" => 2,
        "bind" => 3,
        "state_file" => 4,
        "key_file" => 5,
        _ => 1,
    }
}

pub use crate::clock::wall_ms;
pub use crate::event::{event_line, inspect_line};

/// A command read from stdin, one per line (see [`USAGE`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Control {
    /// `transfer [PEER]`.
    Transfer(Option<String>),
    /// `inspect`.
    Inspect,
    /// `broadcast TEXT` (UTF-8 bytes).
    Broadcast(Vec<u8>),
    /// `join PEER`.
    Join(String),
    /// `leave PEER`.
    Leave(String),
    /// `proclaim TEXT` (empty: no value).
    Proclaim(String),
}

/// The warning code of a stdin line that is not a control line.
pub const BAD_CONTROL_LINE: &str = "bad_control_line";

/// Parses one stdin control line; `Ok(None)` for a blank line.
pub fn parse_control(line: &str) -> Result<Option<Control>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let (cmd, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(c, r)| (c, r.trim()));
    match (cmd, rest) {
        ("inspect", "") => Ok(Some(Control::Inspect)),
        ("transfer", "") => Ok(Some(Control::Transfer(None))),
        ("transfer", peer) if !peer.contains(char::is_whitespace) => Ok(Some(Control::Transfer(Some(peer.into())))),
        ("broadcast", text) => Ok(Some(Control::Broadcast(text.as_bytes().to_vec()))),
        ("proclaim", text) => Ok(Some(Control::Proclaim(text.into()))),
        ("join", peer) if !peer.is_empty() && !peer.contains(char::is_whitespace) => Ok(Some(Control::Join(peer.into()))),
        ("leave", peer) if !peer.is_empty() && !peer.contains(char::is_whitespace) => {
            Ok(Some(Control::Leave(peer.into())))
        }
        _ => Err(format!(
            "unknown control line \"{line}\"; expected `transfer [PEER]`, `inspect`, `broadcast TEXT`, `join PEER`, `leave PEER` or `proclaim TEXT`"
        )),
    }
}

fn emit(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn control(handle: &Handle, line: &str, runner: Option<&Runner>) {
    let id = handle.id();
    let warn = |code: &str, message: &str| {
        emit(&event_line(wall_ms(), id, &RuntimeEvent::Warning { code: code.into(), message: message.into() }))
    };
    let result = match parse_control(line) {
        Ok(None) => Ok(()),
        Ok(Some(Control::Inspect)) => handle.inspect().map(|state| emit(&inspect_line(wall_ms(), id, &state))),
        Ok(Some(Control::Transfer(peer))) => handover(runner, || handle.transfer(peer.as_deref())),
        Ok(Some(Control::Broadcast(payload))) => handle.broadcast(&payload),
        Ok(Some(Control::Proclaim(value))) => handle.proclaim(&value),
        Ok(Some(Control::Join(peer))) => crate::parse_peer(&peer).and_then(|_| handle.join(&peer)),
        Ok(Some(Control::Leave(peer))) => handle.leave(&peer),
        Err(message) => {
            warn(BAD_CONTROL_LINE, &message);
            Ok(())
        }
    };
    if let Err(e) = result {
        if !matches!(e, RuntimeError::Stopped) {
            warn(e.code(), &e.to_string());
        }
    }
}

fn init_logging() {
    let env = env_logger::Env::new().filter_or("TENURE_LOG", "info");
    let _ = env_logger::Builder::from_env(env).format_timestamp_millis().target(env_logger::Target::Stderr).try_init();
}

/// Runs the command line: `args` includes the program name first (as `std::env::args()`).
/// Returns the exit status. Prints JSON lines to stdout, usage errors (one line) and logs to
/// stderr, reads control lines from stdin, and stops gracefully on SIGTERM or SIGINT (a second
/// signal exits at once with status 1). The supervisor of the leader-only command (and watchdog)
/// is `tenure-supervise` beside [`std::env::current_exe`], else that executable again; hosts that
/// are not a Rust binary use [`main_with`].
pub fn main<I, S, E, F>(args: I, engine_factory: F) -> i32
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
    E: Engine,
    F: FnOnce(EngineInit) -> Result<E, RuntimeError>,
{
    main_with(args, engine_factory, None)
}

/// [`main`] for a host that re-invokes its command line otherwise than by its executable alone:
/// `reexec` is the argv prefix that runs this command line again (`[python, "-m", "tenure"]`,
/// `[node, "/path/to/cli.js"]`); the leader-only command's supervisor is `PREFIX __supervise ...`.
/// `None`: as [`main`] (`tenure-supervise` beside [`std::env::current_exe`], else that executable).
pub fn main_with<I, S, E, F>(args: I, engine_factory: F, reexec: Option<Vec<String>>) -> i32
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
    E: Engine,
    F: FnOnce(EngineInit) -> Result<E, RuntimeError>,
{
    let mut args = args.into_iter().map(|s| s.as_ref().to_string()).peekable();
    let prog = args
        .next()
        .map(|p| std::path::Path::new(&p).file_name().map_or(p.clone(), |f| f.to_string_lossy().into_owned()));
    let prog = prog.unwrap_or_else(|| "tenure".into());
    if args.peek().map(String::as_str) == Some(crate::process::supervisor::SUBCOMMAND) {
        return crate::process::supervisor::main(&args.skip(1).collect::<Vec<_>>());
    }
    let options = match parse_args(args) {
        Ok(Command::Run(o)) => o,
        Ok(Command::Help) => {
            print!("usage: {prog} {USAGE}");
            return 0;
        }
        Ok(Command::Version) => {
            println!("{prog} {}", crate::VERSION);
            return 0;
        }
        Err(e) => {
            eprintln!("{prog}: {e} (see {prog} --help)");
            return 2;
        }
    };
    init_logging();
    // Registered before the runtime starts: a SIGTERM right after `started` (or during a slow
    // engine start) is a graceful stop, never the default action. Handled once the handle exists.
    let signals = crate::os::signals::StopSignals::new();
    let id = options.id.clone();
    // The leader-only command (`-- CMD ARGS...`, see `docs/command.md`).
    // The supervisor is also the watchdog of the death notice: it runs with or without a command.
    let runner = (!options.command.is_empty() || options.death_notices()).then(|| {
        let reexec = reexec.unwrap_or_else(crate::process::own_supervisor);
        let kill_grace = options.kill_grace.unwrap_or(crate::process::command::DEFAULT_KILL_GRACE);
        let spec = CommandSpec { argv: options.command.clone(), kill_grace, reexec };
        Runner::new(spec, id.clone(), |line| emit(&line))
    });
    // --app-health (--pod-label is the runtime's: `spawn` starts it).
    let warn_id = id.clone();
    let warn = move |code: &str, message: &str| {
        let warning = RuntimeEvent::Warning { code: code.into(), message: message.into() };
        emit(&event_line(wall_ms(), &warn_id, &warning));
    };
    let sidecar = match crate::sidecar::Sidecar::new(&options, warn) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return 2;
        }
    };
    // `started` is the first line: control lines (answered on the stdin thread) wait for it.
    let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
    let on_event = move |event: RuntimeEvent| {
        emit(&event_line(wall_ms(), &id, &event));
        if matches!(event, RuntimeEvent::Started { .. }) {
            let _ = started_tx.send(());
        }
    };
    let handle = match spawn(options.runtime_config(), engine_factory, WithCommand { runner: runner.clone(), on_event })
    {
        Ok(h) => h,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return exit_code(&e);
        }
    };
    sidecar.start(&handle);
    if let Some(addr) = handle.http_addr() {
        let addr = json_str(&addr.to_string());
        emit(&json_line(wall_ms(), handle.id(), "http_listening", &format!(",\"addr\":{addr}")));
    }
    if let Some(r) = &runner {
        r.start(handle.clone());
    }
    match signals {
        Ok(mut signals) => {
            let (h, r) = (handle.clone(), runner.clone());
            let _ = std::thread::Builder::new().name("tenure-signals".into()).spawn(move || {
                let mut seen = 0;
                for _ in signals.forever() {
                    seen += 1;
                    if seen > 1 {
                        std::process::exit(1);
                    }
                    // The command stops before leadership is handed over (no overlap).
                    let (h, r) = (h.clone(), r.clone());
                    let _ = std::thread::Builder::new().name("tenure-stop".into()).spawn(move || {
                        if let Some(r) = r {
                            r.hold();
                        }
                        h.request_stop();
                    });
                }
            });
        }
        Err(e) => eprintln!(
            "{prog}: cannot handle {} ({e}); they will end the process without a handover",
            crate::os::signals::StopSignals::NAMES
        ),
    }
    // Err: the runtime ended (the handler is gone) before `started`.
    if let (Ok(()), Some(why)) = (started_rx.recv(), options.death_notice_unavailable()) {
        let warning =
            RuntimeEvent::Warning { code: "death_notice_off".into(), message: format!("no death notice: {why}") };
        emit(&event_line(wall_ms(), handle.id(), &warning));
    }
    let (h, r) = (handle.clone(), runner.clone());
    let _ = std::thread::Builder::new().name("tenure-stdin".into()).spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(line) => control(&h, &line, r.as_ref()),
                Err(_) => break,
            }
            if !h.is_running() {
                break;
            }
        }
    });
    handle.wait();
    if let Some(r) = runner {
        r.shutdown();
    }
    match handle.fatal_error() {
        Some(_) => 1,
        None => 0,
    }
}

#[cfg(test)]
mod tests;
