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
use std::time::{SystemTime, UNIX_EPOCH};

use crate::{spawn, Engine, EngineInit, Handle, RuntimeConfig, RuntimeError, RuntimeEvent};

/// The `--help` text after `usage: PROG `.
pub const USAGE: &str = "run --id HOST:PORT --peer HOST:PORT [--peer HOST:PORT ...] --cluster NAME
    [--bind IP[:PORT]] [--min-cluster-size N] [--election-timeout-min MS] [--election-timeout-max MS]
    [--heartbeat-interval MS] [--ghost-ttl MS] [--state-file PATH] [--key-file PATH]
    [--admit-unknown-peers] [--max-peers N] [--http IP:PORT] [--ready-when node|leader]
       | --help | --version

Runs one tenure node over UDP and prints one JSON object per line to stdout for every event:
{\"ts_ms\": <wall-clock ms>, \"id\": \"HOST:PORT\", \"event\": \"leader\", \"term\": 4}.
Events: started, leader, follower (with \"leader\": id or null), peer_joined, peer_left, message,
warning (with \"code\" and \"message\"), inspect, fatal, stopped, and with --http one
http_listening (with \"addr\", the bound TCP address). SIGTERM or SIGINT stops the node
gracefully (a leader hands leadership over first). Control lines on stdin: `transfer [PEER]` (a
leader hands leadership to PEER, or to the peer heard from most recently), `inspect` (prints an
`inspect` line with the whole state), `broadcast TEXT` (sends TEXT to every member).

  --id HOST:PORT               this node's id: the address (IP or DNS name) peers send to (required)
  --peer HOST:PORT             a peer (repeat; at least one)
  --cluster NAME               the cluster id (required)
  --bind IP[:PORT]             the local address to listen on (default: the id's address; every
                               interface when the id is a DNS name)
  --min-cluster-size N         no leader below N members (default 3)
  --election-timeout-min MS    default 150 (or half of --election-timeout-max)
  --election-timeout-max MS    default 300 (or twice --election-timeout-min)
  --heartbeat-interval MS      default 50
  --ghost-ttl MS               default 5000
  --state-file PATH            make term and vote durable in PATH (locked: one node per file)
  --key-file PATH              authenticate every message with the key in PATH
  --admit-unknown-peers        admit a sender missing from --peer on its first valid message
                               (default: membership is closed; such messages are dropped)
  --max-peers N                most peers the view may hold (default 64)
  --http IP:PORT               serve GET /leader, /healthz, /readyz and /metrics (Prometheus) on
                               this TCP address (port 0: any free port; an `http_listening` line
                               gives the address); see docs/http.md
  --ready-when node|leader     /readyz is 200 while the node runs (node, the default) or only
                               while it leads with a valid lease (leader)
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
    /// `--ghost-ttl`.
    pub ghost_ttl: Option<u64>,
    /// `--state-file`.
    pub state_file: Option<String>,
    /// `--key-file`.
    pub key_file: Option<String>,
    /// `--admit-unknown-peers`.
    pub admit_unknown_peers: bool,
    /// `--max-peers`.
    pub max_peers: Option<u32>,
    /// `--http`.
    pub http: Option<String>,
    /// `--ready-when`.
    pub ready_when: Option<String>,
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
            "--" => return Err("a leader-only command (-- CMD) is not supported by this version".into()),
            _ => {}
        }
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag.as_str(), None),
        };
        if !name.starts_with("--") {
            return Err(format!("unexpected argument \"{flag}\""));
        }
        if name == "--admit-unknown-peers" {
            if inline.is_some() {
                return Err(format!("{name} takes no value"));
            }
            if o.admit_unknown_peers {
                return Err(format!("{name} given more than once"));
            }
            o.admit_unknown_peers = true;
            continue;
        }
        const KNOWN: [&str; 14] = [
            "--id",
            "--peer",
            "--cluster",
            "--bind",
            "--min-cluster-size",
            "--election-timeout-min",
            "--election-timeout-max",
            "--heartbeat-interval",
            "--ghost-ttl",
            "--state-file",
            "--key-file",
            "--max-peers",
            "--http",
            "--ready-when",
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
            "--ghost-ttl" => once(&mut o.ghost_ttl, name, number(name, &value)?)?,
            "--state-file" => once(&mut o.state_file, name, value)?,
            "--max-peers" => once(&mut o.max_peers, name, number(name, &value)?)?,
            "--http" => once(&mut o.http, name, value)?,
            "--ready-when" => once(&mut o.ready_when, name, value)?,
            _ => once(&mut o.key_file, name, value)?,
        }
    }
    if let Some(r) = &o.ready_when {
        r.parse::<crate::ReadyWhen>().map_err(|_| format!("--ready-when expects node or leader, got \"{r}\""))?;
    }
    o.id = id.ok_or("--id HOST:PORT is required")?;
    o.cluster = cluster.ok_or("--cluster NAME is required")?;
    if o.peers.is_empty() {
        return Err("at least one --peer HOST:PORT is required".to_string());
    }
    Ok(Command::Run(Box::new(o)))
}

impl RunOptions {
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
        if let Some(g) = self.ghost_ttl {
            c.ghost_ttl = g;
        }
        c.admit_unknown_peers = self.admit_unknown_peers;
        if let Some(n) = self.max_peers {
            c.max_peers = n;
        }
        let mut r = RuntimeConfig::new(c);
        r.bind = self.bind.clone();
        r.state_file = self.state_file.as_ref().map(PathBuf::from);
        r.key_file = self.key_file.as_ref().map(PathBuf::from);
        r.http = self.http.clone();
        r.ready_when = self.ready_when.as_deref().and_then(|w| w.parse().ok()).unwrap_or_default();
        r
    }
}

/// The key in a key file: its bytes with trailing whitespace (a final newline) removed.
pub fn key_from_file(contents: &[u8]) -> Vec<u8> {
    let end = contents.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
    contents.get(..end).unwrap_or_default().to_vec()
}

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

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn head(ts_ms: u64, id: &str, event: &str) -> String {
    format!("{{\"ts_ms\":{ts_ms},\"id\":{},\"event\":\"{event}\"", json_str(id))
}

/// Wall-clock milliseconds (for `ts_ms`, so that lines of several processes can be merged).
pub fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0))
}

/// The JSON line for an event (without the newline).
pub fn event_line(ts_ms: u64, id: &str, event: &RuntimeEvent) -> String {
    let (name, rest) = match event {
        RuntimeEvent::Started { bound_addr, term, .. } => {
            ("started", format!(",\"term\":{term},\"bound\":{}", json_str(&bound_addr.to_string())))
        }
        RuntimeEvent::Leader { term } => ("leader", format!(",\"term\":{term}")),
        RuntimeEvent::Follower { term, leader } => {
            ("follower", format!(",\"term\":{term},\"leader\":{}", leader.as_deref().map_or("null".into(), json_str)))
        }
        RuntimeEvent::PeerJoined { peer } => ("peer_joined", format!(",\"peer\":{}", json_str(peer))),
        RuntimeEvent::PeerLeft { peer } => ("peer_left", format!(",\"peer\":{}", json_str(peer))),
        RuntimeEvent::Message { from, payload } => {
            let hex: String = payload.iter().map(|b| format!("{b:02x}")).collect();
            ("message", format!(",\"from\":{},\"payload_hex\":\"{hex}\"", json_str(from)))
        }
        RuntimeEvent::Warning { code, message } => {
            ("warning", format!(",\"code\":{},\"message\":{}", json_str(code), json_str(message)))
        }
        RuntimeEvent::Fatal { error } => {
            ("fatal", format!(",\"code\":{},\"message\":{}", json_str(error.code()), json_str(&error.to_string())))
        }
        RuntimeEvent::Stopped { term } => ("stopped", format!(",\"term\":{term}")),
    };
    format!("{}{rest}}}", head(ts_ms, id, name))
}

/// The JSON `inspect` line: `{"ts_ms":…,"id":…,"event":"inspect","state":{…every inspect key…}}`.
pub fn inspect_line(ts_ms: u64, id: &str, state: &tenure::Inspect) -> String {
    format!("{},\"state\":{state}}}", head(ts_ms, id, "inspect"))
}

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
        _ => Err(format!("unknown control line \"{line}\"; expected `transfer [PEER]`, `inspect` or `broadcast TEXT`")),
    }
}

fn emit(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn control(handle: &Handle, line: &str) {
    let id = handle.id();
    let warn = |code: &str, message: &str| {
        emit(&event_line(wall_ms(), id, &RuntimeEvent::Warning { code: code.into(), message: message.into() }))
    };
    let result = match parse_control(line) {
        Ok(None) => Ok(()),
        Ok(Some(Control::Inspect)) => handle.inspect().map(|state| emit(&inspect_line(wall_ms(), id, &state))),
        Ok(Some(Control::Transfer(peer))) => handle.transfer(peer.as_deref()),
        Ok(Some(Control::Broadcast(payload))) => handle.broadcast(&payload),
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
/// signal exits at once with status 1).
pub fn main<I, S, E, F>(args: I, engine_factory: F) -> i32
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
    E: Engine,
    F: FnOnce(EngineInit) -> Result<E, RuntimeError>,
{
    let mut args = args.into_iter().map(|s| s.as_ref().to_string());
    let prog = args
        .next()
        .map(|p| std::path::Path::new(&p).file_name().map_or(p.clone(), |f| f.to_string_lossy().into_owned()));
    let prog = prog.unwrap_or_else(|| "tenure".into());
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
    let id = options.id.clone();
    let handle = match spawn(options.runtime_config(), engine_factory, move |event: RuntimeEvent| {
        emit(&event_line(wall_ms(), &id, &event))
    }) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return exit_code(&e);
        }
    };
    if let Some(addr) = handle.http_addr() {
        let addr = json_str(&addr.to_string());
        emit(&format!("{},\"addr\":{addr}}}", head(wall_ms(), handle.id(), "http_listening")));
    }
    match signal_hook::iterator::Signals::new([signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT]) {
        Ok(mut signals) => {
            let h = handle.clone();
            let _ = std::thread::Builder::new().name("tenure-signals".into()).spawn(move || {
                let mut seen = 0;
                for _ in signals.forever() {
                    seen += 1;
                    if seen > 1 {
                        std::process::exit(1);
                    }
                    h.request_stop();
                }
            });
        }
        Err(e) => eprintln!("{prog}: cannot handle SIGTERM/SIGINT ({e}); they will end the process without a handover"),
    }
    let h = handle.clone();
    let _ = std::thread::Builder::new().name("tenure-stdin".into()).spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(line) => control(&h, &line),
                Err(_) => break,
            }
            if !h.is_running() {
                break;
            }
        }
    });
    handle.wait();
    match handle.fatal_error() {
        Some(_) => 1,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_shared_command_line() {
        let cmd = parse_args([
            "run",
            "--id",
            "127.0.0.1:7001",
            "--peer",
            "127.0.0.1:7002",
            "--peer=127.0.0.1:7003",
            "--cluster",
            "c",
            "--bind",
            "0.0.0.0",
            "--election-timeout-min",
            "200",
            "--state-file",
            "/tmp/s",
        ])
        .unwrap();
        let Command::Run(o) = cmd else { panic!("not run") };
        assert_eq!(o.peers, vec!["127.0.0.1:7002", "127.0.0.1:7003"]);
        let c = o.runtime_config();
        assert_eq!(c.node.validate().unwrap().election_timeout_max, 400);
        assert_eq!(c.bind.as_deref(), Some("0.0.0.0"));
        assert_eq!(parse_args(["--help"]), Ok(Command::Help));
        assert_eq!(parse_args(["--version"]), Ok(Command::Version));
        assert_eq!(parse_args(["run", "--id", "a:1", "--version"]), Ok(Command::Version));
        assert!(parse_args(["run", "--id", "a:1", "--cluster", "c"]).unwrap_err().contains("--peer"));
        assert!(parse_args(["run", "--ghost-ttl", "x"]).unwrap_err().contains("--ghost-ttl"));
        assert!(parse_args(["run", "--bogus", "1"]).unwrap_err().contains("--bogus"));
        assert!(parse_args(["run", "--id", "a:1", "--id", "b:1"]).unwrap_err().contains("more than once"));
        assert!(parse_args(["run", "--id=a:1", "--cluster", "c", "--cluster=d"]).unwrap_err().contains("--cluster"));
        assert!(parse_args(["run", "stray"]).unwrap_err().contains("stray"));
        assert!(parse_args(["run", "--id"]).unwrap_err().contains("needs a value"));
        assert!(parse_args(["start"]).unwrap_err().contains("start"));
        let Command::Run(o) = parse_args([
            "run",
            "--id",
            "a:1",
            "--peer",
            "b:1",
            "--cluster",
            "c",
            "--admit-unknown-peers",
            "--max-peers",
            "4",
        ])
        .unwrap() else {
            panic!("not run")
        };
        let c = o.runtime_config();
        assert!(c.node.admit_unknown_peers);
        assert_eq!(c.node.max_peers, 4);
        assert!(parse_args(["run", "--admit-unknown-peers", "--admit-unknown-peers"])
            .unwrap_err()
            .contains("more than once"));
        assert!(parse_args(["run", "--admit-unknown-peers=yes"]).unwrap_err().contains("takes no value"));
    }

    #[test]
    fn the_help_quotes_the_cores_defaults() {
        for (flag, default) in [
            ("--min-cluster-size N ", u64::from(tenure::DEFAULT_MIN_CLUSTER_SIZE)),
            ("--election-timeout-min MS ", tenure::DEFAULT_ELECTION_TIMEOUT_MIN),
            ("--election-timeout-max MS ", tenure::DEFAULT_ELECTION_TIMEOUT_MAX),
            ("--heartbeat-interval MS ", tenure::DEFAULT_HEARTBEAT_INTERVAL),
            ("--ghost-ttl MS ", tenure::DEFAULT_GHOST_TTL),
            ("--max-peers N ", u64::from(tenure::DEFAULT_MAX_PEERS)),
        ] {
            let line = USAGE.lines().find(|l| l.trim_start().starts_with(flag)).unwrap_or_else(|| panic!("{flag}"));
            assert!(line.contains(&format!("default {default}")), "{line}");
        }
    }

    #[test]
    fn event_lines_have_one_schema() {
        let l = event_line(5, "a", &RuntimeEvent::Leader { term: 4 });
        assert_eq!(l, r#"{"ts_ms":5,"id":"a","event":"leader","term":4}"#);
        let l = event_line(5, "a", &RuntimeEvent::Follower { term: 4, leader: None });
        assert_eq!(l, r#"{"ts_ms":5,"id":"a","event":"follower","term":4,"leader":null}"#);
        let l = event_line(5, "a", &RuntimeEvent::Follower { term: 4, leader: Some("b\"".into()) });
        assert_eq!(l, r#"{"ts_ms":5,"id":"a","event":"follower","term":4,"leader":"b\""}"#);
        let l = event_line(1, "a", &RuntimeEvent::Message { from: "b".into(), payload: vec![0, 255] });
        assert_eq!(l, r#"{"ts_ms":1,"id":"a","event":"message","from":"b","payload_hex":"00ff"}"#);
        let l = event_line(1, "a", &RuntimeEvent::Fatal { error: RuntimeError::Stopped });
        assert_eq!(l, r#"{"ts_ms":1,"id":"a","event":"fatal","code":"stopped","message":"the runtime has stopped"}"#);
        for e in [
            RuntimeEvent::Started { id: "a".into(), bound_addr: "127.0.0.1:1".parse().unwrap(), term: 0 },
            RuntimeEvent::Warning { code: "x".into(), message: "y\n".into() },
            RuntimeEvent::Stopped { term: 2 },
            RuntimeEvent::PeerJoined { peer: "p".into() },
            RuntimeEvent::PeerLeft { peer: "p".into() },
        ] {
            let v: serde_json::Value = serde_json::from_str(&event_line(1, "a", &e)).unwrap();
            assert_eq!(v["id"], "a");
        }
        assert_eq!(key_from_file(b"secret\n"), b"secret".to_vec());
    }

    #[test]
    fn control_lines() {
        assert_eq!(
            parse_control(" transfer 127.0.0.1:7002\n"),
            Ok(Some(Control::Transfer(Some("127.0.0.1:7002".into()))))
        );
        assert_eq!(parse_control("transfer"), Ok(Some(Control::Transfer(None))));
        assert_eq!(parse_control("inspect"), Ok(Some(Control::Inspect)));
        assert_eq!(parse_control("broadcast hi there"), Ok(Some(Control::Broadcast(b"hi there".to_vec()))));
        assert_eq!(parse_control(""), Ok(None));
        assert!(parse_control("transfer a b").is_err());
        assert!(parse_control("reboot now").is_err());
    }
}
