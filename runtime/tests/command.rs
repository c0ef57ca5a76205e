//! The leader-only command (`tenure run ... -- CMD ARGS...`) as real processes over loopback UDP:
//! it runs on the leader only, with its environment; it stops before a transfer; a SIGKILLed
//! runtime takes it down; a SIGSTOPped runtime's supervisor kills it by the lease deadline; a
//! failing command hands leadership over with a backoff; and across kills, pauses and transfers
//! no two commands run at once (from the commands' own timestamps).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(10);

/// The lease span at the default timeouts: `election_timeout_min` (150) − ⌈2ρ · 150⌉ with
/// ρ = 1 % (docs/protocol.md). The lease deadline is at most this after the last heartbeat sent.
const LEASE_SPAN_MS: u64 = 146;

/// Slack for scheduling on a loaded machine (two cores shared with builds): a supervisor woken a
/// little late, a `/proc` poll. The faults checked below are off by hundreds of milliseconds.
const SLACK_MS: u64 = 50;

/// A command that records its own life in `DIR/<leader id>-<term>-<pid>`: `env TERM LEADER`, `start
/// NS`, a `t NS` tick every 5 ms, and `stop NS` on SIGTERM (then exits 0). With `ignore-term`, it
/// ignores SIGTERM (only SIGKILL ends it).
fn ticker(dir: &Path) -> PathBuf {
    let script = dir.join("ticker.sh");
    std::fs::write(
        &script,
        r#"#!/bin/sh
f="$1/$TENURE_LEADER_ID-$TENURE_TERM-$$"
echo "env $TENURE_TERM $TENURE_LEADER_ID" > "$f"
echo "start $(date +%s%N)" >> "$f"
if [ "$2" = ignore-term ]; then trap '' TERM; else trap 'echo "stop $(date +%s%N)" >> "$f"; exit 0' TERM; fi
while :; do echo "t $(date +%s%N)" >> "$f"; sleep 0.005; done
"#,
    )
    .unwrap();
    script
}

fn ids(n: usize) -> Vec<String> {
    free_ports(n).into_iter().map(|p| format!("127.0.0.1:{p}")).collect()
}

fn start_node(id: &str, all: &[String], lines: &Lines, command: &[&str], env: &[(&str, &str)]) -> Proc {
    let mut cmd = run_cmd(id, all, &["--kill-grace", "300", "--"]);
    cmd.args(command);
    for (k, v) in env {
        cmd.env(k, v);
    }
    start_cmd(id, cmd, lines)
}

/// Whether `pid` is alive (present in /proc and not a zombie).
fn alive(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next()) != Some('Z'),
        Err(_) => false,
    }
}

fn ms(v: &Value) -> u64 {
    v["ts_ms"].as_u64().unwrap()
}

/// One command's life from its own file.
#[derive(Debug)]
struct Life {
    name: String,
    term: u64,
    leader: String,
    start_ns: u64,
    end_ns: u64,
}

fn lives(dir: &Path) -> Vec<Life> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "ticker.sh" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut life = Life { name, term: 0, leader: String::new(), start_ns: 0, end_ns: 0 };
        for line in text.lines() {
            let mut w = line.split(' ');
            // A line may be cut by SIGKILL (`t ` without its time): skipped.
            match (w.next(), w.next().map(str::parse::<u64>), w.next()) {
                (Some("env"), Some(Ok(term)), Some(leader)) => {
                    life.term = term;
                    life.leader = leader.to_string();
                }
                (Some("start"), Some(Ok(ns)), None) => life.start_ns = ns,
                (Some("t" | "stop"), Some(Ok(ns)), None) => life.end_ns = life.end_ns.max(ns),
                _ => {}
            }
        }
        if life.start_ns > 0 {
            life.end_ns = life.end_ns.max(life.start_ns);
            out.push(life);
        }
    }
    out.sort_by_key(|l| l.start_ns);
    out
}

/// The largest overlap (ms) between two commands' lives, and the pair.
fn max_overlap(lives: &[Life]) -> (i64, String) {
    let mut worst = (i64::MIN, String::new());
    for (i, a) in lives.iter().enumerate() {
        for b in &lives[i + 1..] {
            let overlap = (a.end_ns as i64 - b.start_ns as i64) / 1_000_000;
            if overlap > worst.0 {
                worst = (overlap, format!("{} (until {}) and {} (from {})", a.name, a.end_ns, b.name, b.start_ns));
            }
        }
    }
    worst
}

#[test]
fn the_command_runs_on_the_leader_only_with_its_env_and_stops_before_a_transfer() {
    let dir = tempfile::tempdir().unwrap();
    let script = ticker(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let ids = ids(3);
    let mut lines = Lines::default();
    let (s, o) = (script.to_str().unwrap(), out.to_str().unwrap());
    let mut procs: Vec<Proc> = ids.iter().map(|id| start_node(id, &ids, &lines, &["sh", s, o], &[])).collect();
    let started = lines.wait(LIMIT, is("command_started"));
    let leader = started["id"].as_str().unwrap().to_string();
    let term = started["term"].as_u64().unwrap();
    let led = lines.wait(LIMIT, |v| v["event"] == "leader" && v["term"] == term);
    assert_eq!(led["id"], leader.as_str(), "the command started on a node that does not lead");
    // Let it tick, then check the environment it got, and that it is the only one.
    lines.collect(Duration::from_millis(300));
    let now = lives(&out);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!((now[0].term, now[0].leader.as_str()), (term, leader.as_str()));
    assert!(now[0].name.ends_with(&format!("-{}", started["pid"])), "pid is not the command's own: {started}");
    assert_eq!(lines.seen.iter().filter(|v| v["event"] == "command_started").count(), 1);

    // transfer: the command stops (SIGTERM; it records `stop`), then the new leader's starts.
    let p = procs.iter().position(|p| p.id == leader).unwrap();
    procs[p].send_line("transfer");
    let second = lines.wait(LIMIT, |v| v["event"] == "command_started" && v["term"].as_u64() > Some(term));
    assert_ne!(second["id"], leader.as_str());
    let stopped = lines.wait(LIMIT, |v| v["event"] == "command_stopped" && v["id"] == leader.as_str());
    assert_eq!(stopped["cause"], "stopped");
    assert_eq!(stopped["pid"], started["pid"]);
    assert!(ms(&stopped) <= ms(&second), "stopped {stopped} after the new leader's start {second}");
    // The new command writes its first line.
    poll_until(LIMIT, Duration::from_millis(10), || lives(&out).len() >= 2);
    let all = lives(&out);
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all[0].end_ns < all[1].start_ns, "the commands overlap: {all:?}");
    assert!(std::fs::read_to_string(out.join(&all[0].name)).unwrap().contains("\nstop "), "no SIGTERM seen");
    lines.assert_one_leader_per_term();
}

#[test]
fn sigkill_of_the_runtime_takes_the_command_down() {
    let dir = tempfile::tempdir().unwrap();
    let script = ticker(dir.path());
    let ids = ids(3);
    let mut lines = Lines::default();
    let (s, o) = (script.to_str().unwrap(), dir.path().to_str().unwrap());
    // The command ignores SIGTERM: only a SIGKILL ends it, the supervisor's when it sees the
    // runtime gone (at once while a death notice is armed) and at the latest at the lease deadline.
    let procs: Vec<Proc> =
        ids.iter().map(|id| start_node(id, &ids, &lines, &["sh", s, o, "ignore-term"], &[])).collect();
    let started = lines.wait(LIMIT, is("command_started"));
    // The command's pid, and its process group's leader: the guard, the supervisor's child.
    let pid = started["pid"].as_u64().unwrap();
    let guard = started["pgid"].as_u64().unwrap();
    let supervisor = parent(guard);
    assert!(alive(pid) && alive(guard) && alive(supervisor));
    let p = procs.iter().position(|p| p.id == started["id"].as_str().unwrap()).unwrap();
    let runtime = procs[p].child.id() as u64;
    assert_eq!(parent(supervisor), runtime, "the supervisor is the runtime's child");
    let at = Instant::now();
    let killed_at = wall_ms();
    procs[p].signal(9); // the runtime's pid alone, not its group
    let limit = Duration::from_millis(LEASE_SPAN_MS + 1000);
    poll_until(limit, Duration::from_millis(2), || !alive(pid) && !alive(guard) && !alive(supervisor));
    assert!(!alive(pid), "the command outlived its SIGKILLed runtime by {limit:?}");
    assert!(!alive(supervisor), "the supervisor outlived its SIGKILLed runtime by {limit:?}");
    let gone = at.elapsed().as_millis() as u64;
    // The lease bounds the work: SIGTERM is ignored, so only the SIGKILL at the lease deadline ends
    // it. The command's own last tick says when its work stopped; when this test's poll saw the
    // processes gone (reaped, /proc updated) also counts the scheduling of a loaded machine.
    let life = lives(o.as_ref()).into_iter().find(|l| l.name.ends_with(&format!("-{pid}"))).unwrap();
    let worked = (life.end_ns / 1_000_000).saturating_sub(killed_at);
    eprintln!(
        "command's last tick {worked} ms, command and supervisor seen gone {gone} ms after the runtime's SIGKILL"
    );
    assert!(worked <= LEASE_SPAN_MS + SLACK_MS, "the command still ticked {worked} ms after the SIGKILL");
    // And the others go on: a new leader starts its own command.
    lines.wait(LIMIT, |v| v["event"] == "command_started" && v["term"].as_u64() > started["term"].as_u64());
}

#[test]
fn sigstop_of_the_runtime_still_stops_the_command_by_the_lease_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let script = ticker(dir.path());
    let ids = ids(3);
    let mut lines = Lines::default();
    let (s, o) = (script.to_str().unwrap(), dir.path().to_str().unwrap());
    let procs: Vec<Proc> = ids.iter().map(|id| start_node(id, &ids, &lines, &["sh", s, o], &[])).collect();
    let started = lines.wait(LIMIT, is("command_started"));
    let pid = started["pid"].as_u64().unwrap();
    let id = started["id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_millis(200)); // some renewals
    let p = procs.iter().position(|p| p.id == id).unwrap();
    let stopped_at = wall_ms();
    procs[p].signal(19); // SIGSTOP: the runtime renews nothing more, orders nothing more
                         // The stop lands somewhere while `kill` runs: a renewal published meanwhile may be later than
                         // `stopped_at`, never than this.
    let stopped_by = wall_ms();
    poll_until(Duration::from_secs(2), Duration::from_millis(2), || !alive(pid));
    let gone = wall_ms();
    assert!(!alive(pid), "the command of a paused runtime still runs after 2 s");
    // Another node leads and runs its command while this runtime is still paused.
    let next = lines.wait(LIMIT, |v| v["event"] == "command_started" && v["term"].as_u64() > started["term"].as_u64());
    assert_ne!(next["id"], id.as_str());
    procs[p].signal(18); // SIGCONT
    let stopped = lines.wait(LIMIT, |v| v["event"] == "command_stopped" && v["id"] == id.as_str());
    assert_eq!(stopped["cause"], "deadline", "{stopped}");
    assert_eq!(stopped["signal"], 9);
    let deadline = stopped["lease_deadline_ts_ms"].as_u64().unwrap();
    eprintln!(
        "paused at {stopped_at}, lease deadline +{} ms, command gone +{} ms",
        deadline - stopped_at,
        gone - stopped_at
    );
    // The deadline it was held to is the last one reported before the pause (no later than the
    // lease span after it), and it died by then: its last tick, and /proc, say so.
    assert!(deadline <= stopped_by + LEASE_SPAN_MS + 1, "deadline {deadline}, paused by {stopped_by}");
    assert!(gone <= deadline + SLACK_MS, "gone at {gone}, lease deadline {deadline}");
    let life = lives(dir.path()).into_iter().find(|l| l.leader == id).unwrap();
    let last_tick = life.end_ns / 1_000_000;
    assert!(last_tick <= deadline + SLACK_MS, "ticked at {last_tick}, after the lease deadline {deadline}");
    // Back from the pause it follows. Its command was killed because the lease ran out, not
    // because it failed: no "handing leadership over" it no longer has, and no backoff.
    lines.wait(LIMIT, |v| {
        v["event"] == "follower" && v["id"] == id.as_str() && v["term"].as_u64() >= next["term"].as_u64()
    });
    lines.collect(Duration::from_millis(500));
    let complaints: Vec<&Value> = lines
        .seen
        .iter()
        .filter(|v| v["id"] == id.as_str() && v["event"] == "warning")
        .filter(|v| v["code"] == "command_failed" || v["code"] == "command_backoff")
        .collect();
    assert!(complaints.is_empty(), "the resumed node blamed its command: {complaints:#?}");
}

#[test]
fn a_failing_command_hands_leadership_over_and_a_healthy_node_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = ticker(dir.path());
    let ids = ids(3);
    let mut lines = Lines::default();
    let (s, o) = (script.to_str().unwrap(), dir.path().to_str().unwrap());
    // Node 0's command fails at once; the others' work.
    let mut procs: Vec<Proc> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| match i {
            0 => start_node(id, &ids, &lines, &["sh", "-c", "exit 3"], &[]),
            _ => start_node(id, &ids, &lines, &["sh", s, o], &[]),
        })
        .collect();
    let first = lines.wait(LIMIT, is("leader"));
    if first["id"] != ids[0].as_str() {
        let p = procs.iter().position(|p| p.id == first["id"].as_str().unwrap()).unwrap();
        procs[p].send_line(&format!("transfer {}", ids[0]));
    }
    let failed = lines.wait(LIMIT, |v| v["event"] == "command_exited" && v["id"] == ids[0].as_str());
    assert_eq!((failed["code"].as_i64(), failed["cause"].as_str()), (Some(3), Some("exited")), "{failed}");
    lines.wait(LIMIT, |v| v["event"] == "warning" && v["code"] == "command_failed" && v["id"] == ids[0].as_str());
    let backoff = lines.wait(LIMIT, |v| v["event"] == "warning" && v["code"] == "command_backoff");
    assert_eq!(backoff["id"], ids[0].as_str());
    let next = lines.wait(LIMIT, |v| v["event"] == "command_started" && v["term"].as_u64() > failed["term"].as_u64());
    assert_ne!(next["id"], ids[0].as_str());
    // The failure policy retried it in place (max_failures = 3) before handing over.
    let runs = lines.seen.iter().filter(|v| v["event"] == "command_exited" && v["term"] == failed["term"]).count();
    assert_eq!(runs, 3, "runs of the failing command in its leadership");
    // The healthy leader keeps it: no new term for a second. (Its own `leader` line may arrive
    // after its `command_started`: the runner starts the command from the snapshot, which is
    // published before the event is printed, and the two lines come from different threads.)
    let before = lines.seen.len();
    lines.collect(Duration::from_secs(1));
    let later: Vec<&Value> = lines.seen[before..]
        .iter()
        .filter(|v| v["event"] == "leader" && v["term"].as_u64() > next["term"].as_u64())
        .collect();
    assert!(later.is_empty(), "the healthy leader lost leadership: {later:?}");
    lines.assert_one_leader_per_term();
}

#[test]
fn a_command_that_always_fails_does_not_churn_terms() {
    let ids = ids(3);
    let mut lines = Lines::default();
    let _procs: Vec<Proc> = ids.iter().map(|id| start_node(id, &ids, &lines, &["sh", "-c", "exit 3"], &[])).collect();
    let max_term = |lines: &Lines| lines.seen.iter().filter_map(|v| v["term"].as_u64()).max().unwrap_or(0);
    lines.collect(Duration::from_secs(4));
    let at_4s = max_term(&lines);
    lines.collect(Duration::from_secs(5));
    let at_9s = max_term(&lines);
    let failures = lines.seen.iter().filter(|v| v["event"] == "command_exited").count();
    eprintln!("{failures} failures in 9 s; term {at_4s} at 4 s, {at_9s} at 9 s");
    assert!(failures >= 3, "the command did not run and fail repeatedly: {failures}");
    // Without a backoff every node fails and hands over about every 200-300 ms (about 20 terms in
    // 5 s). With the failure policy each node, after handing over, campaigns last for 1, 2, 4, 8
    // ... × election_timeout_max (300 ms), at most 5 s: by 4 s each has held 300 + 600 + 1200 ms,
    // so from 4 s to 9 s each leads at most about twice more.
    assert!(at_9s - at_4s <= 10, "{} terms from 4 s to 9 s (term {at_4s} -> {at_9s})", at_9s - at_4s);
}

/// At a limit the user set (`--max-step-downs`), a node whose command keeps failing hands
/// leadership over and exits with status 1, so that a supervisor restarts it; the others go on.
#[test]
fn at_a_user_limit_a_failing_command_hands_over_and_exits_1() {
    let ids = ids(3);
    let mut lines = Lines::default();
    let limit = ["--max-failures", "2", "--max-step-downs", "1", "--"];
    let mut procs: Vec<Proc> = ids
        .iter()
        .map(|id| {
            start_cmd(
                id,
                {
                    let mut c = run_cmd(id, &ids, &limit);
                    c.args(["sh", "-c", "exit 3"]);
                    c
                },
                &lines,
            )
        })
        .collect();
    let failed = lines.wait(LIMIT, |v| v["event"] == "fatal" && v["code"] == "leader_work_failed");
    let p = procs.iter().position(|p| p.id == failed["id"].as_str().unwrap()).unwrap();
    assert_eq!(procs[p].wait_exit(LIMIT).code(), Some(1));
    let exits: Vec<&Value> =
        lines.seen.iter().filter(|v| v["event"] == "command_exited" && v["id"] == failed["id"]).collect();
    let (runs, term) = (exits.len(), exits.last().and_then(|v| v["term"].as_u64()));
    assert_eq!(runs, 2, "--max-failures 2: two runs before the hand-over");
    // It handed over before it stopped: another node leads a later term.
    lines.wait(LIMIT, |v| v["event"] == "leader" && v["id"] != failed["id"] && v["term"].as_u64() > term);
    procs.remove(p);
}

/// Kills, pauses, transfers and graceful stops of the leader's runtime, cycled; returns the largest
/// overlap of two commands' lives (ms, from their own timestamps) and the lives.
fn chaos(rounds: &[&str], env: &[(&str, &str)]) -> ((i64, String), Vec<Life>) {
    let dir = tempfile::tempdir().unwrap();
    let script = ticker(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let ids = ids(3);
    let mut lines = Lines::default();
    let (s, o) = (script.to_str().unwrap().to_string(), out.to_str().unwrap().to_string());
    let start = |id: &String, lines: &Lines| start_node(id, &ids, lines, &["sh", &s, &o], env);
    let mut procs: Vec<Proc> = ids.iter().map(|id| start(id, &lines)).collect();
    let mut last = lines.wait(LIMIT, is("command_started"));
    for round in rounds {
        let leader = last["id"].as_str().unwrap().to_string();
        let p = procs.iter().position(|p| p.id == leader).unwrap();
        lines.collect(Duration::from_millis(150));
        match *round {
            "transfer" => procs[p].send_line("transfer"),
            "pause" => {
                procs[p].signal(19);
                let term = last["term"].as_u64();
                lines.wait(LIMIT, |v| v["event"] == "command_started" && v["term"].as_u64() > term);
                lines.collect(Duration::from_millis(300));
                procs[p].signal(18);
            }
            "kill" => {
                drop(procs.remove(p)); // SIGKILL of the runtime's pid
                procs.push(start(&leader, &lines));
            }
            "stop" => {
                procs[p].signal(15);
                assert!(procs[p].wait_exit(LIMIT).success());
                procs.remove(p);
                procs.push(start(&leader, &lines));
            }
            other => panic!("{other}"),
        }
        let term = last["term"].as_u64();
        last = lines.wait(LIMIT, |v| v["event"] == "command_started" && v["term"].as_u64() > term);
    }
    lines.collect(Duration::from_millis(200));
    for p in &procs {
        p.signal(15);
    }
    for p in &mut procs {
        p.wait_exit(LIMIT);
    }
    let lives = lives(&out);
    (max_overlap(&lives), lives)
}

#[test]
fn across_kills_pauses_and_transfers_no_two_commands_overlap() {
    let rounds = ["transfer", "pause", "kill", "transfer", "stop", "pause", "kill", "stop"];
    let ((overlap, pair), lives) = chaos(&rounds, &[]);
    assert!(lives.len() > rounds.len(), "{lives:#?}");
    eprintln!("{} commands; largest overlap {overlap} ms ({pair})", lives.len());
    assert!(overlap <= SLACK_MS as i64, "two commands ran together for {overlap} ms: {pair}");
}

#[test]
fn the_overlap_check_catches_a_supervisor_without_the_deadline_kill() {
    // The injected bug: the supervisor does not kill at the lease deadline, so the command of a
    // paused runtime runs on until the runtime resumes, beside the new leader's.
    let ((overlap, pair), _) = chaos(&["pause"], &[("TENURE_TEST_NO_DEADLINE_KILL", "1")]);
    eprintln!("with the deadline kill disabled: overlap {overlap} ms ({pair})");
    assert!(overlap > SLACK_MS as i64, "the injected bug went unnoticed: overlap {overlap} ms ({pair})");
}

/// The election timeout of the preemption tests: a lease span of 294 ms, so that a command that
/// outlives a step-down until its lease-deadline SIGKILL overlaps the next leader's by far more
/// than the slack when the transfer does not wait for it.
const ELECTION_MIN_MS: &str = "300";
const PREEMPTION_LEASE_SPAN_MS: u64 = 294;

/// A leader whose command ignores SIGTERM (the ticker with `ignore-term`: only the lease-deadline
/// SIGKILL ends it), or exits at once on it (`sleep`, when `exit_on_term`), is preempted by a
/// member of higher priority that joins later. Returns the largest overlap of two commands' lives
/// (ms: from the tickers' own timestamps, or for `sleep` from the runtimes' `command_stopped` and
/// `command_started` lines) and how long after the stand-in's step-down the preferred member led.
fn preemption(env: &[(&str, &str)], exit_on_term: bool) -> ((i64, String), u64) {
    let dir = tempfile::tempdir().unwrap();
    let script = ticker(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let ids = ids(3);
    let preferred = ids[2].clone();
    let mut lines = Lines::default();
    let (s, o) = (script.to_str().unwrap().to_string(), out.to_str().unwrap().to_string());
    let command: Vec<&str> = if exit_on_term { vec!["sleep", "1000"] } else { vec!["sh", &s, &o, "ignore-term"] };
    let start = |id: &String, lines: &Lines| {
        let priority = if *id == preferred { "5" } else { "0" };
        let extra = [
            "--priority",
            priority,
            "--preempt-after",
            "300",
            "--election-timeout-min",
            ELECTION_MIN_MS,
            "--election-timeout-max",
            "600",
            "--kill-grace",
            "1000",
            "--",
        ];
        let mut cmd = run_cmd(id, &ids, &extra);
        cmd.args(&command);
        for (k, v) in env {
            cmd.env(k, v);
        }
        start_cmd(id, cmd, lines)
    };
    let mut procs: Vec<Proc> = ids[..2].iter().map(|id| start(id, &lines)).collect();
    let first = lines.wait(LIMIT, is("command_started"));
    let standin = first["id"].as_str().unwrap().to_string();
    let term = first["term"].as_u64();
    lines.collect(Duration::from_millis(200));
    procs.push(start(&preferred, &lines));
    let p = preferred.clone();
    let led = lines.wait(LIMIT, move |v| v["event"] == "leader" && v["id"] == p.as_str() && v["term"].as_u64() > term);
    let stepped =
        lines.wait(LIMIT, |v| v["event"] == "follower" && v["id"] == standin.as_str() && v["term"].as_u64() == term);
    let stopped = lines.wait(LIMIT, |v| v["event"] == "command_stopped" && v["id"] == standin.as_str());
    let p = preferred.clone();
    let started = lines.wait(LIMIT, move |v| v["event"] == "command_started" && v["id"] == p.as_str());
    lines.collect(Duration::from_millis(200));
    lines.assert_one_leader_per_term();
    for p in &procs {
        p.signal(15);
    }
    for p in &mut procs {
        p.wait_exit(LIMIT);
    }
    let overlap = if exit_on_term {
        (ms(&stopped) as i64 - ms(&started) as i64, format!("{stopped} and {started}"))
    } else {
        max_overlap(&lives(&out))
    };
    (overlap, ms(&led).saturating_sub(ms(&stepped)))
}

#[test]
fn a_preemption_hands_over_only_once_the_command_is_gone() {
    let ((overlap, pair), gap) = preemption(&[], false);
    eprintln!("preempted: the preferred member led {gap} ms after the stand-in stepped down; largest overlap {overlap} ms ({pair})");
    // The command ignores SIGTERM: it ends at the lease deadline's SIGKILL, when the promise the
    // voters made lapses too, so the held transfer races an ordinary election there (which
    // another member may win, and later preempt to the preferred one in turn): no bound on the
    // gap here, only that the commands never overlap.
    assert!(overlap <= SLACK_MS as i64, "two commands ran together for {overlap} ms: {pair}");
}

#[test]
fn a_preemption_of_a_command_that_exits_on_sigterm_hands_over_long_before_the_lease_lapses() {
    let ((overlap, pair), gap) = preemption(&[], true);
    eprintln!(
        "preempted: the preferred member led {gap} ms after the stand-in stepped down; overlap {overlap} ms ({pair})"
    );
    assert!(overlap <= 0, "the next command started {overlap} ms before this one was reported stopped: {pair}");
    // Typically a few ms to a few tens on a loaded machine (the stop order, the command's exit and
    // its report each cross a thread or a process); the lease path would take the whole span.
    assert!(gap < PREEMPTION_LEASE_SPAN_MS / 2, "leaderless for {gap} ms: the transfer waited for the lease");
}

#[test]
fn the_overlap_check_catches_a_preemption_that_does_not_wait_for_the_command() {
    let ((overlap, pair), gap) = preemption(&[("TENURE_TEST_NO_TRANSFER_HOLD", "1")], false);
    eprintln!("with the hold disabled: led {gap} ms after the step-down, overlap {overlap} ms ({pair})");
    assert!(overlap > SLACK_MS as i64, "the injected bug went unnoticed: overlap {overlap} ms ({pair})");
}

#[test]
fn a_bad_command_line_is_refused() {
    let out = Command::new(BIN)
        .args(["run", "--id", "127.0.0.1:1", "--peer", "127.0.0.1:2", "--cluster", "c", "--"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-- needs a command"));
    let out = Command::new(BIN)
        .args(["run", "--id", "127.0.0.1:1", "--peer", "127.0.0.1:2", "--cluster", "c", "--kill-grace", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--kill-grace"));
}
