//! What the Python, Node.js and wasmtime runtimes share: one command line and one JSON event
//! stream. Living here, in the core, keeps the three identical by construction.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::Write;

use crate::config::Config;
use crate::inspect::write_json_str;
use crate::node::Event;

/// The shared `--help` text (the program name is prepended by each runtime).
pub const USAGE: &str = "run --id HOST:PORT --peer HOST:PORT [--peer HOST:PORT ...] --cluster NAME
    [--min-cluster-size N] [--election-timeout-min MS] [--election-timeout-max MS]
    [--heartbeat-interval MS] [--ghost-ttl MS] [--state-file PATH] [--key-file PATH]

Runs one tenure node over UDP on HOST:PORT and prints one JSON object per line to stdout for
every event: {\"ts_ms\": <wall-clock ms>, \"id\": \"HOST:PORT\", \"event\": \"leader\", \"term\": 4}.
Events: started, leader, follower (with \"leader\": id or null), peer_joined, peer_left, message,
warning, inspect, stopped. SIGTERM or SIGINT stops the node gracefully (a leader transfers leadership
first). Control lines on stdin: `transfer HOST:PORT` (a leader hands leadership over), `inspect`
(prints an `inspect` line with the whole state), `broadcast TEXT` (sends TEXT to every member).

  --id HOST:PORT               this node's id and UDP address (required)
  --peer HOST:PORT             a peer (repeat; at least one)
  --cluster NAME               the cluster id (required)
  --min-cluster-size N         no leader below N members (default 3)
  --election-timeout-min MS    default 150 (or half of --election-timeout-max)
  --election-timeout-max MS    default 300 (or twice --election-timeout-min)
  --heartbeat-interval MS      default 50
  --ghost-ttl MS               default 5000
  --state-file PATH            make term and vote durable in PATH
  --key-file PATH              authenticate every message with the key in PATH
";

/// Parsed `run` options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunOptions {
    /// `--id`.
    pub id: String,
    /// `--peer`, in order.
    pub peers: Vec<String>,
    /// `--cluster`.
    pub cluster: String,
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
}

/// What the command line asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `run ...`
    Run(RunOptions),
    /// `--help`, `-h` or `help`: print [`USAGE`] and exit 0.
    Help,
}

fn number<T: core::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value.parse().map_err(|_| format!("{flag} expects a non-negative whole number, got \"{value}\""))
}

/// Parses the arguments after the program name (`run --id ... ...`).
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
        Some(other) => return Err(format!("unknown command \"{other}\"; expected \"run\"")),
    }
    let mut o = RunOptions::default();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(Command::Help);
        }
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag.as_str(), None),
        };
        let value = match inline {
            Some(v) => v,
            None => it.next().cloned().ok_or_else(|| format!("{name} needs a value"))?,
        };
        match name {
            "--id" => o.id = value,
            "--peer" => o.peers.push(value),
            "--cluster" => o.cluster = value,
            "--min-cluster-size" => o.min_cluster_size = Some(number(name, &value)?),
            "--election-timeout-min" => o.election_timeout_min = Some(number(name, &value)?),
            "--election-timeout-max" => o.election_timeout_max = Some(number(name, &value)?),
            "--heartbeat-interval" => o.heartbeat_interval = Some(number(name, &value)?),
            "--ghost-ttl" => o.ghost_ttl = Some(number(name, &value)?),
            "--state-file" => o.state_file = Some(value),
            "--key-file" => o.key_file = Some(value),
            other => return Err(format!("unknown option \"{other}\"")),
        }
    }
    if o.id.is_empty() {
        return Err("--id HOST:PORT is required".to_string());
    }
    if o.cluster.is_empty() {
        return Err("--cluster NAME is required".to_string());
    }
    if o.peers.is_empty() {
        return Err("at least one --peer HOST:PORT is required".to_string());
    }
    Ok(Command::Run(o))
}

impl RunOptions {
    /// The node configuration these options describe. `key` is the key file's contents, as
    /// returned by [`key_from_file`]. Durable state is on exactly when `--state-file` is given.
    pub fn config(&self, key: Option<Vec<u8>>) -> Config {
        let mut c = Config::new(self.id.clone(), self.cluster.clone()).bootstrap(self.peers.iter().cloned());
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
        c.durable = self.state_file.is_some();
        c.key = key;
        c
    }
}

/// The key in a key file: its bytes with trailing whitespace (a final newline) removed.
pub fn key_from_file(contents: &[u8]) -> Vec<u8> {
    let end = contents.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
    contents.get(..end).unwrap_or_default().to_vec()
}

fn head(ts_ms: u64, id: &str, event: &str) -> String {
    let mut s = String::new();
    let _ = write!(s, "{{\"ts_ms\":{ts_ms},\"id\":");
    let _ = write_json_str(&mut s, id);
    s.push_str(",\"event\":");
    let _ = write_json_str(&mut s, event);
    s
}

/// The JSON line for a node event, or `None` for events that are requests to the host rather
/// than news (`ConfirmLeader`).
pub fn event_line(ts_ms: u64, id: &str, event: &Event) -> Option<String> {
    let mut s = match event {
        Event::BecameLeader { term } => {
            let mut s = head(ts_ms, id, "leader");
            let _ = write!(s, ",\"term\":{term}");
            s
        }
        Event::BecameFollower { term, leader } => {
            let mut s = head(ts_ms, id, "follower");
            let _ = write!(s, ",\"term\":{term},\"leader\":");
            match leader {
                Some(l) => {
                    let _ = write_json_str(&mut s, l);
                }
                None => s.push_str("null"),
            }
            s
        }
        Event::PeerJoined { peer } | Event::PeerLeft { peer } => {
            let name = if matches!(event, Event::PeerJoined { .. }) { "peer_joined" } else { "peer_left" };
            let mut s = head(ts_ms, id, name);
            s.push_str(",\"peer\":");
            let _ = write_json_str(&mut s, peer);
            s
        }
        Event::Message { from, payload } => {
            let mut s = head(ts_ms, id, "message");
            s.push_str(",\"from\":");
            let _ = write_json_str(&mut s, from);
            s.push_str(",\"payload_hex\":\"");
            for b in payload {
                let _ = write!(s, "{b:02x}");
            }
            s.push('"');
            s
        }
        Event::ConfirmLeader { .. } => return None,
    };
    s.push('}');
    Some(s)
}

/// A JSON line for a runtime's own lifecycle events (`started`, `stopped`): carries the term.
pub fn lifecycle_line(ts_ms: u64, id: &str, event: &str, term: u64) -> String {
    let mut s = head(ts_ms, id, event);
    let _ = write!(s, ",\"term\":{term}}}");
    s
}

/// A command read from a runtime's stdin, one per line (see [`USAGE`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// `transfer PEER`: a leader hands leadership to PEER.
    Transfer(String),
    /// `inspect`: print an `inspect` line.
    Inspect,
    /// `broadcast TEXT`: send TEXT (UTF-8) to every member.
    Broadcast(Vec<u8>),
}

/// Parses one stdin control line; `Ok(None)` for a blank line.
pub fn parse_control(line: &str) -> Result<Option<Control>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let (cmd, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(c, r)| (c, r.trim()));
    match (cmd, rest) {
        ("inspect", "") => Ok(Some(Control::Inspect)),
        ("transfer", peer) if !peer.is_empty() && !peer.contains(char::is_whitespace) => {
            Ok(Some(Control::Transfer(peer.to_string())))
        }
        ("broadcast", text) => Ok(Some(Control::Broadcast(text.as_bytes().to_vec()))),
        _ => Err(format!("unknown control line \"{line}\"; expected `transfer PEER`, `inspect` or `broadcast TEXT`")),
    }
}

/// The JSON `inspect` line: `{"ts_ms":…,"id":…,"event":"inspect","state":{…every inspect key…}}`.
pub fn inspect_line(ts_ms: u64, id: &str, state: &crate::Inspect) -> String {
    let mut s = head(ts_ms, id, "inspect");
    let _ = write!(s, ",\"state\":{state}}}");
    s
}

/// A JSON `warning` line (configuration warnings, send failures) with a message.
pub fn warning_line(ts_ms: u64, id: &str, code: &str, message: &str) -> String {
    let mut s = head(ts_ms, id, "warning");
    s.push_str(",\"code\":");
    let _ = write_json_str(&mut s, code);
    s.push_str(",\"message\":");
    let _ = write_json_str(&mut s, message);
    s.push('}');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

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
            "--election-timeout-min",
            "200",
            "--state-file",
            "/tmp/s",
        ])
        .unwrap();
        let Command::Run(o) = cmd else { panic!("not run") };
        assert_eq!(o.peers, vec!["127.0.0.1:7002", "127.0.0.1:7003"]);
        let c = o.config(None).validate().unwrap();
        assert_eq!(c.election_timeout_max, 400);
        assert!(o.config(None).durable);
        assert_eq!(parse_args(["--help"]), Ok(Command::Help));
        assert!(parse_args(["run", "--id", "a", "--cluster", "c"]).unwrap_err().contains("--peer"));
        assert!(parse_args(["run", "--ghost-ttl", "x"]).unwrap_err().contains("--ghost-ttl"));
        assert!(parse_args(["run", "--bogus", "1"]).unwrap_err().contains("--bogus"));
    }

    #[test]
    fn event_lines_have_one_schema() {
        let l = event_line(5, "a", &Event::BecameLeader { term: 4 }).unwrap();
        assert_eq!(l, r#"{"ts_ms":5,"id":"a","event":"leader","term":4}"#);
        let l = event_line(5, "a", &Event::BecameFollower { term: 4, leader: None }).unwrap();
        assert_eq!(l, r#"{"ts_ms":5,"id":"a","event":"follower","term":4,"leader":null}"#);
        assert_eq!(event_line(5, "a", &Event::ConfirmLeader { term: 1 }), None);
        assert_eq!(lifecycle_line(1, "a", "started", 0), r#"{"ts_ms":1,"id":"a","event":"started","term":0}"#);
        assert_eq!(key_from_file(b"secret\n"), b"secret".to_vec());
        assert_eq!(parse_control(" transfer 127.0.0.1:7002\n"), Ok(Some(Control::Transfer("127.0.0.1:7002".into()))));
        assert_eq!(parse_control("inspect"), Ok(Some(Control::Inspect)));
        assert_eq!(parse_control(""), Ok(None));
        assert!(parse_control("transfer").is_err());
        assert!(parse_control("reboot now").is_err());
    }
}
