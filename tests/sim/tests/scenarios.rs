//! Replays every `tests/scenarios/*.json` file against the core (as every binding does), checks
//! that the recorder still produces the committed bytes, and that together the files cover every
//! input kind, output type, event, message kind and error code.

use std::collections::BTreeSet;
use std::path::PathBuf;

use tenure::wire::{decode, Auth};
use tenure_sim::scenario::{replay, to_file_text, EventJson, InputJson, OutputJson, Scenario};
use tenure_sim::unhex;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

fn files() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir())
        .expect("tests/scenarios exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().to_string(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    v.sort();
    v
}

#[test]
fn every_scenario_file_replays_byte_for_byte() {
    let files = files();
    assert!(files.len() >= 20, "at least 20 scenario files, found {}", files.len());
    for (name, text) in &files {
        let s: Scenario = serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(format!("{}.json", s.name), *name, "file name matches the scenario name");
        replay(&s).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn recorder_reproduces_the_committed_files() {
    let committed = files();
    let recorded = tenure_sim::record::all();
    let names: Vec<String> = recorded.iter().map(|s| format!("{}.json", s.name)).collect();
    let have: Vec<String> = committed.iter().map(|f| f.0.clone()).collect();
    assert_eq!(names, have, "the set of files differs: run `make scenarios`");
    for (s, (name, text)) in recorded.iter().zip(&committed) {
        assert!(
            to_file_text(s) == *text,
            "{name} differs from what the simulator records now: run `make scenarios` if the change is deliberate"
        );
    }
}

#[test]
fn scenarios_cover_every_input_output_event_message_and_code() {
    let mut seen = BTreeSet::new();
    for (_, text) in files() {
        let s: Scenario = serde_json::from_str(&text).unwrap();
        let key = s.config.key_hex.as_deref().and_then(unhex);
        if s.restored.is_some() {
            seen.insert("restored".to_string());
        }
        if key.is_some() {
            seen.insert("key".to_string());
        }
        seen.insert(format!("role:{}", s.final_state.role));
        if s.final_state.value.is_some() {
            seen.insert("value".to_string());
        }
        for st in &s.steps {
            seen.insert(format!("result:{}", st.result));
            let kind = serde_json::to_value(&st.input).unwrap()["kind"].as_str().unwrap().to_string();
            seen.insert(format!("input:{kind}"));
            if let InputJson::PeerDown { reason, .. } = &st.input {
                seen.insert(format!("reason:{reason}"));
            }
            if let InputJson::Message { hex, .. } = &st.input {
                let auth = key.as_deref().map(|key| Auth { key, receiver: &s.config.id });
                if let Ok(env) = decode(&unhex(hex).unwrap(), auth) {
                    seen.insert(format!("recv:{}", env.message.kind()));
                }
            }
            for o in &st.outputs {
                match o {
                    OutputJson::Send { hex, to } => {
                        let auth = key.as_deref().map(|key| Auth { key, receiver: to });
                        let env = decode(&unhex(hex).unwrap(), auth).expect("sends decode");
                        seen.insert(format!("send:{}", env.message.kind()));
                    }
                    OutputJson::Persist { .. } => {
                        seen.insert("persist".to_string());
                    }
                    OutputJson::Event(e) => {
                        let name = serde_json::to_value(e).unwrap()["event"].as_str().unwrap().to_string();
                        seen.insert(format!("event:{name}"));
                        if let EventJson::BecameFollower { leader: None, .. } = e {
                            seen.insert("event:became_follower:none".to_string());
                        }
                    }
                }
            }
        }
    }
    let kinds = [
        "pre_vote",
        "pre_vote_reply",
        "vote",
        "vote_reply",
        "heartbeat",
        "heartbeat_ack",
        "timeout_now",
        "app",
        "hello",
        "value",
        "value_ack",
        "priority",
        "observe",
    ];
    let mut want: Vec<String> =
        vec!["restored".into(), "key".into(), "persist".into(), "event:became_follower:none".into()];
    for k in kinds {
        want.push(format!("send:{k}"));
        want.push(format!("recv:{k}"));
    }
    // A node never sends a death notice itself: its watchdog does, from the bytes the node armed
    // it with (`Node::death_notices`).
    want.push("recv:death_notice".into());
    want.push("role:observer".into());
    want.push("value".into());
    for i in [
        "timeout",
        "message",
        "join",
        "leave",
        "peer_down",
        "confirm",
        "leader_failed",
        "transfer",
        "broadcast",
        "proclaim",
    ] {
        want.push(format!("input:{i}"));
    }
    for r in ["terminated", "no_connection"] {
        want.push(format!("reason:{r}"));
    }
    for e in ["became_leader", "became_follower", "peer_joined", "peer_left", "confirm_leader", "message"] {
        want.push(format!("event:{e}"));
    }
    for c in [
        "ok",
        "malformed",
        "oversized",
        "unknown_version",
        "wrong_cluster",
        "bad_mac",
        "sender_mismatch",
        "from_self",
        "removed_peer",
        "invalid_peer",
        "self_peer",
        "unknown_peer",
        "not_leader",
        "payload_too_large",
        "no_pending_confirm",
        "not_leader_in_term",
        "value_too_long",
    ] {
        want.push(format!("result:{c}"));
    }
    let missing: Vec<&String> = want.iter().filter(|w| !seen.contains(*w)).collect();
    assert!(missing.is_empty(), "not covered by any scenario: {missing:?}");
}
