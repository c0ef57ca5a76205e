//! The component's contract, one behaviour at a time: typed errors, callback order, the
//! leadership gate through callbacks, and traps that surface instead of wedging the node.

use tenure_component_host::{
    default_node_config, ComponentNode, ConfigErrorCode, ConfirmAnswer, DropReason, LeaderRefusal, Loader, NodeConfig,
    NodeErrorCode, PeerDownReason, Record, Recorder, Role, WarningCode,
};

fn config(id: &str, peers: &[&str]) -> NodeConfig {
    let peers: Vec<String> = peers.iter().map(|p| p.to_string()).collect();
    NodeConfig { durable: true, ..default_node_config(id, "api", &peers, 7) }
}

fn node(loader: &Loader<Recorder>, c: NodeConfig) -> ComponentNode<Recorder> {
    ComponentNode::new(loader, Recorder::default(), &c, 0).expect("no trap").expect("valid config")
}

fn take(n: &mut ComponentNode<Recorder>) -> Vec<Record> {
    std::mem::take(&mut n.callbacks_mut().records)
}

/// A three-node cluster where the test plays b and c by hand: a campaigns, b and c grant.
fn win(a: &mut ComponentNode<Recorder>, b_id: &str) -> (u64, Vec<Record>) {
    let deadline = a.poll_timeout().unwrap().expect("a follower has an election deadline");
    a.handle_timeout(deadline).unwrap();
    let mut now = deadline;
    // Answer every pre-vote and vote request from b (a quorum of 2 out of 3 with a itself).
    let mut records = take(a);
    for _round in 0..2 {
        let requests: Vec<Vec<u8>> = records
            .iter()
            .filter_map(|r| match r {
                Record::Send { to, bytes } if to == b_id => Some(bytes.clone()),
                _ => None,
            })
            .collect();
        assert!(!requests.is_empty(), "a asked b nothing: {records:?}");
        for req in requests {
            let env = tenure::wire::decode(&req, None).expect("a valid message");
            let reply_msg = match env.message {
                tenure::wire::Message::PreVote => tenure::wire::Message::PreVoteReply { granted: true },
                tenure::wire::Message::Vote { .. } => tenure::wire::Message::VoteReply { granted: true },
                // a greets b, heard from for the first time (wire versions): nothing to answer.
                tenure::wire::Message::Hello { .. } => continue,
                other => panic!("unexpected request {other:?}"),
            };
            let reply = tenure::wire::Envelope {
                cluster: "api".to_string(),
                from: b_id.to_string(),
                term: env.term,
                incarnation: 0,
                message: reply_msg,
            };
            let bytes = tenure::wire::encode(&reply, None).expect("encodable");
            now += 1;
            a.handle_message(now, b_id, &bytes).unwrap().expect("accepted");
        }
        records = take(a);
        if records.iter().any(|r| matches!(r, Record::ConfirmLeader(_) | Record::BecameLeader(_))) {
            break;
        }
    }
    (now, records)
}

/// The component, compiled once for every test in this file.
fn loader() -> Loader<Recorder> {
    static LOADER: std::sync::OnceLock<Loader<Recorder>> = std::sync::OnceLock::new();
    LOADER.get_or_init(|| Loader::built().expect("the component compiles")).clone()
}

#[test]
fn a_bad_config_is_a_typed_error() {
    let loader = loader();
    let mut c = config("a", &["b", "c"]);
    c.cluster = String::new();
    let err = ComponentNode::new(&loader, Recorder::default(), &c, 0).unwrap().err().expect("refused");
    assert_eq!(err.code, ConfigErrorCode::EmptyId);
    assert!(err.message.contains("cluster"), "{}", err.message);

    let mut c = config("a", &["b", "c"]);
    c.election_timeout_min = Some(300);
    c.election_timeout_max = Some(100);
    let err = ComponentNode::new(&loader, Recorder::default(), &c, 0).unwrap().err().expect("refused");
    assert_eq!(err.code, ConfigErrorCode::MinAboveMax);

    let mut c = config("a", &["b", "c"]);
    c.min_cluster_size = Some(2);
    let mut n = node(&loader, c);
    let w = n.warnings().unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].code, WarningCode::SmallMinClusterSize);
    // Field names as the WIT spells them.
    assert!(w[0].message.starts_with("min-cluster-size is 2"), "{}", w[0].message);
}

#[test]
fn lease_duration_and_refused_reach_the_core() {
    let loader = loader();
    let mut c = config("a", &["b", "c"]);
    c.election_timeout_min = Some(200);
    c.lease_duration = Some(201);
    let err = ComponentNode::new(&loader, Recorder::default(), &c, 0).unwrap().err().expect("refused");
    assert_eq!(err.code, ConfigErrorCode::LeaseOutOfRange);
    // Field names as the WIT spells them (kebab-case), not as the core does.
    assert!(err.message.contains("lease-duration (201 ms)"), "{}", err.message);
    assert!(err.message.contains("election-timeout-min (200 ms)"), "{}", err.message);
    assert!(!err.message.contains('_'), "{}", err.message);

    let mut c = config("a", &["b", "c"]);
    c.lease_duration = Some(120);
    let mut n = node(&loader, c);
    // A refused port means the process is gone, not the member: b stays in the view.
    n.peer_down(1, "b", PeerDownReason::Refused).unwrap().unwrap();
    assert_eq!(n.view().unwrap(), ["a", "b", "c"]);
    assert_eq!(n.peer_down(2, "a", PeerDownReason::Refused).unwrap().unwrap_err().code, NodeErrorCode::SelfPeer);
}

#[test]
fn bad_input_is_dropped_with_a_reason_and_calls_are_refused_with_codes() {
    let loader = loader();
    let mut n = node(&loader, config("a", &["b", "c"]));
    assert_eq!(n.handle_message(1, "b", b"not tenure").unwrap(), Err(DropReason::Malformed));
    assert_eq!(n.handle_message(1, "b", &[]).unwrap(), Err(DropReason::Malformed));
    assert_eq!(n.handle_message(1, "b", &vec![0u8; 1 << 20]).unwrap(), Err(DropReason::Oversized));
    let i = n.inspect().unwrap();
    // Every reason, as the enum, in `drop-reason` order.
    let reasons: Vec<_> =
        i.dropped_by_reason.iter().map(|(r, _)| tenure_component_host::core_drop_reason(*r)).collect();
    assert_eq!(reasons, tenure::DropReason::ALL);
    let count = |reason: DropReason| i.dropped_by_reason.iter().find(|(r, _)| *r == reason).map(|(_, n)| *n);
    assert_eq!(count(DropReason::Malformed), Some(2));
    assert_eq!(count(DropReason::Oversized), Some(1));

    let e = n.transfer_leadership(2, "b").unwrap().unwrap_err();
    assert_eq!(e.code, NodeErrorCode::NotLeader);
    assert_eq!(n.leave(2, "zz").unwrap().unwrap_err().code, NodeErrorCode::UnknownPeer);
    assert_eq!(n.join(2, "").unwrap().unwrap_err().code, NodeErrorCode::InvalidPeer);
    assert_eq!(n.peer_down(2, "a", PeerDownReason::Terminated).unwrap().unwrap_err().code, NodeErrorCode::SelfPeer);
    assert_eq!(n.confirm_leader(2, 9, true).unwrap().unwrap_err().code, NodeErrorCode::NoPendingConfirm);
    assert_eq!(n.broadcast(2, &vec![0u8; 1 << 20]).unwrap().unwrap_err().code, NodeErrorCode::PayloadTooLarge);

    // Membership callbacks and the view.
    take(&mut n);
    n.join(3, "d").unwrap().unwrap();
    assert!(take(&mut n).contains(&Record::PeerJoined("d".into())));
    assert_eq!(n.view().unwrap(), ["a", "b", "c", "d"]);
    n.leave(4, "d").unwrap().unwrap();
    assert!(take(&mut n).contains(&Record::PeerLeft("d".into())));
    assert_eq!(n.view().unwrap(), ["a", "b", "c"]);
}

/// Error texts name fields in the WIT's kebab-case, but a quoted peer id keeps its own `_`.
#[test]
fn view_full_names_max_peers_in_kebab_case_and_keeps_the_peer_id() {
    let loader = loader();
    let mut c = config("a", &["b"]);
    c.max_peers = Some(1);
    let mut n = node(&loader, c);
    let e = n.join(1, "new_peer_1").unwrap().unwrap_err();
    assert_eq!(e.code, NodeErrorCode::ViewFull);
    assert!(e.message.contains("\"new_peer_1\""), "{}", e.message);
    assert!(e.message.contains("max-peers (1)"), "{}", e.message);
    assert!(!e.message.contains("max_peers"), "{}", e.message);
}

#[test]
fn winning_asks_the_host_persists_first_and_publishes_leadership() {
    let loader = loader();
    let mut a = node(&loader, config("a", &["b", "c"]));
    let start = take(&mut a);
    assert!(matches!(start.as_slice(), [Record::SetWakeup(Some(_))]), "{start:?}");

    let (_, records) = win(&mut a, "b");
    let confirm = records.iter().position(|r| matches!(r, Record::ConfirmLeader(_))).expect("confirm asked");
    let leader = records.iter().position(|r| matches!(r, Record::BecameLeader(_))).expect("became leader");
    assert!(confirm < leader);
    assert_eq!(a.role().unwrap(), Role::Leader);
    let term = a.term().unwrap();
    assert_eq!(a.fencing_token().unwrap(), Some(term));
    assert_eq!(a.inspect().unwrap().voted_for.as_deref(), Some("a"));
}

#[test]
fn persist_comes_before_the_sends_that_depend_on_it() {
    let loader = loader();
    let mut c = config("a", &["b", "c"]);
    c.pre_vote = Some(false);
    let mut a = node(&loader, c);
    take(&mut a);
    let deadline = a.poll_timeout().unwrap().unwrap();
    a.handle_timeout(deadline).unwrap();
    let records = take(&mut a);
    let persist = records.iter().position(|r| matches!(r, Record::Persist(_))).expect("persisted");
    let first_send = records.iter().position(|r| matches!(r, Record::Send { .. })).expect("asked for votes");
    assert!(persist < first_send, "{records:?}");
    match &records[persist] {
        Record::Persist(s) => assert_eq!((s.term, s.voted_for.as_deref()), (1, Some("a"))),
        _ => unreachable!(),
    }
}

#[test]
fn a_denied_or_deferred_confirmation_withholds_leadership() {
    let loader = loader();
    // Deny: no leadership, a backoff, the denial counted.
    let mut a = ComponentNode::new(
        &loader,
        Recorder { confirm: ConfirmAnswer::Deny, ..Recorder::default() },
        &config("a", &["b", "c"]),
        0,
    )
    .unwrap()
    .unwrap();
    take(&mut a);
    let (_, records) = win(&mut a, "b");
    assert!(records.iter().any(|r| matches!(r, Record::ConfirmLeader(_))));
    assert!(!records.iter().any(|r| matches!(r, Record::BecameLeader(_))));
    assert!(!a.is_leader().unwrap());
    assert_eq!(a.inspect().unwrap().confirm_denied, 1);

    // Defer: nothing happens until the host answers through the export.
    let mut a = ComponentNode::new(
        &loader,
        Recorder { confirm: ConfirmAnswer::Defer, ..Recorder::default() },
        &config("a", &["b", "c"]),
        0,
    )
    .unwrap()
    .unwrap();
    take(&mut a);
    let (now, records) = win(&mut a, "b");
    let term = match records.iter().find(|r| matches!(r, Record::ConfirmLeader(_))) {
        Some(Record::ConfirmLeader(t)) => *t,
        _ => panic!("no confirm: {records:?}"),
    };
    assert_eq!(a.role().unwrap(), Role::Candidate);
    a.confirm_leader(now + 1, term, true).unwrap().unwrap();
    assert!(take(&mut a).contains(&Record::BecameLeader(term)));
    assert!(a.is_leader().unwrap());
}

#[test]
fn a_failing_became_leader_handler_rolls_leadership_back() {
    let loader = loader();
    let recorder = Recorder { fail_leadership: Some(LeaderRefusal::HandlerFailed), ..Recorder::default() };
    let mut a = ComponentNode::new(&loader, recorder, &config("a", &["b", "c"]), 0).unwrap().unwrap();
    take(&mut a);
    let (_, records) = win(&mut a, "b");
    let term = a.term().unwrap();
    let leader = records.iter().position(|r| *r == Record::BecameLeader(term)).expect("became leader");
    let follower =
        records.iter().position(|r| matches!(r, Record::BecameFollower(t, None) if *t == term)).expect("stepped down");
    assert!(leader < follower, "{records:?}");
    assert!(!a.is_leader().unwrap());
    assert_eq!(a.inspect().unwrap().confirm_denied, 1);
}

#[test]
fn a_trap_surfaces_as_an_error_and_the_node_refuses_further_calls() {
    let loader = loader();
    let mut c = config("a", &["b", "c"]);
    c.pre_vote = Some(false);
    let recorder = Recorder { fail_persist: Some("disk full".into()), ..Recorder::default() };
    let mut a = ComponentNode::new(&loader, recorder, &c, 0).unwrap().unwrap();
    let deadline = a.poll_timeout().unwrap().unwrap();
    // The first vote request needs a persisted vote: persisting fails, the call traps.
    let err = a.handle_timeout(deadline).unwrap_err();
    assert!(format!("{err:#}").contains("disk full"), "{err:#}");
    assert!(a.trapped().is_some());
    // No vote request left before the failed persist was acknowledged.
    assert!(!a.callbacks().records.iter().any(|r| matches!(r, Record::Send { .. })));
    let err = a.term().unwrap_err();
    assert!(format!("{err:#}").contains("trapped earlier"), "{err:#}");
}

#[test]
fn one_node_per_instance_and_default_config() {
    let loader = loader();
    let mut a = node(&loader, config("a", &["b", "c"]));
    // The host imports carry no node identity: a second node in the same instance is refused.
    let err = a.construct_another(&config("b", &["a", "c"]), 1).unwrap().unwrap_err();
    assert_eq!(err.code, ConfigErrorCode::InstanceInUse);
    assert_eq!(a.id().unwrap(), "a");

    // The core's defaults, with only id, cluster and seed given.
    let d = a.default_config("x", "y", 9).unwrap();
    let core = tenure::Config::new("x", "y");
    assert_eq!((d.id.as_str(), d.cluster.as_str(), d.seed), ("x", "y", 9));
    assert_eq!(d.min_cluster_size, Some(core.min_cluster_size));
    assert_eq!(d.heartbeat_interval, Some(core.heartbeat_interval));
    assert_eq!(d.max_peers, Some(core.max_peers));
    assert_eq!(d.election_timeout_min, core.election_timeout_min);
    assert!(d.bootstrap.is_empty() && d.restored.is_none() && !d.durable);
}

#[test]
fn the_component_carries_its_name_and_the_workspace_version() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let venv = root.join(".venv/bin/wasm-tools");
    let wasm_tools = if venv.exists() { venv } else { "wasm-tools".into() };
    let out = std::process::Command::new(wasm_tools)
        .args(["metadata", "show", "--json", tenure_component_host::COMPONENT_PATH])
        .output()
        .expect("wasm-tools runs (make setup installs it)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let meta = &json["component"]["metadata"];
    assert_eq!(meta["name"], "tenure", "{json}");
    assert_eq!(meta["version"], env!("CARGO_PKG_VERSION"), "{json}");
}
