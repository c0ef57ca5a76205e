//! The scripted simulations that produce `tests/scenarios/*.json`: each runs a small cluster,
//! records every node, and keeps one node's timeline. Run `make scenarios` (or the
//! `record-scenarios` binary) to regenerate the files; the replay test checks that regenerating
//! gives the committed bytes.

use tenure::{Config, PeerDownReason, Role};

use crate::scenario::{Input, Scenario};
use crate::sim::{NetConfig, Sim};

const RTT: u64 = 10;

fn sim(seed: u64, n: usize, tweak: impl Fn(Config) -> Config) -> Sim {
    let mut s = Sim::new(seed, NetConfig::rtt(RTT));
    s.record = true;
    let ids: Vec<String> = (1..=n).map(|i| format!("n{i}")).collect();
    for id in &ids {
        s.add_node(tweak(Config::new(id.clone(), "scn").bootstrap(ids.iter().cloned()).durable(true)));
    }
    s
}

fn take(sim: &Sim, id: &str, name: &str, description: &str) -> Scenario {
    if let Some(v) = sim.violation() {
        panic!("scenario {name}: {v}");
    }
    let mut s = sim.recording(id).unwrap_or_else(|| panic!("{name}: no recording of {id}")).scenario.clone();
    s.name = name.to_string();
    s.description = description.to_string();
    s
}

fn run(sim: &mut Sim, ms: u64) {
    sim.run_for(ms).unwrap_or_else(|v| panic!("{v}"));
}

fn leader(sim: &mut Sim, within: u64) -> String {
    let deadline = sim.now + within;
    sim.run_until_cond(deadline, |s| s.converged()).unwrap_or_else(|v| panic!("{v}"));
    sim.leader().expect("a leader")
}

fn other(sim: &Sim, not: &[&str]) -> String {
    sim.nodes.iter().map(|n| n.id.clone()).find(|id| !not.contains(&id.as_str())).expect("another node")
}

/// Every recorded scenario, in file-name order.
pub fn all() -> Vec<Scenario> {
    let mut v = vec![
        elect_leader(),
        elect_follower(),
        elect_five(),
        single_node(),
        no_prevote(),
        rejoin_without_prevote(),
        leader_crash_reelect(),
        minority_leader_steps_down(),
        partition_heal_old_leader(),
        isolated_rejoin_prevote(),
        confirm_denied_backoff(),
        confirm_timeout(),
        leader_handler_failed(),
        transfer_leader(),
        transfer_target(),
        broadcast(),
        join_leave(),
        terminated_leader_fast_failover(),
        ghost_ttl_expiry(),
        unclustered(),
        hostile_input(),
        authenticated(),
        durable_restart(),
        api_errors(),
        value_proclaimed(),
        value_followed(),
        priority_preempt(),
        priority_witness(),
        observer_follows(),
        observer_informed(),
        death_notice_failover(),
    ];
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

fn elect_leader() -> Scenario {
    let mut s = sim(11, 3, |c| c);
    let l = leader(&mut s, 1000);
    run(&mut s, 200);
    take(
        &s,
        &l,
        "elect-3-leader",
        "three nodes: this node times out, wins pre-vote and vote, is confirmed and sends heartbeats",
    )
}

fn elect_follower() -> Scenario {
    let mut s = sim(11, 3, |c| c);
    let l = leader(&mut s, 1000);
    run(&mut s, 200);
    let f = other(&s, &[&l]);
    take(
        &s,
        &f,
        "elect-3-follower",
        "three nodes: this node grants a pre-vote and a vote, then follows the leader and acknowledges heartbeats",
    )
}

fn elect_five() -> Scenario {
    let mut s = sim(12, 5, |c| c.election_timeout_min(150).election_timeout_max(300));
    let l = leader(&mut s, 1000);
    run(&mut s, 120);
    take(&s, &l, "elect-5-leader", "five nodes: this node wins with a quorum of three")
}

fn single_node() -> Scenario {
    let mut s = Sim::new(13, NetConfig::rtt(RTT));
    s.record = true;
    s.add_node(Config::new("solo", "scn").min_cluster_size(1).durable(true));
    run(&mut s, 400);
    assert!(s.node("solo").is_leader());
    take(
        &s,
        "solo",
        "single-node-leads-alone",
        "min_cluster_size 1 and no peers: the node elects itself without sending anything",
    )
}

fn no_prevote() -> Scenario {
    let mut s = sim(14, 3, |c| c.pre_vote(false));
    let l = leader(&mut s, 1000);
    run(&mut s, 100);
    take(&s, &l, "no-prevote-election", "pre-vote off: the node increments its term and asks for votes directly")
}

fn rejoin_without_prevote() -> Scenario {
    let mut s = sim(15, 3, |c| c.pre_vote(false));
    let l = leader(&mut s, 1000);
    let f = other(&s, &[&l]);
    s.isolate(&f);
    run(&mut s, 700);
    s.heal();
    run(&mut s, 600);
    take(
        &s,
        &l,
        "rejoin-without-prevote-deposes",
        "pre-vote off: a follower cut off for a while returns with an inflated term and deposes this leader",
    )
}

fn leader_crash_reelect() -> Scenario {
    let mut s = sim(16, 3, |c| c);
    let l = leader(&mut s, 1000);
    run(&mut s, 70);
    s.crash(&l);
    let l2 = leader(&mut s, 1000);
    run(&mut s, 100);
    take(
        &s,
        &l2,
        "leader-crash-reelect",
        "the leader crashes silently; this follower times out and becomes the next leader",
    )
}

fn minority_leader_steps_down() -> Scenario {
    let mut s = sim(17, 3, |c| c);
    let l = leader(&mut s, 1000);
    run(&mut s, 60);
    s.isolate(&l);
    run(&mut s, 500);
    assert!(!s.node(&l).is_leader());
    take(
        &s,
        &l,
        "minority-leader-steps-down",
        "the leader is cut off from everyone and steps down by itself (check quorum)",
    )
}

fn partition_heal_old_leader() -> Scenario {
    let mut s = sim(18, 5, |c| c);
    let l = leader(&mut s, 1000);
    run(&mut s, 60);
    let f = other(&s, &[&l]);
    let (a, b): (Vec<String>, Vec<String>) = s.nodes.iter().map(|n| n.id.clone()).partition(|id| *id == l || *id == f);
    s.partition(&[a, b]);
    run(&mut s, 800);
    s.heal();
    let l2 = leader(&mut s, 1000);
    assert_ne!(l, l2);
    run(&mut s, 100);
    take(
        &s,
        &l,
        "partition-heal-old-leader-follows",
        "the leader ends up on the minority side, steps down, and after the heal follows the majority's newer leader",
    )
}

fn isolated_rejoin_prevote() -> Scenario {
    let mut s = sim(19, 3, |c| c);
    let l = leader(&mut s, 1000);
    let f = other(&s, &[&l]);
    let term = s.node(&l).term();
    s.isolate(&f);
    run(&mut s, 900);
    s.heal();
    run(&mut s, 300);
    assert_eq!(s.leader().as_deref(), Some(l.as_str()));
    assert_eq!(s.node(&l).term(), term);
    take(&s, &f, "isolated-rejoin-prevote", "pre-vote on: a follower cut off keeps asking for pre-votes without raising its term, and simply follows again after the heal")
}

fn confirm_denied_backoff() -> Scenario {
    let mut s = sim(20, 3, |c| c);
    for n in &mut s.nodes {
        n.policy.deny_next = 2;
    }
    let l = leader(&mut s, 5000);
    run(&mut s, 60);
    take(&s, &l, "confirm-denied-backoff", "the host denies leadership twice (backoff grows), then grants it")
}

fn confirm_timeout() -> Scenario {
    // n2 and n3 are slow to campaign, so n1's unanswered confirmation runs into its timeout
    // before anyone else's election could pre-empt it. (They grant nothing during their boot
    // promise, the first 400 ms.)
    let mut s = sim(21, 3, |c| if c.id == "n1" { c } else { c.election_timeout_min(400).election_timeout_max(2000) });
    s.host("n1").policy.ignore_confirm = true;
    run(&mut s, 1200);
    assert_eq!(s.node("n1").inspect().confirm_denied, 1);
    take(
        &s,
        "n1",
        "confirm-timeout-is-denial",
        "the host never answers confirm_leader: after one election timeout the silence counts as a denial",
    )
}

fn leader_handler_failed() -> Scenario {
    let mut s = sim(22, 3, |c| c);
    for n in &mut s.nodes {
        n.policy.fail_next = 1;
    }
    let l = leader(&mut s, 5000);
    run(&mut s, 60);
    let first = s.recordings.iter().find(|r| {
        r.scenario.steps.iter().any(|st| matches!(st.input, crate::scenario::InputJson::LeaderFailed { .. }))
    });
    let id = first.map(|r| r.id.clone()).unwrap_or(l);
    take(
        &s,
        &id,
        "leader-handler-failed",
        "the became-leader handler fails: leadership is rolled back and the node steps down",
    )
}

fn transfer_leader() -> Scenario {
    let mut s = sim(23, 3, |c| c);
    let l = leader(&mut s, 1000);
    run(&mut s, 60);
    let t = other(&s, &[&l]);
    s.call(&l, Input::Transfer(t.clone())).expect("leader transfers");
    let l2 = leader(&mut s, 200);
    assert_eq!(l2, t);
    run(&mut s, 60);
    take(&s, &l, "transfer-leader", "the leader hands leadership to a named peer (timeout_now) and follows it")
}

fn transfer_target() -> Scenario {
    let mut s = sim(23, 3, |c| c);
    let l = leader(&mut s, 1000);
    run(&mut s, 60);
    let t = other(&s, &[&l]);
    s.call(&l, Input::Transfer(t.clone())).expect("leader transfers");
    leader(&mut s, 200);
    run(&mut s, 60);
    take(
        &s,
        &t,
        "transfer-target",
        "the named peer receives timeout_now, campaigns at once with a transfer vote and wins",
    )
}

fn broadcast() -> Scenario {
    let mut s = sim(24, 3, |c| c);
    let l = leader(&mut s, 1000);
    let f = other(&s, &[&l]);
    s.call(&l, Input::Broadcast(b"from the leader".to_vec())).expect("broadcast");
    run(&mut s, 20);
    s.call(&f, Input::Broadcast(b"from a follower".to_vec())).expect("broadcast");
    s.call(&f, Input::Broadcast(Vec::new())).expect("broadcast");
    run(&mut s, 20);
    take(
        &s,
        &f,
        "broadcast",
        "application payloads: this follower receives the leader's broadcast and broadcasts two of its own",
    )
}

fn join_leave() -> Scenario {
    let mut s = sim(25, 3, |c| c);
    leader(&mut s, 1000);
    s.add_node(Config::new("n4", "scn").bootstrap(["n1", "n2", "n3", "n4"]).durable(true));
    s.call("n1", Input::Join("n4".into())).expect("join");
    s.call("n1", Input::Join("n4".into())).expect("join is idempotent");
    run(&mut s, 200);
    s.crash("n4");
    s.call("n1", Input::Leave("n4".into())).expect("leave");
    for id in ["n2", "n3"] {
        let _ = s.call(id, Input::Leave("n4".into())); // unknown_peer where n4 never wrote
    }
    // Traffic from the removed peer in the sticky window is refused as removed_peer; after it, as
    // unknown_peer: membership is closed, only an explicit join brings it back.
    let bytes = tenure::wire::encode(
        &tenure::wire::Envelope {
            cluster: "scn".into(),
            from: "n4".into(),
            term: 0,
            incarnation: 0,
            message: tenure::wire::Message::PreVote,
        },
        None,
    )
    .expect("encodes");
    assert_eq!(s.inject_message("n1", "n4", bytes.clone()), Err("removed_peer"));
    run(&mut s, 350);
    assert_eq!(s.inject_message("n1", "n4", bytes), Err("unknown_peer"));
    run(&mut s, 30);
    take(&s, "n1", "join-leave", "join (idempotent) admits n4; leave withdraws it: its messages are refused for one election timeout (removed_peer), then as a stranger (unknown_peer)")
}

fn terminated_leader_fast_failover() -> Scenario {
    let mut s = sim(26, 5, |c| c);
    let l = leader(&mut s, 1000);
    run(&mut s, 70);
    s.crash(&l);
    s.report_down(&l, PeerDownReason::Terminated);
    let l2 = leader(&mut s, 1000);
    run(&mut s, 60);
    take(
        &s,
        &l2,
        "terminated-leader-fast-failover",
        "the host reports the leader terminated: it leaves the view and this node campaigns at once",
    )
}

fn ghost_ttl_expiry() -> Scenario {
    let mut s = sim(27, 3, |c| c.ghost_ttl(400));
    let l = leader(&mut s, 1000);
    let f = other(&s, &[&l]);
    s.crash(&f);
    run(&mut s, 30); // let its last datagrams land (they would clear the ghost mark)
    s.call(&l, Input::PeerDown(f.clone(), PeerDownReason::NoConnection)).expect("peer_down");
    run(&mut s, 250);
    assert_eq!(s.node(&l).view_size(), 3, "a ghost keeps its place in the view");
    run(&mut s, 300);
    assert_eq!(s.node(&l).view_size(), 2, "the ghost expired");
    take(&s, &l, "ghost-ttl-expiry", "a peer reported no_connection keeps counting for ghost_ttl, then leaves the view (and the node becomes unclustered)")
}

fn unclustered() -> Scenario {
    let mut s = Sim::new(28, NetConfig::rtt(RTT));
    s.record = true;
    s.add_node(Config::new("n1", "scn").bootstrap(["n2"]).durable(true));
    s.add_node(Config::new("n2", "scn").bootstrap(["n1"]).durable(true));
    run(&mut s, 400);
    assert_eq!(s.role("n1"), Some(Role::Unclustered));
    s.add_node(Config::new("n3", "scn").bootstrap(["n1", "n2"]).durable(true));
    s.call("n1", Input::Join("n3".into())).expect("join");
    s.call("n2", Input::Join("n3".into())).expect("join");
    leader(&mut s, 1500);
    run(&mut s, 60);
    s.crash("n3");
    s.call("n1", Input::Leave("n3".into())).expect("leave");
    run(&mut s, 100);
    assert_eq!(s.role("n1"), Some(Role::Unclustered));
    take(&s, "n1", "unclustered-below-min-cluster-size", "a view of 2 below min_cluster_size 3 stays unclustered, joins make it clustered, a leave makes it unclustered again")
}

fn envelope(cluster: &str, from: &str, term: u64, message: tenure::wire::Message) -> tenure::wire::Envelope {
    tenure::wire::Envelope { cluster: cluster.into(), from: from.into(), term, incarnation: 0, message }
}

fn hostile_input() -> Scenario {
    use tenure::wire::{encode, Message};
    let mut s = sim(29, 3, |c| c);
    leader(&mut s, 1000);
    let good = encode(&envelope("scn", "n2", 0, Message::PreVote), None).expect("encodes");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("n2", vec![], "malformed"),
        ("n2", b"not tenure at all".to_vec(), "malformed"),
        ("n2", vec![0u8; tenure::MAX_MESSAGE_SIZE + 1], "oversized"),
        ("n2", [b"TN\x09\x00".as_slice(), &good[4..]].concat(), "unknown_version"),
        ("n2", encode(&envelope("other-cluster", "n2", 0, Message::PreVote), None).expect("e"), "wrong_cluster"),
        (
            "n2",
            encode(&envelope("scn", "n2", 0, Message::PreVote), Some(tenure::wire::Auth { key: b"k", receiver: "n1" }))
                .expect("e"),
            "bad_mac",
        ),
        ("n3", good.clone(), "sender_mismatch"),
        ("n1", encode(&envelope("scn", "n1", 0, Message::PreVote), None).expect("e"), "from_self"),
        ("n2", [good.as_slice(), &[0]].concat(), "malformed"),
        ("x9", encode(&envelope("scn", "x9", 0, Message::PreVote), None).expect("e"), "unknown_peer"),
        (
            "n2",
            encode(&envelope("scn", "n2", tenure::MAX_TERM - 1, Message::PreVote), None).expect("e"),
            "implausible_term",
        ),
    ];
    for (from, bytes, want) in cases {
        assert_eq!(s.inject_message("n1", from, bytes), Err(want));
    }
    run(&mut s, 60);
    assert_eq!(s.node("n1").inspect().dropped("malformed"), Some(3));
    take(&s, "n1", "hostile-input-dropped", "malformed, oversized, unknown-version, wrong-cluster, bad-MAC, mismatched-sender, from-self, unknown-sender and implausible-term datagrams are dropped and counted; the election goes on")
}

fn authenticated() -> Scenario {
    use tenure::wire::{encode, Message};
    let mut s = sim(30, 3, |c| c.key(b"cluster secret".to_vec()));
    let l = leader(&mut s, 1000);
    let f = other(&s, &[&l]);
    let auth = |key, receiver| Some(tenure::wire::Auth { key, receiver });
    let wrong = encode(&envelope("scn", "intruder", 9, Message::Vote { transfer: false }), auth(b"wrong key", &f))
        .expect("encodes");
    assert_eq!(s.inject_message(&f, "intruder", wrong), Err("bad_mac"));
    let unsigned = encode(&envelope("scn", "intruder", 9, Message::Vote { transfer: false }), None).expect("e");
    assert_eq!(s.inject_message(&f, "intruder", unsigned), Err("bad_mac"));
    // A message the leader made for the third node, with the right key, delivered to `f`.
    let third = other(&s, &[&l, &f]);
    let redirected =
        encode(&envelope("scn", &l, 9, Message::Vote { transfer: false }), auth(b"cluster secret", &third))
            .expect("encodes");
    assert_eq!(s.inject_message(&f, &l, redirected), Err("bad_mac"));
    run(&mut s, 100);
    take(
        &s,
        &f,
        "authenticated-cluster",
        "every message carries an HMAC over its receiver's id too; a message with the wrong key, none, or made for another node is dropped as bad_mac and never counted",
    )
}

fn durable_restart() -> Scenario {
    let mut s = sim(31, 3, |c| c);
    let l = leader(&mut s, 1000);
    let f = other(&s, &[&l]);
    run(&mut s, 40);
    s.crash(&f);
    run(&mut s, 100);
    s.restart(&f, true);
    run(&mut s, 300);
    take(
        &s,
        &f,
        "durable-restart",
        "a follower restarts with its stored term and vote, and follows the leader again in the same term",
    )
}

fn api_errors() -> Scenario {
    let mut s = sim(32, 3, |c| c);
    let l = leader(&mut s, 1000);
    let f = other(&s, &[&l]);
    let long = "x".repeat(tenure::MAX_ID_LEN + 1);
    let (l, f) = (l.as_str(), f.as_str());
    let calls: Vec<(&str, Input, &str)> = vec![
        (f, Input::Join(String::new()), "invalid_peer"),
        (f, Input::Join(long), "invalid_peer"),
        (f, Input::Leave(f.to_string()), "self_peer"),
        (f, Input::Leave("stranger".into()), "unknown_peer"),
        (f, Input::PeerDown("stranger".into(), PeerDownReason::NoConnection), "unknown_peer"),
        (f, Input::Transfer(l.to_string()), "not_leader"),
        (f, Input::Broadcast(vec![7u8; tenure::MAX_MESSAGE_SIZE - 1023]), "payload_too_large"),
        (f, Input::Confirm { term: 1, granted: true }, "no_pending_confirm"),
        (f, Input::LeaderFailed(1), "not_leader_in_term"),
    ];
    for (id, input, want) in calls {
        assert_eq!(s.call(id, input), Err(want));
    }
    let calls: Vec<(&str, Input, &str)> = vec![
        (l, Input::Transfer(l.to_string()), "self_peer"),
        (l, Input::Transfer("stranger".into()), "unknown_peer"),
        (l, Input::LeaderFailed(999), "not_leader_in_term"),
        (l, Input::Confirm { term: 999, granted: true }, "no_pending_confirm"),
    ];
    for (id, input, want) in calls {
        assert_eq!(s.call(id, input), Err(want));
    }
    run(&mut s, 60);
    // The follower's timeline has every error code.
    take(
        &s,
        f,
        "api-errors",
        "host calls the node refuses, each with its stable error code; the node's state is unchanged",
    )
}

/// Three members, each configured with a value of its own: the leader proclaims a new one, then
/// one too long. Returns the simulation, the leader and a follower.
fn value_sim() -> (Sim, String, String) {
    let mut s = sim(33, 3, |c| {
        let v = format!("http://{}.scn:8080", c.id);
        c.value(v)
    });
    let l = leader(&mut s, 1000);
    run(&mut s, 120);
    s.call(&l, Input::Proclaim("http://moved.scn:9090".into())).expect("the leader proclaims");
    run(&mut s, 60);
    let long = "x".repeat(tenure::MAX_VALUE_LEN + 1);
    assert_eq!(s.call(&l, Input::Proclaim(long)), Err("value_too_long"));
    run(&mut s, 60);
    for n in &s.nodes {
        assert_eq!(n.node.as_ref().and_then(|n| n.leader_value()), Some("http://moved.scn:9090"), "{}", n.id);
    }
    let f = other(&s, &[&l]);
    (s, l, f)
}

fn value_proclaimed() -> Scenario {
    let (s, l, _) = value_sim();
    take(
        &s,
        &l,
        "value-proclaimed",
        "the leader sends its configured value until each follower acknowledges it, proclaims a new one (sent at once, acknowledged), and refuses one too long (value_too_long)",
    )
}

fn value_followed() -> Scenario {
    let (s, _, f) = value_sim();
    take(
        &s,
        &f,
        "value-followed",
        "a follower learns the leader's value, acknowledges it, and reports each change as news of the leader (became_follower)",
    )
}

/// n1 of default priority, n2 a witness and n3 of priority 10, started late: n1 (the only one that
/// may campaign) leads, then hands leadership to n3 by a transfer once n3 has answered it steadily
/// for `preempt_after`. Then n3 crashes and n1 leads again; the witness only ever votes.
fn priority_sim() -> Sim {
    let mut s = Sim::new(34, NetConfig::rtt(RTT));
    s.record = true;
    let ids = ["n1", "n2", "n3"];
    let config = |id: &str| Config::new(id, "scn").bootstrap(ids).durable(true).preempt_after(300);
    s.add_node(config("n1"));
    s.add_node(config("n2").never_lead(true));
    assert_eq!(leader(&mut s, 1000), "n1");
    run(&mut s, 100);
    s.add_node(config("n3").priority(10));
    let until = s.now + 1500;
    s.run_until_cond(until, |s| s.leader().as_deref() == Some("n3")).unwrap_or_else(|v| panic!("{v}"));
    assert_eq!(s.leader().as_deref(), Some("n3"), "preempted to the member of higher priority");
    run(&mut s, 100);
    s.crash("n3");
    let until = s.now + 1500;
    s.run_until_cond(until, |s| s.leader().as_deref() == Some("n1")).unwrap_or_else(|v| panic!("{v}"));
    run(&mut s, 60);
    assert_ne!(s.role("n2"), Some(Role::Candidate));
    s
}

fn priority_preempt() -> Scenario {
    take(
        &priority_sim(),
        "n1",
        "priority-preempt",
        "a leader of default priority learns its peers' ranks (Priority), hands leadership to the member of priority 10 by a transfer once it answered steadily for preempt_after, and leads again when that member crashes",
    )
}

fn priority_witness() -> Scenario {
    take(
        &priority_sim(),
        "n2",
        "priority-witness",
        "a witness (never_lead) tells its rank, votes and acknowledges, and never campaigns, not even when the leader it follows crashes",
    )
}

/// Three members listing observer o1: o1 learns the leader, its term and its value from the
/// heartbeats (answering each with Observe), the new value, and after the leader crashes, the
/// next leader.
fn observer_sim() -> (Sim, String) {
    let mut s = Sim::new(35, NetConfig::rtt(RTT));
    s.record = true;
    let ids = ["n1", "n2", "n3"];
    for id in ids {
        let v = format!("http://{id}.scn:8080");
        s.add_node(Config::new(id, "scn").bootstrap(ids).durable(true).value(v).observer_peers(["o1"]));
    }
    s.checker.observers.insert("o1".to_string());
    s.add_node(Config::new("o1", "scn").bootstrap(ids).observer(true));
    let l = leader(&mut s, 1000);
    run(&mut s, 120);
    assert_eq!(s.node("o1").leader(), Some(l.as_str()));
    s.call(&l, Input::Proclaim("http://moved.scn:9090".into())).expect("the leader proclaims");
    run(&mut s, 60);
    assert_eq!(s.node("o1").leader_value(), Some("http://moved.scn:9090"));
    s.crash(&l);
    let until = s.now + 1500;
    s.run_until_cond(until, |s| s.leader().is_some_and(|n| n != l)).unwrap_or_else(|v| panic!("{v}"));
    run(&mut s, 120);
    let l2 = s.leader().expect("a new leader");
    assert_eq!(s.node("o1").leader(), Some(l2.as_str()), "the observer follows the new leader");
    assert_eq!(s.node("o1").leader_value(), Some(format!("http://{l2}.scn:8080").as_str()));
    assert!(s.node("o1").is_observer());
    (s, l)
}

fn observer_follows() -> Scenario {
    let (s, _) = observer_sim();
    take(
        &s,
        "o1",
        "observer-follows",
        "an observer learns the leader and its term from heartbeats (answering each with Observe), the leader's value and a new one, and after the leader crashes the next leader and its value; it never votes",
    )
}

fn observer_informed() -> Scenario {
    let (s, l) = observer_sim();
    take(
        &s,
        &l,
        "observer-informed",
        "a leader that lists an observer sends it its heartbeats and its value, and its Observe answers change no term, vote or quorum",
    )
}

fn death_notice_failover() -> Scenario {
    let mut s = sim(36, 3, |c| c);
    s.watchdogs = true;
    let l = leader(&mut s, 1000);
    run(&mut s, 70);
    s.crash(&l);
    let l2 = leader(&mut s, 1000);
    run(&mut s, 60);
    take(
        &s,
        &l2,
        "death-notice-failover",
        "the leader's watchdog sends its death notice when it dies: this follower releases its promise to it and campaigns at once",
    )
}
