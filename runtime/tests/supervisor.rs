//! Every process and process group around a leader-only command, killed or stopped in turn: the
//! command and everything it started (including a daemon that left its process group with
//! `setsid`) never outlive the lease of the leadership they ran under, and a runtime that lost its
//! supervisor stops leading.
//!
//! The processes: the runtime (in a process group of its own here, as under a shell or a process
//! manager), the supervisor (its own session), the guard (leader of the command's process group)
//! and the command (`sh`), which starts a second ticker in a new session.

#![cfg(target_os = "linux")]

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(10);
/// `election_timeout_min` − the drift margin at the defaults (docs/protocol.md).
const LEASE_SPAN_MS: u64 = 146;
/// Scheduling slack on a loaded two-core machine; the faults below used to leave commands running
/// for seconds or forever.
const SLACK_MS: u64 = 60;

/// A ticker that appends `t NS` to `DIR/<leader>-<term>-<pid>` every 5 ms, and starts a second
/// ticker in a session of its own (`DIR/...-<pid>.daemon`), which no process group signal reaches.
fn ticker(dir: &Path) -> String {
    let script = dir.join("ticker.sh");
    std::fs::write(
        &script,
        r#"#!/bin/sh
f="$1/$TENURE_LEADER_ID-$TENURE_TERM-$$"
setsid sh -c 'while :; do echo "t $(date +%s%N)" >> "$0"; sleep 0.005; done' "$f.daemon" &
trap 'exit 0' TERM
while :; do echo "t $(date +%s%N)" >> "$f"; sleep 0.005; done
"#,
    )
    .unwrap();
    script.to_str().unwrap().to_string()
}

/// The newest tick in the files of `dir` whose name starts with `prefix`, in ms since the epoch.
fn last_tick_ms(dir: &Path, prefix: &str) -> u64 {
    let mut last = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.file_name().unwrap().to_string_lossy().starts_with(prefix) {
            continue;
        }
        for line in std::fs::read_to_string(&path).unwrap_or_default().lines() {
            if let Some(ns) = line.strip_prefix("t ").and_then(|n| n.parse::<u64>().ok()) {
                last = last.max(ns / 1_000_000);
            }
        }
    }
    last
}

fn kill(sig: &str, target: String) {
    let status = std::process::Command::new("kill").args([sig, "--", &target]).status().unwrap();
    assert!(status.success(), "kill {sig} -- {target}");
}

/// Resumes and ends what a case leaves behind, whether it passed or not: a stopped supervisor
/// (its own session) and a daemon would otherwise outlive the test and hold its output open.
struct Cleanup {
    groups: Vec<u64>,
    dir: std::path::PathBuf,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for group in &self.groups {
            let _ = std::process::Command::new("kill").args(["-CONT", "--", &format!("-{group}")]).status();
        }
        // Whatever still writes into the test's directory (a daemon that escaped a failed case).
        let _ = std::process::Command::new("pkill").args(["-9", "-f", &self.dir.to_string_lossy()]).status();
    }
}

/// What a case does to the leader's processes: (the runtime, whose pid is its group's id; the
/// supervisor's pid; the guard's pid, which is the command's group's id).
type Fault = fn(&mut Proc, u64, u64);

/// Runs 3 nodes whose command is the ticker, applies `fault` to the leader's processes, and
/// returns (ms from the fault to the last tick of any process of that leader's command tree, the
/// lines, the dir). Checks that nothing of the tree ticks any more afterwards.
fn case(name: &str, fault: Fault, bound_ms: u64) -> (u64, Lines) {
    let dir = tempfile::tempdir().unwrap();
    let script = ticker(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let mut lines = Lines::default();
    let o = out.to_str().unwrap();
    let mut procs: Vec<Proc> = ids
        .iter()
        .map(|id| {
            // `--max-failures 1`: a command tree that a fault ended hands leadership over at once
            // instead of starting again in the same leadership, so "nothing of it runs any more"
            // is about this leadership's tree alone.
            let args = ["--kill-grace", "300", "--max-failures", "1", "--", "sh", &script, o];
            let mut cmd = run_cmd(id, &ids, &args);
            cmd.process_group(0);
            start_cmd(id, cmd, &lines)
        })
        .collect();
    let started = lines.wait(LIMIT, is("command_started"));
    let leader = started["id"].as_str().unwrap().to_string();
    // The files of this leadership's command and of the daemon it started (other leaders' commands
    // write to the same directory under their own names).
    let prefix = format!("{leader}-{}-", started["term"]);
    let guard = started["pgid"].as_u64().unwrap();
    assert_eq!(parent(started["pid"].as_u64().unwrap()), guard, "{name}: the command is the guard's child");
    let supervisor = parent(guard);
    let p = procs.iter().position(|p| p.id == leader).unwrap();
    let runtime = procs[p].child.id() as u64;
    assert_eq!(parent(supervisor), runtime, "{name}: the supervisor is the runtime's child");
    let _cleanup =
        Cleanup { groups: procs.iter().map(|p| p.child.id() as u64).chain([supervisor]).collect(), dir: out.clone() };
    lines.collect(Duration::from_millis(200)); // both tickers run, leases renewed
    let at = wall_ms();
    fault(&mut procs[p], supervisor, guard);
    lines.collect(Duration::from_millis(bound_ms + 400));
    let last = last_tick_ms(&out, &prefix);
    // Nothing of it runs any more: no new tick in another 300 ms.
    lines.collect(Duration::from_millis(300));
    assert_eq!(
        last_tick_ms(&out, &prefix),
        last,
        "{name}: the command's tree still runs {} ms after the fault",
        wall_ms() - at
    );
    let after = last.saturating_sub(at);
    eprintln!("{name}: last tick {after} ms after the fault (bound {bound_ms} ms)");
    assert!(after <= bound_ms, "{name}: the command's tree ticked {after} ms after the fault (bound {bound_ms})");
    procs.iter_mut().for_each(|p| {
        let _ = p.child.kill();
    });
    (after, lines)
}

#[test]
fn sigkill_of_the_runtimes_process_group_ends_the_command_tree() {
    // Before the supervisor had a session of its own, it died with the runtime's group and the
    // command ran on forever.
    case("kill -9 -- -runtime_pgid", |rt, _, _| kill("-9", format!("-{}", rt.child.id())), LEASE_SPAN_MS + SLACK_MS);
}

#[test]
fn sigstop_of_the_runtimes_process_group_ends_the_command_tree_by_the_lease() {
    // Ctrl-Z: the runtime and (before) its supervisor paused together, the command ticking on.
    case(
        "kill -STOP -- -runtime_pgid",
        |rt, _, _| kill("-STOP", format!("-{}", rt.child.id())),
        LEASE_SPAN_MS + SLACK_MS,
    );
}

#[test]
fn sigkill_of_the_runtime_and_its_supervisor_together_ends_the_command_tree() {
    // Nobody is left to order anything: the guard's death signal ends the tree.
    case(
        "kill -9 runtime supervisor",
        |rt, sup, _| {
            let status = std::process::Command::new("kill")
                .args(["-9", &rt.child.id().to_string(), &sup.to_string()])
                .status()
                .unwrap();
            assert!(status.success());
        },
        SLACK_MS,
    );
}

#[test]
fn sigkill_of_the_supervisor_ends_the_command_tree_and_the_runtime_hands_over() {
    let (_, mut lines) = case("kill -9 supervisor", |_, sup, _| kill("-9", sup.to_string()), SLACK_MS);
    lines.wait(LIMIT, |v| v["event"] == "warning" && v["code"] == "command_failed");
    // Another node leads and runs its command: the runtime whose supervisor died stepped down.
    let first = lines.seen.iter().find(|v| v["event"] == "command_started").unwrap()["term"].as_u64();
    lines.wait(LIMIT, |v| v["event"] == "command_started" && v["term"].as_u64() > first);
    lines.assert_one_leader_per_term();
}

#[test]
fn sigkill_of_the_guard_ends_the_command_tree() {
    case("kill -9 guard", |_, _, guard| kill("-9", guard.to_string()), SLACK_MS);
}

#[test]
fn sigkill_of_the_commands_process_group_ends_the_command_tree() {
    case("kill -9 -- -command_pgid", |_, _, guard| kill("-9", format!("-{guard}")), SLACK_MS);
}

#[test]
fn a_stopped_supervisor_cannot_keep_the_command_past_the_lease_once_leadership_ends() {
    // The supervisor is paused (it holds nothing), then the runtime hands leadership over: the
    // runtime itself ends the command's tree at the last lease deadline it sent.
    case(
        "kill -STOP supervisor, then transfer",
        |rt, sup, _| {
            kill("-STOP", sup.to_string());
            rt.send_line("transfer");
        },
        // The lease span after the last renewal, the runtime's 20 ms backstop delay and 10 ms for
        // the guard, and the slack.
        LEASE_SPAN_MS + 30 + SLACK_MS,
    );
}
