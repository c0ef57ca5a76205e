//! The proclaimed value through the `tenure` binary as real processes: `--value`, `proclaim` on
//! stdin, the `leader`/`follower` lines and `/leader` on a follower.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(10);

fn url(id: &str) -> String {
    format!("http://{id}/svc")
}

/// `GET http://addr/leader` as JSON.
fn leader_json(addr: &str) -> Value {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let mut res = agent.get(&format!("http://{addr}/leader")).call().expect("GET /leader");
    serde_json::from_str(&res.body_mut().read_to_string().unwrap()).unwrap()
}

#[test]
fn every_member_reports_the_leaders_value_and_a_proclaimed_change() {
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let mut lines = Lines::default();
    let start = |id: &String, lines: &Lines| {
        let value = url(id);
        start_cmd(id, run_cmd(id, &ids, &["--value", &value, "--http", "127.0.0.1:0"]), lines)
    };
    let mut procs: Vec<Proc> = ids.iter().map(|id| start(id, &lines)).collect();
    let first = lines.wait(LIMIT, is("leader"));
    let leader = first["id"].as_str().unwrap().to_string();
    assert_eq!(first["value"], url(&leader).as_str(), "{first}");
    let followers: Vec<String> = ids.iter().filter(|i| **i != leader).cloned().collect();
    for f in &followers {
        let want = url(&leader);
        lines.wait(LIMIT, |v| v["event"] == "follower" && v["id"] == f.as_str() && v["value"] == want.as_str());
    }
    // /leader on a follower.
    let f = &followers[0];
    let addr = lines.wait(LIMIT, |v| v["event"] == "http_listening" && v["id"] == f.as_str())["addr"]
        .as_str()
        .unwrap()
        .to_string();
    let l = leader_json(&addr);
    assert_eq!(
        (l["leader"].as_str(), l["leader_value"].as_str()),
        (Some(leader.as_str()), Some(url(&leader).as_str()))
    );

    // `proclaim TEXT` on the leader reaches every follower; on a follower it is refused.
    let p = procs.iter().position(|p| p.id == leader).unwrap();
    procs[p].send_line("proclaim http://moved:9090/ new home");
    for f in &followers {
        lines.wait(LIMIT, |v| {
            v["event"] == "follower" && v["id"] == f.as_str() && v["value"] == "http://moved:9090/ new home"
        });
    }
    assert_eq!(leader_json(&addr)["leader_value"], "http://moved:9090/ new home");
    let fp = procs.iter().position(|p| p.id == *f).unwrap();
    procs[fp].send_line("proclaim nope");
    let refused = lines.wait(LIMIT, |v| v["event"] == "warning" && v["code"] == "not_leader" && v["id"] == f.as_str());
    assert_eq!(refused["id"], f.as_str());
    procs[fp].send_line("inspect");
    let inspect = lines.wait(LIMIT, |v| v["event"] == "inspect" && v["id"] == f.as_str());
    assert_eq!(inspect["state"]["leader_value"], "http://moved:9090/ new home");

    // SIGKILL the leader: the next one proclaims its own configured value.
    procs.remove(p);
    let next = lines.wait(LIMIT, |v| v["event"] == "leader" && v["id"] != leader.as_str());
    let next_id = next["id"].as_str().unwrap().to_string();
    assert_eq!(next["value"], url(&next_id).as_str());
    let other = followers.iter().find(|f| **f != next_id).unwrap();
    let want = url(&next_id);
    lines.wait(LIMIT, |v| v["event"] == "follower" && v["id"] == other.as_str() && v["value"] == want.as_str());
    lines.assert_one_leader_per_term();
}

#[test]
fn a_value_longer_than_256_bytes_is_a_usage_error_naming_its_length() {
    let ids: Vec<String> = free_ports(3).into_iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let long = "v".repeat(257);
    let out = run_cmd(&ids[0], &ids, &["--value", &long]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("value is 257 bytes"), "{err}");
}
