//! The watchdog of the death notice (docs/command.md, "The watchdog"), with real processes over
//! loopback: a killed leader is replaced before the promise made to it could run out, and
//! nothing is sent while the leader's process lives, after a handover, or when the leader-only
//! command outlived its lease deadline.
//!
//! The promise here is long (`--election-timeout-min 1500`): a new leader within a second of a
//! kill can only come from a notice, and one after it only from the lease path. These are
//! behaviours, not timings: the notice's speed is measured in `benches/` (BENCHMARKS.md).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(15);
/// `--election-timeout-min`: the promise a follower makes lasts this long (less the drift margin).
const PROMISE_MS: u64 = 1500;
/// A new leader this soon after a kill cannot have waited out the promise.
const BEFORE_PROMISE_MS: u64 = 1000;

fn ids(n: usize) -> Vec<String> {
    free_ports(n).into_iter().map(|p| format!("127.0.0.1:{p}")).collect()
}

fn node(id: &str, all: &[String], lines: &Lines, extra: &[&str]) -> Proc {
    let mut args = vec!["--election-timeout-min", "1500", "--election-timeout-max", "3000"];
    args.extend_from_slice(extra);
    start_cmd(id, run_cmd(id, all, &args), lines)
}

fn cluster(all: &[String], lines: &Lines, extra: &[&str]) -> Vec<Proc> {
    all.iter().map(|id| node(id, all, lines, extra)).collect()
}

/// The supervisor (watchdog) processes started by `pid`.
fn watchdogs(pid: u32) -> Vec<u64> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = entry.file_name().to_str().and_then(|s| s.parse::<u64>().ok()) else { continue };
        let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
        if cmdline.split(|b| *b == 0).any(|w| w == b"__supervise")
            && std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|_| parent(p) == u64::from(pid))
        {
            found.push(p);
        }
    }
    found
}

fn ms(v: &Value) -> u64 {
    v["ts_ms"].as_u64().unwrap()
}

/// Waits for the first leader, then for its watchdog to be armed (the run loop publishes the
/// notices after the members said they speak the notice's wire version).
fn leader(lines: &mut Lines) -> Value {
    let l = lines.wait(LIMIT, is("leader"));
    lines.collect(Duration::from_millis(500));
    l
}

fn kill_leader(procs: &mut Vec<Proc>, leader: &Value) -> (Proc, u64) {
    let p = procs.iter().position(|p| p.id == leader["id"]).unwrap();
    let proc = procs.remove(p);
    let at = wall_ms();
    proc.signal(9);
    (proc, at)
}

fn next_leader(lines: &mut Lines, after: &Value) -> Value {
    let term = after["term"].as_u64().unwrap();
    lines.wait(LIMIT, |v| v["event"] == "leader" && v["term"].as_u64() > Some(term))
}

fn notices_of(lines: &Lines, id: &Value) -> Vec<Value> {
    lines.seen.iter().filter(|v| v["event"] == "death_notice" && v["id"] == *id).cloned().collect()
}

#[test]
fn a_killed_leader_is_replaced_before_the_promise_made_to_it_ends() {
    let all = ids(3);
    let mut lines = Lines::default();
    let mut procs = cluster(&all, &lines, &[]);
    let first = leader(&mut lines);
    assert_eq!(watchdogs(procs[0].child.id()).len(), 1, "every node runs a watchdog");
    let (_dead, killed_at) = kill_leader(&mut procs, &first);
    let notice = lines.wait(LIMIT, |v| v["event"] == "death_notice" && v["id"] == first["id"]);
    assert_eq!((notice["sent"].as_u64(), notice["peers"].as_u64()), (Some(2), Some(2)), "{notice}");
    assert_eq!(notice["term"], first["term"]);
    let next = next_leader(&mut lines, &first);
    let took = ms(&next).saturating_sub(killed_at);
    assert!(took < BEFORE_PROMISE_MS, "a new leader {took} ms after the kill: the notice did not release the promise");
    lines.collect(Duration::from_millis(300));
    lines.assert_one_leader_per_term();
}

/// An abort (SIGABRT: what `abort()`, a failed assertion in C code or a Rust `panic = "abort"`
/// raise) ends the process as the kernel ends it for a crash: the pidfd proves the death the
/// same way, and the notice goes out. (A SIGSEGV sent with kill(2) is no segfault: Rust's
/// stack-overflow handler returns from it and the process lives on; a real fault re-executes.)
#[test]
fn a_leader_that_aborts_is_replaced_by_its_notice() {
    let all = ids(3);
    let mut lines = Lines::default();
    let mut procs = cluster(&all, &lines, &[]);
    let first = leader(&mut lines);
    let p = procs.iter().position(|p| p.id == first["id"]).unwrap();
    let dead = procs.remove(p);
    let killed_at = wall_ms();
    dead.signal(6);
    let notice = lines.wait(LIMIT, |v| v["event"] == "death_notice" && v["id"] == first["id"]);
    assert_eq!(notice["sent"].as_u64(), Some(2), "{notice}");
    let next = next_leader(&mut lines, &first);
    let took = ms(&next).saturating_sub(killed_at);
    assert!(took < BEFORE_PROMISE_MS, "a new leader {took} ms after the abort");
    lines.collect(Duration::from_millis(300));
    lines.assert_one_leader_per_term();
}

/// A leader-only command that ends on SIGTERM: the watchdog ends it first, then sends.
#[test]
fn a_killed_leaders_command_ends_before_the_notice_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ended");
    let script = format!("trap 'date +%s%N > {}; exit 0' TERM; while :; do sleep 0.01; done", marker.display());
    let all = ids(3);
    let mut lines = Lines::default();
    let mut procs = cluster(&all, &lines, &["--", "sh", "-c", &script]);
    let first = lines.wait(LIMIT, is("command_started"));
    lines.collect(Duration::from_millis(500));
    let (_dead, killed_at) = kill_leader(&mut procs, &first);
    let notice = lines.wait(LIMIT, |v| v["event"] == "death_notice" && v["id"] == first["id"]);
    assert_eq!(notice["sent"].as_u64(), Some(2), "{notice}");
    let next = lines.wait(LIMIT, |v| v["event"] == "command_started" && v["term"].as_u64() > first["term"].as_u64());
    let took = ms(&next).saturating_sub(killed_at);
    assert!(took < BEFORE_PROMISE_MS, "the next command started {took} ms after the kill");
    let ended_ms = std::fs::read_to_string(&marker).unwrap().trim().parse::<u64>().unwrap() / 1_000_000;
    assert!(ended_ms <= ms(&notice), "the command ended at {ended_ms}, after the notice left at {}", ms(&notice));
}

/// A command that ignores SIGTERM and is killed only at its lease deadline (the grace is longer):
/// its tree ends after the deadline, so no notice may leave; failover waits out the promise.
#[test]
fn a_command_that_outlives_its_lease_deadline_means_no_notice() {
    let all = ids(3);
    let mut lines = Lines::default();
    let script = "trap '' TERM; while :; do sleep 0.01; done";
    let mut procs = cluster(&all, &lines, &["--kill-grace", "60000", "--", "sh", "-c", script]);
    let first = lines.wait(LIMIT, is("command_started"));
    lines.collect(Duration::from_millis(500));
    let (_dead, killed_at) = kill_leader(&mut procs, &first);
    let next = next_leader(&mut lines, &first);
    let took = ms(&next).saturating_sub(killed_at);
    lines.collect(Duration::from_millis(500));
    assert!(notices_of(&lines, &first["id"]).is_empty(), "a notice left after the lease deadline");
    assert!(took >= PROMISE_MS / 2, "a new leader {took} ms after the kill, before the promise could end");
}

/// SIGSTOP is not death: the followers elect by the lease path, and the paused process's watchdog
/// sends nothing; resumed, the old leader follows, and killed then, it has nothing to announce.
#[test]
fn a_paused_leader_sends_nothing_and_a_deposed_one_has_nothing_to_send() {
    let all = ids(3);
    let mut lines = Lines::default();
    let mut procs = cluster(&all, &lines, &[]);
    let first = leader(&mut lines);
    let p = procs.iter().position(|p| p.id == first["id"]).unwrap();
    let paused_at = wall_ms();
    procs[p].signal(19);
    let next = next_leader(&mut lines, &first);
    assert!(ms(&next).saturating_sub(paused_at) >= PROMISE_MS / 2, "{next}");
    procs[p].signal(18);
    lines.wait(LIMIT, |v| v["event"] == "follower" && v["id"] == first["id"] && v["term"] == next["term"]);
    lines.collect(Duration::from_millis(300));
    procs.remove(p).signal(9);
    lines.collect(Duration::from_millis(1000));
    assert!(notices_of(&lines, &first["id"]).is_empty(), "a notice from a paused or deposed leader");
}

/// A graceful handover disarms the watchdog before the transfer: a kill right after it sends
/// nothing.
#[test]
fn a_leader_killed_right_after_a_transfer_sends_nothing() {
    let all = ids(3);
    let mut lines = Lines::default();
    let mut procs = cluster(&all, &lines, &[]);
    let first = leader(&mut lines);
    let p = procs.iter().position(|p| p.id == first["id"]).unwrap();
    procs[p].send_line("transfer");
    next_leader(&mut lines, &first);
    procs.remove(p).signal(9);
    lines.collect(Duration::from_millis(1000));
    assert!(notices_of(&lines, &first["id"]).is_empty(), "a notice after a handover");
}

/// The runtime and its watchdog killed together (as a container's end does): no notice, the lease
/// path.
#[test]
fn a_leader_killed_with_its_watchdog_fails_over_by_the_lease() {
    let all = ids(3);
    let mut lines = Lines::default();
    let mut procs = cluster(&all, &lines, &[]);
    let first = leader(&mut lines);
    let p = procs.iter().position(|p| p.id == first["id"]).unwrap();
    let dogs = watchdogs(procs[p].child.id());
    assert_eq!(dogs.len(), 1);
    let at = Instant::now();
    let _ = std::process::Command::new("kill").arg("-9").arg(dogs[0].to_string()).status();
    let (_dead, killed_at) = kill_leader(&mut procs, &first);
    let next = next_leader(&mut lines, &first);
    assert!(ms(&next).saturating_sub(killed_at) >= PROMISE_MS / 2, "{next} after {:?}", at.elapsed());
    assert!(notices_of(&lines, &first["id"]).is_empty());
}

#[test]
fn no_watchdog_with_no_death_notice_nor_with_http_unless_asked() {
    let all = ids(1);
    let lines = Lines::default();
    let started = |extra: &[&str]| {
        let mut p = start_cmd(&all[0], run_cmd(&all[0], &[], &[&["--min-cluster-size", "1"], extra].concat()), &lines);
        std::thread::sleep(Duration::from_millis(400));
        let n = watchdogs(p.child.id()).len();
        p.signal(15);
        p.wait_exit(LIMIT);
        n
    };
    assert_eq!(started(&[]), 1);
    assert_eq!(started(&["--no-death-notice"]), 0);
    assert_eq!(started(&["--http", "127.0.0.1:0"]), 0);
    assert_eq!(started(&["--http", "127.0.0.1:0", "--death-notice"]), 1);
    let _ = Path::new(".");
}

/// The supervisor's socket closes while the leader's process lives (a runtime thread that ended
/// inside a living Python or Node.js process looks like this): the command is stopped and no
/// notice leaves, since the process — and whatever work it does — lives on.
#[test]
fn a_closed_socket_with_a_living_process_stops_the_command_and_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ended");
    let script = format!("trap 'touch {}; exit 0' TERM; while :; do sleep 0.01; done", marker.display());
    let all = ids(3);
    let mut lines = Lines::default();
    let mut procs: Vec<Proc> = all
        .iter()
        .map(|id| {
            let mut args = vec!["--election-timeout-min", "1500", "--election-timeout-max", "3000"];
            args.extend(["--", "sh", "-c", &script]);
            let mut cmd = run_cmd(id, &all, &args);
            cmd.env("TENURE_TEST_CLOSE_WATCHDOG_MS", "300");
            start_cmd(id, cmd, &lines)
        })
        .collect();
    let first = lines.wait(LIMIT, is("command_started"));
    assert!(poll_until(LIMIT, Duration::from_millis(10), || marker.exists()), "the command was not stopped");
    lines.collect(Duration::from_millis(1500));
    assert!(notices_of(&lines, &first["id"]).is_empty(), "a notice while the leader's process lives");
    let p = procs.iter().position(|p| p.id == first["id"]).unwrap();
    assert!(procs[p].child.try_wait().unwrap().is_none(), "the leader's process is alive");
    procs.clear();
}

/// The executable of process `pid`.
fn exe(pid: u64) -> std::path::PathBuf {
    std::fs::read_link(format!("/proc/{pid}/exe")).unwrap()
}

/// The watchdog is the small `tenure-supervise` from the runtime's own directory (cargo builds it
/// beside `tenure`), found through a symlink to `tenure` too, not a second copy of the runtime.
#[test]
fn the_watchdog_is_the_helper_beside_the_executable() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("tenure");
    std::os::unix::fs::symlink(BIN, &link).unwrap();
    let helper = Path::new(BIN).with_file_name("tenure-supervise").canonicalize().unwrap();
    let all = ids(1);
    let lines = Lines::default();
    for bin in [Path::new(BIN), &link] {
        let mut p = start_cmd(&all[0], run_cmd_with(bin, &all[0], &[], &["--min-cluster-size", "1"]), &lines);
        let mut dogs = Vec::new();
        assert!(poll_until(LIMIT, Duration::from_millis(10), || {
            dogs = watchdogs(p.child.id());
            !dogs.is_empty()
        }));
        assert_eq!(exe(dogs[0]), helper, "the watchdog of {}", bin.display());
        p.signal(15);
        p.wait_exit(LIMIT);
    }
}

/// A `tenure` with no `tenure-supervise` beside it runs itself again as the watchdog, which sends
/// the notice as the helper does.
#[test]
fn without_the_helper_the_runtime_is_its_own_watchdog() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("tenure");
    std::fs::copy(BIN, &alone).unwrap();
    let all = ids(3);
    let mut lines = Lines::default();
    let mut procs: Vec<Proc> = all
        .iter()
        .map(|id| {
            let args = ["--election-timeout-min", "1500", "--election-timeout-max", "3000"];
            start_cmd(id, run_cmd_with(&alone, id, &all, &args), &lines)
        })
        .collect();
    let first = leader(&mut lines);
    for p in &procs {
        let dogs = watchdogs(p.child.id());
        assert_eq!(dogs.len(), 1);
        assert_eq!(exe(dogs[0]), alone.canonicalize().unwrap());
    }
    let (_dead, killed_at) = kill_leader(&mut procs, &first);
    let notice = lines.wait(LIMIT, |v| v["event"] == "death_notice" && v["id"] == first["id"]);
    assert_eq!(notice["sent"].as_u64(), Some(2), "{notice}");
    let next = next_leader(&mut lines, &first);
    let took = ms(&next).saturating_sub(killed_at);
    assert!(took < BEFORE_PROMISE_MS, "a new leader {took} ms after the kill");
}
