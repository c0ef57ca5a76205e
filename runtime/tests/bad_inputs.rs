//! The table of bad inputs (`tests/bad_inputs.json`, shared with the Python and Node.js tests):
//! each refused with its code (library API) or exit status (the native command line), and a
//! message naming the bad value.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::Command;

use serde_json::Value;
use tenure_runtime::{native, spawn, RuntimeConfig, RuntimeEvent};

fn table() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/bad_inputs.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn config(defaults: &Value, case: &Value) -> RuntimeConfig {
    let get = |k: &str| case["config"].get(k).unwrap_or(&defaults[k]).clone();
    let peers: Vec<String> = get("peers").as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect();
    let mut node = tenure::Config::new(get("id").as_str().unwrap(), get("cluster").as_str().unwrap()).bootstrap(peers);
    let mut r = RuntimeConfig::new(node.clone()).log(false);
    for (k, v) in case["config"].as_object().unwrap() {
        match k.as_str() {
            "id" | "peers" | "cluster" => {}
            "election_timeout_min" => node.election_timeout_min = v.as_u64(),
            "election_timeout_max" => node.election_timeout_max = v.as_u64(),
            "heartbeat_interval" => node.heartbeat_interval = v.as_u64().unwrap(),
            "lease_duration" => node.lease_duration = v.as_u64(),
            "ghost_ttl" => node.ghost_ttl = v.as_u64().unwrap(),
            "key_file" => r.key_file = Some(v.as_str().unwrap().into()),
            "bind" => r.bind = Some(v.as_str().unwrap().into()),
            "confirm_timeout_ms" => r.confirm_timeout = v.as_u64().map(std::time::Duration::from_millis),
            other => panic!("the table's config key {other} is not mapped here"),
        }
    }
    r.node = node;
    r
}

fn arg(s: &str) -> OsString {
    match s.split_once("<0xff>") {
        Some((a, b)) => OsString::from_vec([a.as_bytes(), &[0xff], b.as_bytes()].concat()),
        None => s.into(),
    }
}

#[test]
fn every_bad_input_in_the_table_is_refused_by_name() {
    let t = table();
    let defaults = &t["defaults"];
    let cases = t["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        // A value of the wrong type or sign ('host'): the Rust API's types cannot hold it.
        if case["surface"] == "host" {
            continue;
        }
        let message = case["message"].as_str().unwrap();
        match case["surface"].as_str().unwrap() {
            "config" => {
                let e = config(defaults, case).validate().expect_err(name);
                assert_eq!(e.code(), case["code"].as_str().unwrap(), "{name}: {e}");
                assert!(e.to_string().contains(message), "{name}: {e:?} lacks {message:?}");
            }
            "start" => {
                let c = config(defaults, case);
                c.validate().unwrap_or_else(|e| panic!("{name}: refused before start: {e}"));
                let e = spawn(c, native, |_: RuntimeEvent| {}).expect_err(name);
                assert_eq!(e.code(), case["code"].as_str().unwrap(), "{name}: {e}");
                assert_eq!(e.kind(), "address", "{name}");
                assert!(e.to_string().contains(message), "{name}: {e} lacks {message:?}");
            }
            "cli" => {
                let args: Vec<OsString> =
                    case["args"].as_array().unwrap().iter().map(|a| arg(a.as_str().unwrap())).collect();
                let out = Command::new(env!("CARGO_BIN_EXE_tenure")).args(&args).output().unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), case["status"].as_i64().map(|s| s as i32), "{name}: {stderr}");
                assert!(stderr.contains(message), "{name}: {stderr:?} lacks {message:?}");
                assert!(!stderr.contains("panicked"), "{name}: {stderr}");
            }
            other => panic!("unknown surface {other}"),
        }
    }
}

/// A peer listed twice under one spelling counts once, and the node says so.
#[test]
fn a_repeated_peer_is_deduplicated_with_a_warning() {
    let ports: Vec<u16> =
        (0..3).map(|_| std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()).collect();
    let id = format!("127.0.0.1:{}", ports[0]);
    let (b, c) = (format!("127.0.0.1:{}", ports[1]), format!("127.0.0.1:{}", ports[2]));
    let node = tenure::Config::new(id.clone(), "dups").bootstrap([id.clone(), b.clone(), c.clone(), b.clone()]);
    let (tx, rx) = std::sync::mpsc::channel();
    let h = spawn(RuntimeConfig::new(node).log(false), native, move |e: RuntimeEvent| {
        let _ = tx.send(e);
    })
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let warning = loop {
        match rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())).expect("no warning") {
            RuntimeEvent::Warning { code, message } if code == "duplicate_peer" => break message,
            _ => {}
        }
    };
    assert!(warning.contains(&b) && !warning.contains(&c), "{warning}");
    assert_eq!(h.inspect().unwrap().view_size, 3);
    h.stop();
}

/// With `admit_unknown_peers`, the id a sender is admitted (and may be voted for) under is the
/// address its datagram came from, which always goes through the state file: a message claiming
/// any other id (one with whitespace, say) is dropped as `sender_mismatch`, and the warning says
/// which id it claimed.
#[test]
fn an_admitted_sender_is_its_address_and_a_claimed_id_is_named() {
    let ports: Vec<u16> =
        (0..2).map(|_| std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()).collect();
    let id = format!("127.0.0.1:{}", ports[0]);
    let peer = format!("127.0.0.1:{}", ports[1]);
    let node = tenure::Config::new(id.clone(), "admit").bootstrap([peer]).admit_unknown_peers(true);
    let (tx, rx) = std::sync::mpsc::channel();
    let h = spawn(RuntimeConfig::new(node).log(false), native, move |e: RuntimeEvent| {
        let _ = tx.send(e);
    })
    .unwrap();
    let stranger = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let claim = |from: &str| {
        let envelope = tenure::wire::Envelope {
            cluster: "admit".into(),
            from: from.into(),
            term: 1,
            incarnation: 1,
            message: tenure::wire::Message::PreVote,
        };
        tenure::wire::encode(&envelope, None).unwrap()
    };
    // An id with whitespace (which the state file's old format could not carry) is not the
    // sender's address: refused, and named.
    stranger.send_to(&claim("a b"), &id).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let message = loop {
        match rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())).expect("no warning") {
            RuntimeEvent::Warning { code, message } if code == "dropped_sender_mismatch" => break message,
            _ => {}
        }
    };
    assert!(message.contains("claims to come from \"a b\""), "{message}");
    assert!(!h.inspect().unwrap().peers.iter().any(|p| p == "a b"));
    // Under its own address it is admitted, and that id round-trips through a state file.
    let own = stranger.local_addr().unwrap().to_string();
    stranger.send_to(&claim(&own), &id).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !h.inspect().unwrap().peers.contains(&own) {
        assert!(std::time::Instant::now() < deadline, "{own} not admitted");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let state = tenure::DurableState { term: 1, voted_for: Some(own) };
    assert_eq!(tenure_runtime::state::decode(&tenure_runtime::state::encode(&state)), Ok(state));
    h.stop();
}
