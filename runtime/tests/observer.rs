//! Observers through the `tenure` binary as real processes: three members that list an observer
//! (`--observer-peer`) and the observer (`--observer`, the members as `--peer`), which reports the
//! leader and its value on its `follower` lines, `/leader`, inspect and metrics, and follows a
//! failover.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(10);

fn url(id: &str) -> String {
    format!("http://{id}/svc")
}

fn get(addr: &str, path: &str) -> String {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let mut res = agent.get(&format!("http://{addr}{path}")).call().expect("GET");
    res.body_mut().read_to_string().unwrap()
}

fn leader_json(addr: &str) -> Value {
    serde_json::from_str(&get(addr, "/leader")).unwrap()
}

#[test]
fn an_observer_reports_the_leader_and_its_value_and_follows_a_failover() {
    let ports = free_ports(4);
    let ids: Vec<String> = ports[..3].iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let obs = format!("127.0.0.1:{}", ports[3]);
    let mut lines = Lines::default();
    let mut procs: Vec<Proc> = ids
        .iter()
        .map(|id| {
            let value = url(id);
            start_cmd(id, run_cmd(id, &ids, &["--value", &value, "--observer-peer", &obs]), &lines)
        })
        .collect();
    let mut observer = start_cmd(&obs, run_cmd(&obs, &ids, &["--observer", "--http", "127.0.0.1:0"]), &lines);

    let first = lines.wait(LIMIT, is("leader"));
    let leader = first["id"].as_str().unwrap().to_string();
    let want = url(&leader);
    let seen =
        lines.wait(LIMIT, |v| v["event"] == "follower" && v["id"] == obs.as_str() && v["value"] == want.as_str());
    assert_eq!(seen["leader"], leader.as_str(), "{seen}");

    // /leader, inspect and metrics on the observer.
    let addr = lines.wait(LIMIT, |v| v["event"] == "http_listening" && v["id"] == obs.as_str())["addr"]
        .as_str()
        .unwrap()
        .to_string();
    let l = leader_json(&addr);
    assert_eq!(
        (l["leader"].as_str(), l["leader_value"].as_str(), l["role"].as_str()),
        (Some(leader.as_str()), Some(want.as_str()), Some("observer")),
        "{l}"
    );
    let metrics = get(&addr, "/metrics");
    assert!(metrics.lines().any(|m| m.starts_with("tenure_role{role=\"observer\"} 1")), "{metrics}");
    observer.send_line("inspect");
    let inspect = lines.wait(LIMIT, |v| v["event"] == "inspect" && v["id"] == obs.as_str());
    assert_eq!(
        (
            inspect["state"]["state"].as_str(),
            inspect["state"]["leader"].as_str(),
            inspect["state"]["view_size"].as_u64()
        ),
        (Some("observer"), Some(leader.as_str()), Some(3)),
        "{inspect}"
    );
    // The members count three, not four.
    let p = procs.iter().position(|p| p.id == leader).unwrap();
    procs[p].send_line("inspect");
    let li = lines.wait(LIMIT, |v| v["event"] == "inspect" && v["id"] == leader.as_str());
    assert_eq!((li["state"]["view_size"].as_u64(), li["state"]["quorum"].as_u64()), (Some(3), Some(2)), "{li}");

    // A proclaimed value reaches the observer.
    procs[p].send_line("proclaim http://moved:9090/");
    lines.wait(LIMIT, |v| v["event"] == "follower" && v["id"] == obs.as_str() && v["value"] == "http://moved:9090/");

    // SIGKILL the leader: the observer reports the next one with its value.
    procs.remove(p);
    let next = lines.wait(LIMIT, |v| v["event"] == "leader" && v["id"] != leader.as_str());
    let next_id = next["id"].as_str().unwrap().to_string();
    let want = url(&next_id);
    lines.wait(LIMIT, |v| {
        v["event"] == "follower"
            && v["id"] == obs.as_str()
            && v["leader"] == next_id.as_str()
            && v["value"] == want.as_str()
    });
    let l = leader_json(&addr);
    assert_eq!((l["leader"].as_str(), l["leader_value"].as_str()), (Some(next_id.as_str()), Some(want.as_str())));
    lines.assert_one_leader_per_term();
    assert!(!lines.seen.iter().any(|v| v["event"] == "leader" && v["id"] == obs.as_str()));
}

#[test]
fn observer_flags_that_contradict_are_usage_errors() {
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let out = run_cmd(&ids[0], &ids, &["--observer", "--", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--observer never leads"));
    let out = run_cmd(&ids[0], &ids, &["--observer-peer", "not an address"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an address"));
}
