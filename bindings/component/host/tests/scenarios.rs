//! Replays the shared `tests/scenarios/*.json` timelines through the component: every callback,
//! in order, must match the recorded outputs byte for byte, as must the drop reasons and error
//! codes, the next deadline after each step, and the final state.
//!
//! `confirm-leader` is answered `defer` so that the scenarios' own `confirm` steps drive the
//! leadership gate, and `became-leader` succeeds so that `leader_failed` steps drive rollbacks (through `leader_handler_failed`).

use std::path::PathBuf;

use serde_json::{json, Value};
use tenure_component_host::{
    drop_reason_name, node_error_name, peer_down_reason, role_name, ComponentNode, ConfirmAnswer, DurableState, Loader,
    NodeConfig, NodeError, Record, Recorder,
};

fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/scenarios")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex {s:?}");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

fn str_field(v: &Value, k: &str) -> String {
    v[k].as_str().unwrap_or_else(|| panic!("{k} missing in {v}")).to_string()
}

fn u64_field(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} missing in {v}"))
}

fn config(c: &Value, seed: u64, restored: &Value) -> NodeConfig {
    NodeConfig {
        id: str_field(c, "id"),
        cluster: str_field(c, "cluster"),
        bootstrap: c["bootstrap"].as_array().expect("bootstrap").iter().map(|p| p.as_str().unwrap().into()).collect(),
        min_cluster_size: c["min_cluster_size"].as_u64().map(|n| n as u32),
        election_timeout_min: c["election_timeout_min"].as_u64(),
        election_timeout_max: c["election_timeout_max"].as_u64(),
        heartbeat_interval: c["heartbeat_interval"].as_u64(),
        lease_duration: c["lease_duration"].as_u64(),
        ghost_ttl: c["ghost_ttl"].as_u64(),
        pre_vote: c["pre_vote"].as_bool(),
        confirm_leader: c["confirm_leader"].as_bool(),
        durable: c["durable"].as_bool().expect("durable"),
        key: c["key_hex"].as_str().map(unhex),
        seed,
        restored: if restored.is_null() {
            None
        } else {
            Some(DurableState {
                term: u64_field(restored, "term"),
                voted_for: restored["voted_for"].as_str().map(str::to_string),
            })
        },
        admit_unknown_peers: c["admit_unknown_peers"].as_bool(),
        max_peers: c["max_peers"].as_u64().map(|n| n as u32),
        max_clock_drift_ppm: c["max_clock_drift_ppm"].as_u64().map(|n| n as u32),
        incarnation: c["incarnation"].as_u64(),
        value: c["value"].as_str().map(str::to_string),
        priority: c["priority"].as_u64().map(|n| n as u32),
        never_lead: c["never_lead"].as_bool(),
        preempt_after: c["preempt_after"].as_u64(),
        observer: c["observer"].as_bool(),
        observer_peers: c["observer_peers"]
            .as_array()
            .map(|a| a.iter().map(|p| p.as_str().expect("observer id").to_string()).collect())
            .unwrap_or_default(),
    }
}

fn output(r: &Record) -> Option<Value> {
    Some(match r {
        Record::Send { to, bytes } => json!({"type": "send", "to": to, "hex": hex(bytes)}),
        Record::Persist(s) => json!({"type": "persist", "term": s.term, "voted_for": s.voted_for}),
        Record::BecameLeader(term) => json!({"type": "event", "event": "became_leader", "term": term}),
        Record::BecameFollower(term, leader) => {
            json!({"type": "event", "event": "became_follower", "term": term, "leader": leader})
        }
        Record::ConfirmLeader(term) => json!({"type": "event", "event": "confirm_leader", "term": term}),
        Record::PeerJoined(p) => json!({"type": "event", "event": "peer_joined", "peer": p}),
        Record::PeerLeft(p) => json!({"type": "event", "event": "peer_left", "peer": p}),
        Record::Message(from, payload) => {
            json!({"type": "event", "event": "message", "from": from, "hex": hex(payload)})
        }
        Record::SetWakeup(_) => return None,
    })
}

fn code(r: Result<(), NodeError>) -> String {
    match r {
        Ok(()) => "ok".into(),
        Err(e) => node_error_name(e.code).into(),
    }
}

fn replay(loader: &Loader<Recorder>, path: &PathBuf) {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let s: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let recorder = Recorder { confirm: ConfirmAnswer::Defer, ..Recorder::default() };
    let config = config(&s["config"], u64_field(&s, "seed"), &s["restored"]);
    let mut node = ComponentNode::new(loader, recorder, &config, u64_field(&s, "start_ms"))
        .expect("no trap")
        .unwrap_or_else(|e| panic!("{name}: config refused: {}", e.message));
    node.callbacks_mut().records.clear();
    for (i, step) in s["steps"].as_array().expect("steps").iter().enumerate() {
        let at = u64_field(step, "at");
        let input = &step["input"];
        let kind = str_field(input, "kind");
        let result = match kind.as_str() {
            "timeout" => {
                node.handle_timeout(at).expect("no trap");
                "ok".to_string()
            }
            "message" => match node
                .handle_message(at, &str_field(input, "from"), &unhex(&str_field(input, "hex")))
                .expect("no trap")
            {
                Ok(()) => "ok".into(),
                Err(r) => drop_reason_name(r).into(),
            },
            "join" => code(node.join(at, &str_field(input, "peer")).expect("no trap")),
            "leave" => code(node.leave(at, &str_field(input, "peer")).expect("no trap")),
            "peer_down" => {
                let name_ = str_field(input, "reason");
                let reason = tenure::PeerDownReason::from_name(&name_)
                    .unwrap_or_else(|| panic!("{name}: unknown reason {name_}"));
                code(node.peer_down(at, &str_field(input, "peer"), peer_down_reason(reason)).expect("no trap"))
            }
            "confirm" => code(
                node.confirm_leader(at, u64_field(input, "term"), input["granted"].as_bool().expect("granted"))
                    .expect("no trap"),
            ),
            "leader_failed" => code(node.leader_handler_failed(at, u64_field(input, "term")).expect("no trap")),
            "transfer" => code(node.transfer_leadership(at, &str_field(input, "peer")).expect("no trap")),
            "broadcast" => code(node.broadcast(at, &unhex(&str_field(input, "hex"))).expect("no trap")),
            "proclaim" => code(node.proclaim(at, &str_field(input, "value")).expect("no trap")),
            other => panic!("{name}: unknown input kind {other}"),
        };
        let ctx = format!("{name} step {i} ({kind} at {at})");
        assert_eq!(result, str_field(step, "result"), "{ctx}: result");
        let records = std::mem::take(&mut node.callbacks_mut().records);
        let actual: Vec<Value> = records.iter().filter_map(output).collect();
        let expected = step["outputs"].as_array().expect("outputs");
        assert_eq!(&actual, expected, "{ctx}: outputs");
        let next = node.poll_timeout().expect("no trap");
        assert_eq!(next, step["next_deadline"].as_u64(), "{ctx}: next_deadline");
        // set-wakeup was called exactly when the deadline changed, with the new value.
        if let Some(Record::SetWakeup(d)) = records.iter().rev().find(|r| matches!(r, Record::SetWakeup(_))) {
            assert_eq!(*d, next, "{ctx}: set-wakeup");
        }
    }
    if let Some(f) = s.get("final") {
        assert_eq!(role_name(node.role().unwrap()), str_field(f, "role"), "{name}: final role");
        assert_eq!(node.term().unwrap(), u64_field(f, "term"), "{name}: final term");
        assert_eq!(node.leader().unwrap().as_deref(), f["leader"].as_str(), "{name}: final leader");
        assert_eq!(node.voted_for().unwrap().as_deref(), f["voted_for"].as_str(), "{name}: final voted_for");
        assert_eq!(node.leader_value().unwrap().as_deref(), f["value"].as_str(), "{name}: final value");
    }
}

/// The component, compiled once for every test in this file.
fn loader() -> Loader<Recorder> {
    static LOADER: std::sync::OnceLock<Loader<Recorder>> = std::sync::OnceLock::new();
    LOADER.get_or_init(|| Loader::built().expect("the component compiles")).clone()
}

#[test]
fn shared_scenarios_replay_byte_for_byte() {
    let dir = scenarios_dir();
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    if files.is_empty() {
        eprintln!("SKIPPED: no scenario files in {} yet", dir.display());
        return;
    }
    let loader = loader();
    for f in &files {
        replay(&loader, f);
    }
    eprintln!("replayed {} scenarios", files.len());
}
