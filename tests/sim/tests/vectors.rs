//! Checks `tests/vectors/*.json` against the core and against what the recorder produces now.

use std::path::PathBuf;
use tenure_sim::vectors::{self, InvalidVector, MessageVector};

fn read(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vectors").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn vectors_decode_reencode_and_drop_as_documented() {
    let messages: Vec<MessageVector> = serde_json::from_str(&read("messages.json")).expect("messages.json parses");
    let invalid: Vec<InvalidVector> = serde_json::from_str(&read("invalid.json")).expect("invalid.json parses");
    vectors::check(&messages, &invalid).unwrap_or_else(|e| panic!("{e}"));
    let kinds: std::collections::BTreeSet<String> = messages
        .iter()
        .map(|m| serde_json::to_value(&m.envelope.message).unwrap()["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds.len(), 10, "every message kind has a vector: {kinds:?}");
    assert!(messages.iter().any(|m| m.key_hex.is_some()) && messages.iter().any(|m| m.key_hex.is_none()));
    let reasons: std::collections::BTreeSet<&str> = invalid.iter().map(|v| v.reason.as_str()).collect();
    for r in ["malformed", "oversized", "unknown_version", "wrong_cluster", "bad_mac", "sender_mismatch", "from_self"] {
        assert!(reasons.contains(r), "an invalid vector for {r}");
    }
}

#[test]
fn recorder_reproduces_the_committed_vectors() {
    assert!(
        read("messages.json") == vectors::to_file_text(&vectors::messages()),
        "messages.json differs from what record-vectors writes now: run `make scenarios` if deliberate"
    );
    assert!(
        read("invalid.json") == vectors::to_file_text(&vectors::invalid()),
        "invalid.json differs from what record-vectors writes now: run `make scenarios` if deliberate"
    );
}
