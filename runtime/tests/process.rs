//! The `tenure` binary as real processes over loopback UDP.

mod common;

use std::process::Command;
use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(10);

#[test]
fn three_nodes_elect_obey_stdin_hand_over_on_sigterm_and_fail_over_on_kill() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("key"), "process test key\n").unwrap();
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let mut lines = Lines::default();
    let start = |id: &String, lines: &Lines| {
        let state = dir.path().join(id.replace(':', "_"));
        let key = dir.path().join("key");
        let cmd = run_cmd(id, &ids, &["--state-file", state.to_str().unwrap(), "--key-file", key.to_str().unwrap()]);
        start_cmd(id, cmd, lines)
    };
    let mut procs: Vec<Proc> = ids.iter().map(|id| start(id, &lines)).collect();
    let first = lines.wait(LIMIT, is("leader"));
    let leader = first["id"].as_str().unwrap().to_string();
    let term = first["term"].as_u64().unwrap();

    // stdin: inspect, a bad line, then transfer (to the peer heard from most recently).
    let p = procs.iter().position(|p| p.id == leader).unwrap();
    procs[p].send_line("inspect");
    let inspect = lines.wait(LIMIT, |v| v["event"] == "inspect" && v["id"] == leader.as_str());
    assert_eq!(inspect["state"]["state"], "leader");
    assert_eq!(inspect["state"]["view_size"], 3);
    procs[p].send_line("reboot now");
    let bad = lines.wait(LIMIT, |v| v["event"] == "warning" && v["id"] == leader.as_str());
    assert_eq!(bad["code"], "bad_control_line");
    // `join PEER` and `leave PEER` (a fourth member that never runs, then withdrawn).
    procs[p].send_line("join 127.0.0.1:1");
    lines.wait(LIMIT, |v| v["event"] == "peer_joined" && v["id"] == leader.as_str() && v["peer"] == "127.0.0.1:1");
    procs[p].send_line("leave 127.0.0.1:1");
    lines.wait(LIMIT, |v| v["event"] == "peer_left" && v["id"] == leader.as_str() && v["peer"] == "127.0.0.1:1");
    procs[p].send_line("join udp://127.0.0.1:1");
    let w = lines.wait(LIMIT, |v| v["event"] == "warning" && v["code"] == "invalid_peer");
    assert!(w["message"].as_str().unwrap().contains("URL scheme"), "{w}");
    let follower = procs.iter().position(|p| p.id != leader).unwrap();
    procs[follower].send_line("transfer");
    let refused = lines.wait(LIMIT, |v| v["event"] == "warning" && v["code"] == "not_leader");
    assert_eq!(refused["id"], procs[follower].id.as_str());
    procs[p].send_line("transfer");
    let second = lines.wait(LIMIT, |v| v["event"] == "leader" && v["term"].as_u64() > Some(term));
    assert_ne!(second["id"], leader.as_str());
    let second_id = second["id"].as_str().unwrap().to_string();

    // SIGTERM the leader: it hands over, prints `stopped` and exits 0.
    let p = procs.iter().position(|p| p.id == second_id).unwrap();
    procs[p].signal(15);
    let third = lines.wait(LIMIT, |v| v["event"] == "leader" && v["term"].as_u64() > second["term"].as_u64());
    assert_ne!(third["id"], second_id.as_str());
    lines.wait(LIMIT, |v| v["event"] == "stopped" && v["id"] == second_id.as_str());
    assert!(procs[p].wait_exit(LIMIT).success());
    procs.remove(p);

    // Restart it (term and vote from its state file), then SIGKILL the leader: no handover,
    // the two left elect a leader in a later term.
    procs.push(start(&second_id, &lines));
    let restarted = lines.wait_new(LIMIT, |v| v["event"] == "started" && v["id"] == second_id.as_str());
    assert!(restarted["term"].as_u64() >= second["term"].as_u64(), "{restarted}");
    let third_id = third["id"].as_str().unwrap().to_string();
    let p = procs.iter().position(|p| p.id == third_id).unwrap();
    procs.remove(p); // Drop: SIGKILL.
    let fourth = lines.wait(LIMIT, |v| v["event"] == "leader" && v["term"].as_u64() > third["term"].as_u64());
    assert_ne!(fourth["id"], third_id.as_str());
    lines.assert_one_leader_per_term();
}

#[test]
fn the_state_file_is_reused_migrated_and_locked() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let state = dir.path().join("state");
    // The old one-line format is read and rewritten as JSON.
    std::fs::write(&state, format!("7 {}\n", ids[1])).unwrap();
    let mut lines = Lines::default();
    let mut node = start_cmd(&ids[0], run_cmd(&ids[0], &ids, &["--state-file", state.to_str().unwrap()]), &lines);
    let started = lines.wait(LIMIT, is("started"));
    assert_eq!(started["term"], 7);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(json, serde_json::json!({"term": 7, "voted_for": ids[1]}));

    // A second process on the same state file: refused (exit 4), whatever its port.
    let out = run_cmd(&ids[2], &ids, &["--state-file", state.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("locked by another process"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    node.signal(2); // SIGINT: graceful, like SIGTERM.
    assert!(node.wait_exit(LIMIT).success());
    lines.wait(LIMIT, is("stopped"));
    // Free again once the first has exited.
    let mut again = start_cmd(&ids[2], run_cmd(&ids[2], &ids, &["--state-file", state.to_str().unwrap()]), &lines);
    let started = lines.wait_new(LIMIT, is("started"));
    assert_eq!(started["term"], 7);
    again.signal(15);
    assert!(again.wait_exit(LIMIT).success());
}

/// `started` is the first line even when a control line is already waiting on stdin (its answer
/// used to race it).
#[test]
fn started_is_the_first_line_even_with_a_control_line_waiting() {
    use std::io::{BufRead, Write};
    for _ in 0..50 {
        let ids: Vec<String> = free_ports(2).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let mut child = Command::new(BIN)
            .args(["run", "--id", &ids[0], "--peer", &ids[1], "--cluster", "c"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .env("TENURE_LOG", "off")
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(b"reboot now\n").unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let first: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(first["event"], "started", "{first}");
    }
}

#[test]
fn each_bad_input_is_one_line_and_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let corrupt = dir.path().join("corrupt");
    std::fs::write(&corrupt, "not a state\n").unwrap();
    let binary = dir.path().join("binary");
    std::fs::write(&binary, [0xff, 0x00, 0xfe]).unwrap();
    let missing_dir = dir.path().join("no").join("state");
    let _taken = std::net::UdpSocket::bind(&ids[0]).unwrap();
    let run = |args: &[&str]| -> (Option<i32>, String) {
        let out = Command::new(BIN).args(args).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let peers = ["--peer", &ids[1], "--peer", &ids[2], "--cluster", "c"];
    let with = |id: &str, extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["run", "--id", id].iter().map(|s| s.to_string()).collect();
        v.extend(peers.iter().map(|s| s.to_string()));
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (vec!["run".into(), "--bogus".into()], 2, "unknown option \"--bogus\""),
        (with(&ids[1], &["--cluster", "d"]), 2, "--cluster given more than once"),
        (with(&ids[1], &["--ghost-ttl", "soon"]), 2, "--ghost-ttl expects a non-negative whole number"),
        (with("127.0.0.1", &[]), 2, "invalid id \"127.0.0.1\": it has no port"),
        (with("127.0.0.1:0", &[]), 2, "port 0"),
        (with("127.0.0.1:70000", &[]), 2, "above 65535"),
        (with("0.0.0.0:7000", &[]), 2, "--bind"),
        (with("[::]:7000", &[]), 2, "--bind"),
        (with(&ids[1], &["--peer", "localhost"]), 2, "invalid peer \"localhost\""),
        (with(&ids[1], &["--bind", "eth0"]), 2, "invalid bind address \"eth0\""),
        (with(&ids[1], &["--election-timeout-min", "500", "--election-timeout-max", "400"]), 2, "must not exceed"),
        (with(&ids[0], &[]), 3, "already in use"),
        (with(&ids[1], &["--state-file", corrupt.to_str().unwrap()]), 4, "is corrupt"),
        (with(&ids[1], &["--state-file", binary.to_str().unwrap()]), 4, "not UTF-8"),
        (with(&ids[1], &["--state-file", missing_dir.to_str().unwrap()]), 4, "directory does not exist"),
        (with(&ids[1], &["--key-file", "/nonexistent/key"]), 5, "cannot read key file /nonexistent/key"),
    ];
    for (args, code, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (got, err) = run(&args);
        assert_eq!(got, Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
    let (code, _) = run(&["--version"]);
    assert_eq!(code, Some(0));
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("usage: tenure run --id HOST:PORT"));
}

#[test]
fn ipv6_loopback_elects() {
    if std::net::UdpSocket::bind("[::1]:0").is_err() {
        eprintln!("skipped: no IPv6 loopback here");
        return;
    }
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("[::1]:{p}")).collect();
    let mut lines = Lines::default();
    let _procs: Vec<Proc> = ids.iter().map(|id| start_cmd(id, run_cmd(id, &ids, &[]), &lines)).collect();
    let leader = lines.wait(LIMIT, is("leader"));
    assert!(leader["id"].as_str().unwrap().starts_with("[::1]:"));
    lines.wait(LIMIT, |v| v["event"] == "follower" && v["leader"] == leader["id"]);
    lines.assert_one_leader_per_term();
}

#[test]
fn silent_misconfiguration_is_explained_in_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, "outsider key\n").unwrap();
    let mut ids: Vec<String> = free_ports(4).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let outsider = ids.pop().unwrap();
    let mut lines = Lines::default();
    // Node 0 is configured right; node 1 runs another cluster id; node 2 has a key the others do
    // not; an outsider names them all as peers, but nobody declared it. Nobody can form a quorum,
    // and node 0 says why.
    let _a = start_cmd(&ids[0], run_cmd(&ids[0], &ids, &[]), &lines);
    let mut other = Command::new(BIN);
    other.args(["run", "--id", &ids[1], "--cluster", "another"]);
    for p in &ids {
        other.args(["--peer", p]);
    }
    let _b = start_cmd(&ids[1], other, &lines);
    let _c = start_cmd(&ids[2], run_cmd(&ids[2], &ids, &["--key-file", key.to_str().unwrap()]), &lines);
    let _d = start_cmd(&outsider, run_cmd(&outsider, &ids, &[]), &lines);
    let mine = |code: &'static str| {
        let id = ids[0].clone();
        move |v: &serde_json::Value| v["event"] == "warning" && v["id"] == id.as_str() && v["code"] == code
    };
    let w = lines.wait(LIMIT, mine("dropped_wrong_cluster"));
    assert!(w["message"].as_str().unwrap().contains("different --cluster"), "{w}");
    let w = lines.wait(LIMIT, mine("dropped_bad_mac"));
    assert!(w["message"].as_str().unwrap().contains("different key"), "{w}");
    let w = lines.wait(LIMIT, mine("dropped_unknown_peer"));
    assert!(w["message"].as_str().unwrap().contains(&format!("{outsider} ")), "{w}");
    assert!(w["message"].as_str().unwrap().contains("--peer"), "{w}");
    // Rate-limited: one of each per 10 s, however many datagrams were dropped meanwhile.
    lines.collect(Duration::from_millis(1500));
    for code in ["dropped_wrong_cluster", "dropped_bad_mac", "dropped_unknown_peer"] {
        assert_eq!(lines.seen.iter().filter(|v| mine(code)(v)).count(), 1, "{code}: {:#?}", lines.seen);
    }
    assert!(lines.seen.iter().all(|v| v["event"] != "leader"));
}

#[test]
fn a_view_below_min_cluster_size_is_explained() {
    let ids: Vec<String> = free_ports(2).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let mut lines = Lines::default();
    let _a = start_cmd(&ids[0], run_cmd(&ids[0], &ids[1..], &[]), &lines);
    let w = lines.wait(LIMIT, |v| v["event"] == "warning" && v["code"] == "view_too_small");
    assert!(w["message"].as_str().unwrap().contains("min_cluster_size 3"), "{w}");
}

/// A SIGKILLed leader's port refuses the followers' probes, and they elect without
/// waiting for an election timeout. The election timeout here is 2 s and the lease 60 ms, so a
/// new leader in under 1 s can only come from the refusal (without it, no follower campaigns
/// before 2 s of silence).
#[test]
fn a_killed_leaders_refused_port_ends_the_wait_for_an_election_timeout() {
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let lines = Lines::default();
    let fast = [
        "--election-timeout-min",
        "2000",
        "--election-timeout-max",
        "2500",
        "--heartbeat-interval",
        "20",
        "--lease-duration",
        "60",
    ];
    let mut procs: Vec<Proc> = ids.iter().map(|id| start_cmd(id, run_cmd(id, &ids, &fast), &lines)).collect();
    let mut lines = lines;
    let first = lines.wait(LIMIT, is("leader"));
    let leader = first["id"].as_str().unwrap().to_string();
    let term = first["term"].as_u64().unwrap();
    // Let every follower acknowledge a few heartbeats, then kill the leader.
    std::thread::sleep(Duration::from_millis(200));
    let p = procs.iter().position(|p| p.id == leader).unwrap();
    let killed = std::time::Instant::now();
    procs.remove(p); // Drop: SIGKILL.
    let next = lines.wait(LIMIT, |v| v["event"] == "leader" && v["term"].as_u64() > Some(term));
    let took = killed.elapsed();
    assert_ne!(next["id"], leader.as_str());
    assert!(took < Duration::from_millis(1_000), "took {took:?}: the refusal was not used (election timeout 2 s)");
    lines.assert_one_leader_per_term();
}
