//! `tenure` processes for the tests: spawn, read their JSON lines, write control lines, signal.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::UdpSocket;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_tenure");

pub struct Proc {
    pub id: String,
    pub child: Child,
    pub stdin: Option<ChildStdin>,
}

impl Proc {
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }
    pub fn signal(&self, sig: i32) {
        let status = Command::new("kill").arg(format!("-{sig}")).arg(self.child.id().to_string()).status().unwrap();
        assert!(status.success());
    }
    pub fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let mut status = None;
        let exited = poll_until(limit, Duration::from_millis(10), || {
            status = self.child.try_wait().unwrap();
            status.is_some()
        });
        assert!(exited, "{} did not exit", self.id);
        status.unwrap()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Checks `cond` every `every` until it holds or `limit` has passed; whether it held (a condition
/// on something other than event lines: a file, /proc, an exit status).
pub fn poll_until(limit: Duration, every: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(every);
    }
}

pub fn free_ports(n: usize) -> Vec<u16> {
    let sockets: Vec<UdpSocket> = (0..n).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
    sockets.iter().map(|s| s.local_addr().unwrap().port()).collect()
}

/// `n` ids `127.0.0.1:PORT` with ports free when asked.
pub fn loopback_ids(n: usize) -> Vec<String> {
    free_ports(n).into_iter().map(|p| format!("127.0.0.1:{p}")).collect()
}

/// One event of an in-process cluster: the node's id, when it arrived, the event.
pub type Tagged = (String, Instant, tenure_runtime::RuntimeEvent);

/// Spawns an in-process runtime (the native engine) per configuration; every event goes to `tx`
/// tagged with its node's id and arrival instant.
pub fn spawn_all(
    configs: impl IntoIterator<Item = tenure_runtime::RuntimeConfig>,
    tx: &Sender<Tagged>,
) -> Vec<tenure_runtime::Handle> {
    configs
        .into_iter()
        .map(|c| {
            let (id, tx) = (c.node.id.clone(), tx.clone());
            tenure_runtime::spawn(c, tenure_runtime::native, move |e| {
                let _ = tx.send((id.clone(), Instant::now(), e));
            })
            .unwrap()
        })
        .collect()
}

/// Every JSON line of every process, in arrival order.
pub struct Lines {
    pub tx: Sender<Value>,
    rx: Receiver<Value>,
    pub seen: Vec<Value>,
}

impl Default for Lines {
    fn default() -> Self {
        let (tx, rx) = channel();
        Lines { tx, rx, seen: Vec::new() }
    }
}

impl Lines {
    /// The first line, already seen or still to come, that satisfies `pred`.
    #[track_caller]
    pub fn wait(&mut self, limit: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(v) = self.seen.iter().find(|v| pred(v)) {
            return v.clone();
        }
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(v) => {
                    self.seen.push(v.clone());
                    if pred(&v) {
                        return v;
                    }
                }
                Err(_) => panic!("timed out; lines so far: {:#?}", self.seen),
            }
        }
    }

    /// A line after every line seen so far.
    #[track_caller]
    pub fn wait_new(&mut self, limit: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        let already = self.seen.len();
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(v) => {
                    self.seen.push(v.clone());
                    if pred(&v) {
                        return v;
                    }
                }
                Err(_) => panic!("timed out; lines after {already}: {:#?}", &self.seen[already..]),
            }
        }
    }

    /// Collects every line arriving within `d`.
    pub fn collect(&mut self, d: Duration) {
        let deadline = Instant::now() + d;
        while let Ok(v) = self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            self.seen.push(v);
        }
    }

    /// Asserts one leader per term across every line seen.
    pub fn assert_one_leader_per_term(&self) {
        let mut by_term = std::collections::BTreeMap::new();
        for v in self.seen.iter().filter(|v| v["event"] == "leader") {
            let prev = by_term.insert(v["term"].as_u64().unwrap(), v["id"].as_str().unwrap().to_string());
            assert!(prev.is_none() || prev.as_deref() == v["id"].as_str(), "two leaders in a term: {:#?}", self.seen);
        }
    }
}

/// Starts `cmd` (a `tenure run ...` command) as node `id`, its stdout lines going to `lines`.
pub fn start_cmd(id: &str, mut cmd: Command, lines: &Lines) -> Proc {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env("TENURE_LOG", "warn")
        .spawn()
        .expect("spawn tenure");
    let out = child.stdout.take().unwrap();
    let tx = lines.tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let stdin = child.stdin.take();
    Proc { id: id.to_string(), child, stdin }
}

/// `tenure run --id ID --peer ALL... --cluster C` plus `extra`.
pub fn run_cmd(id: &str, all: &[String], extra: &[&str]) -> Command {
    run_cmd_with(BIN.as_ref(), id, all, extra)
}

/// [`run_cmd`] with another `tenure` executable (a copy, a symlink).
pub fn run_cmd_with(bin: &std::path::Path, id: &str, all: &[String], extra: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(["run", "--id", id, "--cluster", "process-test"]);
    for p in all {
        cmd.args(["--peer", p]);
    }
    cmd.args(extra);
    cmd
}

pub fn is(event: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["event"] == event
}

/// The parent pid of `pid` (from /proc).
pub fn parent(pid: u64) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit_once(") ").unwrap().1.split(' ').nth(1).unwrap().parse().unwrap()
}

/// Wall-clock milliseconds (to compare with the event lines' `ts_ms`).
pub fn wall_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}
