//! The words every host shares, as data: error codes with their family and exception class,
//! metric families with their help texts, event kinds, warning codes and configuration defaults.
//!
//! The Rust definitions ([`RuntimeError::code`]/[`RuntimeError::kind`], the core's error codes,
//! [`RuntimeEvent::kind`], [`crate::metrics::METRIC_FAMILIES`], the core's `DEFAULT_*` constants)
//! are the only place these words are decided. `tenure-tables` (src/bin/tenure-tables.rs) renders
//! them into the tables a host needs — `python/tenure/_tables.py`, `node/lib/tables.js` and
//! `node/tables.d.ts` — and the test `tests/tables.rs` fails while a checked-in copy differs from
//! what the definitions render (`make tables` rewrites them).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};
use tenure::{ConfigError, DropReason, Error as NodeError};

use crate::error::AddressProblem;
use crate::event::CONFIRM_LEADER;
pub use crate::metrics::{MetricFamily, METRIC_FAMILIES};
pub use crate::warn::WARNING_CODES;
use crate::{RuntimeError, RuntimeEvent};

mod render;
pub use render::{node_module, node_types, python_module};

/// One error code as every host sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCode {
    /// The stable snake_case code.
    pub code: &'static str,
    /// Its family ([`RuntimeError::kind`]; `config` and `node` for the core's own codes).
    pub kind: &'static str,
    /// The exception class the Python and Node.js packages raise for it (same name in both).
    pub class: &'static str,
}

/// The exception classes shared by the Python and Node.js packages: `(class, base class)`,
/// parents first. A host adds only what is idiomatic to it (Python's extra `ValueError`/`OSError`
/// bases, errors of its own such as a bad command line).
pub const ERROR_CLASSES: &[(&str, &str)] = &[
    ("TenureError", ""),
    ("ConfigError", "TenureError"),
    ("InvalidAddressError", "ConfigError"),
    ("InvalidIdError", "InvalidAddressError"),
    ("InvalidPeerError", "InvalidAddressError"),
    ("InvalidBindError", "InvalidAddressError"),
    ("KeyFileError", "ConfigError"),
    ("NodeError", "TenureError"),
    ("SelfPeerError", "NodeError"),
    ("UnknownPeerError", "NodeError"),
    ("NotLeaderError", "NodeError"),
    ("PayloadTooLargeError", "NodeError"),
    ("NoPendingConfirmError", "NodeError"),
    ("NotLeaderInTermError", "NodeError"),
    ("ViewFullError", "NodeError"),
    ("NoTransferTargetError", "NodeError"),
    ("BindError", "TenureError"),
    ("AddressInUseError", "BindError"),
    ("StateFileError", "TenureError"),
    ("StoppedError", "TenureError"),
    ("LeaderWorkError", "TenureError"),
    ("RandomSourceError", "TenureError"),
    ("RuntimeFailure", "TenureError"),
    ("LeadershipLost", "TenureError"),
];

/// Codes the hosts raise themselves rather than the runtime, in the same table: the lease check
/// of Python's and Node.js's leader work (`Lease.check`, `wait_valid`/`waitValid`) raises
/// `leadership_lost` once the leadership ended or its lease lapsed.
const HOST_ERROR_CODES: &[ErrorCode] =
    &[ErrorCode { code: "leadership_lost", kind: "leadership", class: "LeadershipLost" }];

/// The class of each family ([`RuntimeError::kind`]).
const CLASS_OF_KIND: &[(&str, &str)] = &[
    ("config", "ConfigError"),
    ("address", "InvalidAddressError"),
    ("key_file", "KeyFileError"),
    ("node", "NodeError"),
    ("bind", "BindError"),
    ("state_file", "StateFileError"),
    ("stopped", "StoppedError"),
    ("leader_work", "LeaderWorkError"),
    ("no_randomness", "RandomSourceError"),
    ("engine", "RuntimeFailure"),
    ("misuse", "RuntimeFailure"),
    ("io", "RuntimeFailure"),
];

/// Codes precise enough for a class of their own (a subclass of their family's class).
const CLASS_OF_CODE: &[(&str, &str)] = &[
    ("invalid_id", "InvalidIdError"),
    ("invalid_peer", "InvalidPeerError"),
    ("invalid_bind", "InvalidBindError"),
    ("self_peer", "SelfPeerError"),
    ("unknown_peer", "UnknownPeerError"),
    ("not_leader", "NotLeaderError"),
    ("payload_too_large", "PayloadTooLargeError"),
    ("no_pending_confirm", "NoPendingConfirmError"),
    ("not_leader_in_term", "NotLeaderInTermError"),
    ("view_full", "ViewFullError"),
    ("no_transfer_target", "NoTransferTargetError"),
    ("address_in_use", "AddressInUseError"),
];

/// One of each core configuration error. The match without a wildcard stops the build when the
/// core gains a variant this list lacks.
fn config_errors() -> Vec<ConfigError> {
    let all = vec![
        ConfigError::EmptyId { field: "id" },
        ConfigError::IdTooLong { field: "id", len: 0 },
        ConfigError::ZeroTimeout { field: "heartbeat_interval" },
        ConfigError::MinAboveMax { min: 0, max: 0 },
        ConfigError::HeartbeatNotBelowElectionTimeout { heartbeat_interval: 0, election_timeout_min: 0 },
        ConfigError::ZeroMinClusterSize,
        ConfigError::EmptyKey,
        ConfigError::IdHasWhitespace { field: "id" },
        ConfigError::TimeoutSpreadTooSmall { election_timeout_min: 0, election_timeout_max: 0, heartbeat_interval: 0 },
        ConfigError::ClockDriftTooLarge { max_clock_drift_ppm: 0 },
        ConfigError::LeaseOutOfRange { lease_duration: 0, heartbeat_interval: 0, election_timeout_min: 0 },
        ConfigError::TooManyPeers { peers: 0, max_peers: 0 },
        ConfigError::DurationTooLarge { field: "election_timeout_max", value: 0 },
        ConfigError::ValueTooLong { len: 0 },
    ];
    for e in &all {
        match e {
            ConfigError::EmptyId { .. }
            | ConfigError::IdTooLong { .. }
            | ConfigError::ZeroTimeout { .. }
            | ConfigError::MinAboveMax { .. }
            | ConfigError::HeartbeatNotBelowElectionTimeout { .. }
            | ConfigError::ZeroMinClusterSize
            | ConfigError::EmptyKey
            | ConfigError::IdHasWhitespace { .. }
            | ConfigError::TimeoutSpreadTooSmall { .. }
            | ConfigError::ClockDriftTooLarge { .. }
            | ConfigError::LeaseOutOfRange { .. }
            | ConfigError::TooManyPeers { .. }
            | ConfigError::DurationTooLarge { .. }
            | ConfigError::ValueTooLong { .. } => {}
        }
    }
    all
}

/// One of each core refusal (same guard as [`config_errors`]).
fn node_errors() -> Vec<NodeError> {
    let all = vec![
        NodeError::InvalidPeer { peer: String::new() },
        NodeError::SelfPeer,
        NodeError::UnknownPeer { peer: String::new() },
        NodeError::NotLeader,
        NodeError::PayloadTooLarge { size: 0, max: 0 },
        NodeError::NoPendingConfirm { term: 0 },
        NodeError::NotLeaderInTerm { term: 0 },
        NodeError::ViewFull { peer: String::new(), max_peers: 0 },
        NodeError::ValueTooLong { len: 0 },
    ];
    for e in &all {
        match e {
            NodeError::InvalidPeer { .. }
            | NodeError::SelfPeer
            | NodeError::UnknownPeer { .. }
            | NodeError::NotLeader
            | NodeError::PayloadTooLarge { .. }
            | NodeError::NoPendingConfirm { .. }
            | NodeError::NotLeaderInTerm { .. }
            | NodeError::ViewFull { .. }
            | NodeError::ValueTooLong { .. } => {}
        }
    }
    all
}

/// One of each runtime error (the core's wrapped once per core error).
fn runtime_errors() -> Vec<RuntimeError> {
    let p = PathBuf::new;
    let s = String::new;
    let mut all = vec![
        RuntimeError::InvalidId { value: s(), problem: AddressProblem::Empty },
        RuntimeError::InvalidPeer { value: s(), problem: AddressProblem::Empty },
        RuntimeError::InvalidBind { value: s(), problem: AddressProblem::Empty },
        RuntimeError::InvalidOption { option: "", message: s() },
        RuntimeError::AddressInUse { addr: s() },
        RuntimeError::HttpBind { addr: s(), in_use: false, message: s() },
        RuntimeError::Bind { addr: s(), message: s() },
        RuntimeError::StateDirMissing { path: p() },
        RuntimeError::StateUnwritable { path: p(), message: s() },
        RuntimeError::StateNotUtf8 { path: p() },
        RuntimeError::StateCorrupt { path: p(), message: s() },
        RuntimeError::StateLocked { path: p() },
        RuntimeError::StateRead { path: p(), message: s() },
        RuntimeError::KeyFile { path: p(), message: s() },
        RuntimeError::Engine { message: s() },
        RuntimeError::LeaderWorkFailed { leaderships: 0, term: 0 },
        RuntimeError::HandlerPanicked { message: s() },
        RuntimeError::Stopped,
        RuntimeError::NoRandomness,
        RuntimeError::NoTransferTarget,
        RuntimeError::OnRuntimeThread { method: "" },
        RuntimeError::Io { context: s(), message: s() },
        RuntimeError::SameNode { first: s(), second: s(), addr: s(), is_self: true },
        RuntimeError::SameNode { first: s(), second: s(), addr: s(), is_self: false },
    ];
    all.extend(config_errors().into_iter().map(RuntimeError::Config));
    all.extend(node_errors().into_iter().map(RuntimeError::Node));
    for e in &all {
        match e {
            RuntimeError::InvalidId { .. }
            | RuntimeError::InvalidPeer { .. }
            | RuntimeError::InvalidBind { .. }
            | RuntimeError::Config(_)
            | RuntimeError::InvalidOption { .. }
            | RuntimeError::AddressInUse { .. }
            | RuntimeError::HttpBind { .. }
            | RuntimeError::Bind { .. }
            | RuntimeError::StateDirMissing { .. }
            | RuntimeError::StateUnwritable { .. }
            | RuntimeError::StateNotUtf8 { .. }
            | RuntimeError::StateCorrupt { .. }
            | RuntimeError::StateLocked { .. }
            | RuntimeError::StateRead { .. }
            | RuntimeError::KeyFile { .. }
            | RuntimeError::Node(_)
            | RuntimeError::Engine { .. }
            | RuntimeError::LeaderWorkFailed { .. }
            | RuntimeError::HandlerPanicked { .. }
            | RuntimeError::Stopped
            | RuntimeError::NoRandomness
            | RuntimeError::NoTransferTarget
            | RuntimeError::OnRuntimeThread { .. }
            | RuntimeError::Io { .. }
            | RuntimeError::SameNode { .. } => {}
        }
    }
    all
}

fn class_of(code: &str, kind: &str) -> &'static str {
    let by_code = CLASS_OF_CODE.iter().find(|(c, _)| *c == code);
    let by_kind = CLASS_OF_KIND.iter().find(|(k, _)| *k == kind);
    by_code.or(by_kind).map_or("TenureError", |(_, class)| class)
}

/// Every error code a runtime or a core call can raise, and the hosts' own
/// (`HOST_ERROR_CODES`), sorted by code; a code raised under two families (the runtime's
/// `invalid_peer` is an address, the core's a refusal) keeps the first.
pub fn error_codes() -> Vec<ErrorCode> {
    let mut seen = BTreeMap::new();
    for e in runtime_errors() {
        let (code, kind) = (e.code(), e.kind());
        seen.entry(code).or_insert(ErrorCode { code, kind, class: class_of(code, kind) });
    }
    for e in HOST_ERROR_CODES {
        seen.entry(e.code).or_insert(e.clone());
    }
    seen.into_values().collect()
}

/// One of each event, for [`event_kinds`].
fn events() -> Vec<RuntimeEvent> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let all = vec![
        RuntimeEvent::Started { id: String::new(), bound_addr: addr, term: 0 },
        RuntimeEvent::Leader { term: 0, value: None },
        RuntimeEvent::Follower { term: 0, leader: None, value: None },
        RuntimeEvent::PeerJoined { peer: String::new() },
        RuntimeEvent::PeerLeft { peer: String::new() },
        RuntimeEvent::Message { from: String::new(), payload: Vec::new() },
        RuntimeEvent::Warning { code: String::new(), message: String::new() },
        RuntimeEvent::Fatal { error: RuntimeError::Stopped },
        RuntimeEvent::Stopped { term: 0 },
    ];
    for e in &all {
        match e {
            RuntimeEvent::Started { .. }
            | RuntimeEvent::Leader { .. }
            | RuntimeEvent::Follower { .. }
            | RuntimeEvent::PeerJoined { .. }
            | RuntimeEvent::PeerLeft { .. }
            | RuntimeEvent::Message { .. }
            | RuntimeEvent::Warning { .. }
            | RuntimeEvent::Fatal { .. }
            | RuntimeEvent::Stopped { .. } => {}
        }
    }
    all
}

/// Every event kind a runtime delivers ([`RuntimeEvent::kind`]) and the confirm-leader question
/// ([`CONFIRM_LEADER`]), in delivery order of a typical life.
pub fn event_kinds() -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = events().iter().map(RuntimeEvent::kind).collect();
    kinds.insert(2, CONFIRM_LEADER);
    kinds
}

/// The configuration defaults every host shows, by the core's field name (milliseconds for
/// durations), and what the default configuration derives from them.
pub fn defaults() -> BTreeMap<&'static str, Value> {
    let c = tenure::Config::new("a", "b");
    let policy = crate::FailurePolicy::default();
    let mut d = BTreeMap::new();
    d.insert("election_timeout_min", json!(tenure::DEFAULT_ELECTION_TIMEOUT_MIN));
    d.insert("election_timeout_max", json!(tenure::DEFAULT_ELECTION_TIMEOUT_MAX));
    d.insert("heartbeat_interval", json!(c.heartbeat_interval));
    d.insert("ghost_ttl", json!(c.ghost_ttl));
    d.insert("min_cluster_size", json!(c.min_cluster_size));
    d.insert("max_peers", json!(c.max_peers));
    d.insert("max_clock_drift_ppm", json!(c.max_clock_drift_ppm));
    d.insert("pre_vote", json!(c.pre_vote));
    d.insert("confirm_leader", json!(c.confirm_leader));
    d.insert("admit_unknown_peers", json!(c.admit_unknown_peers));
    d.insert("max_id_len", json!(tenure::MAX_ID_LEN));
    d.insert("resolve_interval", json!(crate::config::DEFAULT_RESOLVE_INTERVAL.as_millis() as u64));
    d.insert("max_failures", json!(policy.max_failures));
    d.insert("max_step_downs", json!(policy.max_step_downs));
    d.insert("backoff", json!(policy.backoff.as_millis() as u64));
    d.insert("max_backoff", json!(policy.max_backoff.as_millis() as u64));
    if let Ok(v) = c.validate() {
        d.insert("lease_duration", json!(v.lease_duration));
        d.insert("lease_span", json!(v.lease_span));
        d.insert("preempt_after", json!(v.preempt_after));
    }
    d.insert("priority", json!(c.priority));
    d.insert("never_lead", json!(c.never_lead));
    d
}

/// Everything above as one JSON value (what `tenure-tables --json` prints and docs/api.md's test
/// reads).
pub fn to_json() -> Value {
    let families: Vec<Value> = METRIC_FAMILIES
        .iter()
        .map(|f| json!({"name": f.name, "type": f.kind, "help": f.help, "labels": f.labels}))
        .collect();
    let codes: Vec<Value> =
        error_codes().iter().map(|e| json!({"code": e.code, "kind": e.kind, "class": e.class})).collect();
    json!({
        "error_codes": codes,
        "error_classes": ERROR_CLASSES.iter().map(|(c, b)| json!([c, b])).collect::<Vec<_>>(),
        "drop_reasons": DropReason::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
        "event_kinds": event_kinds(),
        "warning_codes": WARNING_CODES,
        "metric_families": families,
        "defaults": defaults(),
    })
}

/// Every generated file: (path under the repository root, text).
pub fn generated_files() -> Vec<(&'static str, String)> {
    vec![
        ("python/tenure/_tables.py", python_module()),
        ("node/lib/tables.js", node_module()),
        ("node/tables.d.ts", node_types()),
    ]
}

/// The option names of the core's and the runtime's configuration, as the core, the runtime and
/// their messages spell them (snake_case). A host whose API spells them otherwise rewrites its
/// messages with [`camel_case_names`].
pub const OPTION_NAMES: &[&str] = &[
    "id",
    "cluster",
    "bootstrap",
    "min_cluster_size",
    "election_timeout_min",
    "election_timeout_max",
    "heartbeat_interval",
    "lease_duration",
    "ghost_ttl",
    "pre_vote",
    "confirm_leader",
    "durable",
    "key",
    "admit_unknown_peers",
    "max_peers",
    "max_clock_drift_ppm",
    "incarnation",
    "value",
    "priority",
    "never_lead",
    "preempt_after",
    "observer",
    "observer_peers",
    "bind",
    "state_file",
    "key_file",
    "confirm_timeout",
    "handover_timeout",
    "resolve_interval",
    "failure_policy",
    "max_failures",
    "max_step_downs",
    "max_backoff",
    "http",
    "ready_when",
    "failure_detection",
];

/// The core's configuration options an elector (Python's `Elector` and `SyncElector`, the Node.js
/// `Elector`) takes as options of its own, beside the id, the cluster and the peers: the one list
/// both hosts read (generated into their tables), so that an option added to the core reaches
/// both or neither.
pub const ELECTOR_CONFIG_OPTIONS: &[&str] = &[
    "min_cluster_size",
    "election_timeout_min",
    "election_timeout_max",
    "heartbeat_interval",
    "lease_duration",
    "ghost_ttl",
    "pre_vote",
    "key",
    "admit_unknown_peers",
    "max_peers",
    "max_clock_drift_ppm",
    "incarnation",
    "value",
    "priority",
    "never_lead",
    "preempt_after",
    "observer",
    "observer_peers",
];

/// The runtime's own options ([`crate::RuntimeConfig`]'s, beside the core's
/// [`ELECTOR_CONFIG_OPTIONS`]) that the Node.js `Elector` takes: generated into its table, so that
/// the package passes on exactly these (its native binding refuses any other key).
pub const ELECTOR_RUNTIME_OPTIONS: &[&str] = &[
    "bind",
    "state_file",
    "key_file",
    "confirm_timeout",
    "handover_timeout",
    "resolve_interval",
    "http",
    "ready_when",
    "failure_policy",
];

/// `election_timeout_min` → `electionTimeoutMin`.
pub fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `message` with every option name of [`OPTION_NAMES`] that stands as a whole word (and has an
/// underscore, so plain words such as `key` stay), or as a command-line flag (`--bind`,
/// `--min-cluster-size`), written in camelCase: what a Node.js caller, who passed
/// `electionTimeoutMin`, reads in a message.
pub fn camel_case_names(message: &str) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find(is_word) {
        out.push_str(&rest[..start]);
        let word_len = rest[start..].find(|c: char| !is_word(c)).unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        let flag = word.strip_prefix("--").map(|f| f.replace('-', "_"));
        match flag {
            Some(f) if OPTION_NAMES.contains(&f.as_str()) => out.push_str(&camel_case(&f)),
            None if word.contains('_') && OPTION_NAMES.contains(&word) => out.push_str(&camel_case(word)),
            _ => out.push_str(word),
        }
        rest = &rest[start + word_len..];
    }
    out.push_str(rest);
    out
}

/// The runtime's durations that a host whose other durations are also whole milliseconds names
/// with an `_ms` suffix (Python: `confirm_timeout_ms`), because its standard library would read
/// a bare `timeout` as seconds. The core's own options (`election_timeout_min`, ...) keep their
/// names: they are milliseconds in every surface.
pub const MS_SUFFIXED_OPTIONS: &[&str] = &["confirm_timeout", "handover_timeout", "backoff", "max_backoff"];

/// `message` with every option of [`MS_SUFFIXED_OPTIONS`] that stands as a whole word written with
/// its `_ms` suffix: what a Python caller, who passed `confirm_timeout_ms`, reads in a message.
pub fn ms_suffixed_names(message: &str) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(message.len() + 8);
    let mut rest = message;
    while let Some(start) = rest.find(is_word) {
        out.push_str(&rest[..start]);
        let word_len = rest[start..].find(|c: char| !is_word(c)).unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        out.push_str(word);
        if MS_SUFFIXED_OPTIONS.contains(&word) {
            out.push_str("_ms");
        }
        rest = &rest[start + word_len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_for_python_callers_name_durations_with_their_unit() {
        assert_eq!(
            ms_suffixed_names("invalid backoff: 2s is above max_backoff 1s; confirm_timeout."),
            "invalid backoff_ms: 2s is above max_backoff_ms 1s; confirm_timeout_ms."
        );
        assert_eq!(ms_suffixed_names("backoffs max_backoff_x"), "backoffs max_backoff_x");
    }

    #[test]
    fn messages_for_camel_case_callers_name_their_options() {
        let m = ConfigError::MinAboveMax { min: 400, max: 300 }.to_string();
        assert_eq!(camel_case_names(&m), "electionTimeoutMin (400 ms) must not exceed electionTimeoutMax (300 ms)");
        // A value that merely contains an option name, and words that are not options, stay.
        assert_eq!(
            camel_case_names("peer \"max_peers_x\" key id: ghost_ttl."),
            "peer \"max_peers_x\" key id: ghostTtl."
        );
    }
}
