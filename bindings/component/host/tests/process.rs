//! `tenure-wasmtime` processes over UDP on 127.0.0.1: three elect one leader; on SIGTERM the
//! leader hands leadership over and prints `stopped`; a killed leader is replaced, by its
//! watchdog's death notices (the component's `death-notices`) before the promise made to it ends.

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

struct Proc {
    id: String,
    child: Child,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_ports(n: usize) -> Vec<u16> {
    let sockets: Vec<UdpSocket> = (0..n).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
    sockets.iter().map(|s| s.local_addr().unwrap().port()).collect()
}

/// Starts one node per id in `ids`, each declaring every node of `all` as a peer (membership is
/// closed); every JSON line goes to one channel.
fn start(ids: &[String], all: &[String], tx: &std::sync::mpsc::Sender<Value>, dir: &std::path::Path) -> Vec<Proc> {
    start_with(ids, all, tx, dir, &["--election-timeout-min", "150"])
}

/// [`start`] with these options instead of the short election timeout.
fn start_with(
    ids: &[String],
    all: &[String],
    tx: &std::sync::mpsc::Sender<Value>,
    dir: &std::path::Path,
    options: &[&str],
) -> Vec<Proc> {
    ids.iter()
        .map(|id| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_tenure-wasmtime"));
            cmd.args(["run", "--id", id, "--cluster", "wasmtime-procs"]).args(options);
            for p in all {
                cmd.args(["--peer", p]);
            }
            cmd.arg("--state-file").arg(dir.join(id.replace(':', "_")));
            // Authenticated cluster: every message carries an HMAC with this key.
            cmd.arg("--key-file").arg(dir.join("cluster.key"));
            let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("spawn tenure-wasmtime");
            let out = child.stdout.take().unwrap();
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
                    if tx.send(v).is_err() {
                        break;
                    }
                }
            });
            Proc { id: id.clone(), child }
        })
        .collect()
}

/// Returns the first line, already seen or still to come, that satisfies `pred` (lines from the
/// processes interleave, so one wait may consume the line another is waiting for).
fn wait_for(rx: &Receiver<Value>, seen: &mut Vec<Value>, limit: Duration, pred: impl Fn(&Value) -> bool) -> Value {
    if let Some(v) = seen.iter().find(|v| pred(v)) {
        return v.clone();
    }
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(v) => {
                seen.push(v.clone());
                if pred(&v) {
                    return v;
                }
            }
            Err(_) => panic!("timed out; lines so far: {seen:#?}"),
        }
    }
}

#[test]
fn three_processes_elect_hand_over_on_sigterm_and_fail_over_on_kill() {
    let dir = std::env::temp_dir().join(format!("tenure-wasmtime-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cluster.key"), b"component process test key\n").unwrap();
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let (tx, rx) = channel();
    let mut procs = start(&ids, &ids, &tx, &dir);
    let mut seen = Vec::new();
    // Compiling the component at start-up takes a few seconds in a debug build.
    let limit = Duration::from_secs(60);

    let is = |ev: &'static str| move |v: &Value| v["event"] == ev;
    let first = wait_for(&rx, &mut seen, limit, is("leader"));
    let leader = first["id"].as_str().unwrap().to_string();
    let term = first["term"].as_u64().unwrap();
    assert!(seen.iter().filter(|v| v["event"] == "started").count() >= 1);

    // SIGTERM the leader: it transfers, a new leader appears in a later term, then it stops.
    let p = procs.iter().position(|p| p.id == leader).unwrap();
    let pid = procs[p].child.id() as libc::pid_t;
    let signalled_at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    // SAFETY: sending a signal to a child we spawned.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let second =
        wait_for(&rx, &mut seen, Duration::from_secs(10), |v| v["event"] == "leader" && v["id"] != leader.as_str());
    assert!(second["term"].as_u64().unwrap() > term);
    eprintln!(
        "graceful handover after SIGTERM: new leader {} ms after the signal",
        second["ts_ms"].as_u64().unwrap().saturating_sub(signalled_at)
    );
    let stopped =
        wait_for(&rx, &mut seen, Duration::from_secs(10), |v| v["event"] == "stopped" && v["id"] == leader.as_str());
    let stopped_at = stopped["ts_ms"].as_u64().unwrap();
    let status = procs[p].child.wait().unwrap();
    assert!(status.success(), "{status}");
    procs.remove(p);

    // Restart the stopped node (its term and vote come back from its state file), then SIGKILL
    // the new leader: no handover, the two left elect a third leader.
    procs.extend(start(std::slice::from_ref(&leader), &ids, &tx, &dir));
    wait_for(&rx, &mut seen, limit, |v| {
        v["event"] == "started" && v["id"] == leader.as_str() && v["ts_ms"].as_u64() > Some(stopped_at)
    });
    let new_leader = second["id"].as_str().unwrap().to_string();
    let p = procs.iter().position(|p| p.id == new_leader).unwrap();
    procs.remove(p); // Drop kills it (SIGKILL): no handover.
    let killed_at = Instant::now();
    let killed_term = seen
        .iter()
        .filter(|v| v["event"] == "leader" && v["id"] == new_leader.as_str())
        .filter_map(|v| v["term"].as_u64())
        .max()
        .unwrap();
    let third = wait_for(&rx, &mut seen, limit, |v| {
        v["event"] == "leader" && v["id"] != new_leader.as_str() && v["term"].as_u64() > Some(killed_term)
    });
    assert!(third["term"].as_u64().unwrap() > second["term"].as_u64().unwrap());
    eprintln!("failover after SIGKILL of the leader: {} ms", killed_at.elapsed().as_millis());

    // One leader per term across everything printed.
    let mut by_term = std::collections::BTreeMap::new();
    for v in seen.iter().filter(|v| v["event"] == "leader") {
        let prev = by_term.insert(v["term"].as_u64().unwrap(), v["id"].as_str().unwrap().to_string());
        assert!(prev.is_none() || prev.as_deref() == v["id"].as_str(), "two leaders in a term: {seen:#?}");
    }
    drop(procs);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The watchdog with the component engine (as runtime/tests/watchdog.rs with the native one): a
/// SIGKILLed leader's watchdog sends the notices the component encoded and authenticated, and a
/// new leader comes well before the promise made to the dead one could end (`--election-timeout-min
/// 1500`: within a second only a notice can release it).
#[test]
fn a_killed_leader_is_replaced_by_its_death_notice() {
    let dir = std::env::temp_dir().join(format!("tenure-wasmtime-notice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cluster.key"), b"component notice test key\n").unwrap();
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let (tx, rx) = channel();
    let options = ["--election-timeout-min", "1500", "--election-timeout-max", "3000"];
    let mut procs = start_with(&ids, &ids, &tx, &dir, &options);
    let mut seen = Vec::new();
    let first = wait_for(&rx, &mut seen, Duration::from_secs(60), |v| v["event"] == "leader");
    assert!(!seen.iter().any(|v| v["event"] == "warning" && v["code"] == "death_notice_off"), "{seen:#?}");
    // The run loop arms the watchdog once the members said they speak the notice's wire version.
    std::thread::sleep(Duration::from_millis(500));
    let leader = first["id"].as_str().unwrap().to_string();
    let term = first["term"].as_u64().unwrap();
    let p = procs.iter().position(|p| p.id == leader).unwrap();
    let killed_at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    procs.remove(p); // Drop kills it (SIGKILL); its watchdog lives on.
    let notice = wait_for(&rx, &mut seen, Duration::from_secs(15), |v| {
        v["event"] == "death_notice" && v["id"] == leader.as_str()
    });
    assert_eq!((notice["sent"].as_u64(), notice["peers"].as_u64()), (Some(2), Some(2)), "{notice}");
    assert_eq!(notice["term"].as_u64(), Some(term));
    let next = wait_for(&rx, &mut seen, Duration::from_secs(15), |v| {
        v["event"] == "leader" && v["term"].as_u64() > Some(term)
    });
    let took = next["ts_ms"].as_u64().unwrap().saturating_sub(killed_at);
    assert!(took < 1000, "a new leader {took} ms after the kill: the notice did not release the promise");
    drop(procs);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_command_lines_are_usage_errors() {
    let out = Command::new(env!("CARGO_BIN_EXE_tenure-wasmtime")).args(["run", "--id", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cluster"));
    let out = Command::new(env!("CARGO_BIN_EXE_tenure-wasmtime")).arg("--help").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("usage: tenure-wasmtime run --id HOST:PORT"));
}
