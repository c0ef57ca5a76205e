//! Priorities through the `tenure` binary as real processes: the preferred member (`--priority`)
//! leads, and when it returns after a crash leadership moves back to it by a preemption (a
//! transfer) `--preempt-after` after it answers the leader; a witness (`--never-lead`) never leads.

mod common;

use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(10);
/// The default `--preempt-after`: twice the default `--election-timeout-max` (300 ms).
const PREEMPT_AFTER_MS: u64 = 600;

#[test]
fn leadership_moves_back_to_the_preferred_member_when_it_returns() {
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let preferred = ids[2].clone();
    // The third member is a witness: it never leads, so the one that leads while the preferred
    // member is away is the first.
    let start = |id: &String, lines: &Lines| {
        let extra: &[&str] = match id {
            i if *i == ids[2] => &["--priority", "5"],
            i if *i == ids[1] => &["--never-lead"],
            _ => &[],
        };
        start_cmd(id, run_cmd(id, &ids, extra), lines)
    };
    let mut lines = Lines::default();
    let mut procs: Vec<Proc> = ids.iter().map(|id| start(id, &lines)).collect();
    let p = preferred.clone();
    let first_led = lines.wait(LIMIT, move |v| v["event"] == "leader" && v["id"] == p.as_str());
    // The first member may win the very first election, before the ranks have travelled, and
    // then preempt to the preferred one: it then holds back from preempting to that member again
    // for the backoff (PREEMPT_BACKOFF_FACTOR x preempt_after from that handover), a member that
    // lost leadership soon after a preemption being what the backoff is for.
    let s = ids[0].clone();
    let preempted_at = lines
        .seen
        .iter()
        .any(|v| v["event"] == "leader" && v["id"] == s.as_str())
        .then(|| first_led["ts_ms"].as_u64().unwrap());

    // The preferred member dies: the first member leads (the witness never does).
    let at = procs.iter().position(|x| x.id == preferred).unwrap();
    procs.remove(at);
    let standin = lines.wait_new(LIMIT, is("leader"));
    assert_eq!(standin["id"], ids[0].as_str(), "{standin}");
    let standin_term = standin["term"].as_u64().unwrap();
    std::thread::sleep(Duration::from_millis(300));

    // It returns.
    let back_at = wall_ms();
    procs.push(start(&preferred, &lines));
    let p = preferred.clone();
    let answering =
        lines.wait_new(LIMIT, move |v| v["event"] == "follower" && v["id"] == p.as_str() && !v["leader"].is_null());
    let p = preferred.clone();
    let led = lines.wait(LIMIT, move |v| {
        v["event"] == "leader" && v["id"] == p.as_str() && v["term"].as_u64().is_some_and(|t| t > standin_term)
    });
    // The stand-in stopped leading (its follower line) when it handed over.
    let s = ids[0].clone();
    let stepped = lines.wait(LIMIT, move |v| {
        v["event"] == "follower" && v["id"] == s.as_str() && v["term"].as_u64() == Some(standin_term)
    });
    let led_at = led["ts_ms"].as_u64().unwrap();
    let since_start = led_at - back_at;
    let since_answering = led_at - answering["ts_ms"].as_u64().unwrap();
    let gap = led_at.saturating_sub(stepped["ts_ms"].as_u64().unwrap());
    println!(
        "preferred member back in the lead {since_start} ms after its process started, {since_answering} ms after it \
         first followed the stand-in (preempt-after {PREEMPT_AFTER_MS} ms); leaderless for {gap} ms"
    );
    // The preemption is due preempt_after into the preferred member's answers, or when the
    // backoff of an earlier preemption to it ends, whichever is later; 50 ms for a loaded
    // machine's scheduling on top.
    let due = match preempted_at {
        Some(t) => (answering["ts_ms"].as_u64().unwrap() + PREEMPT_AFTER_MS)
            .max(t + PREEMPT_AFTER_MS * tenure::PREEMPT_BACKOFF_FACTOR),
        None => answering["ts_ms"].as_u64().unwrap() + PREEMPT_AFTER_MS,
    };
    println!("an earlier preemption to it: {}", preempted_at.is_some());
    assert!(led_at <= due + 50, "led {} ms after the preemption was due", led_at.saturating_sub(due));
    assert!(led_at + 50 >= due, "led {} ms before the preemption was due", due - led_at);
    assert!(gap <= 50, "leaderless for {gap} ms");
    // And it stays the leader.
    lines.collect(Duration::from_millis(1500));
    assert!(lines.seen.iter().rfind(|v| v["event"] == "leader").is_some_and(|v| v["id"] == preferred.as_str()));
    assert!(lines.seen.iter().all(|v| !(v["event"] == "leader" && v["id"] == ids[1].as_str())), "the witness led");
    lines.assert_one_leader_per_term();
    // inspect shows the ranks.
    let at = procs.iter().position(|x| x.id == preferred).unwrap();
    procs[at].send_line("inspect");
    let p = preferred.clone();
    let inspect = lines.wait_new(LIMIT, move |v| v["event"] == "inspect" && v["id"] == p.as_str());
    assert_eq!(inspect["state"]["priority"], 5, "{inspect}");
    assert_eq!(inspect["state"]["peer_priorities"][&ids[1]], serde_json::json!({"priority": 0, "never_lead": true}));
}

#[test]
fn a_bad_priority_is_a_usage_error_naming_the_value() {
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    for bad in ["-1", "high", "4294967296"] {
        let out = run_cmd(&ids[0], &ids, &["--priority", bad]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--priority") && err.contains(bad), "{err}");
    }
    let out = run_cmd(&ids[0], &ids, &["--never-lead=yes"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
