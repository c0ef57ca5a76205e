//! Randomised runs outside S1's scope (membership changes, restarts without durable state): each
//! side elects only with a majority of its own view (S1-view, checked at every step) and after
//! healing the cluster converges to one leader (L1). The bulk of the seeds run in `make test`
//! through the release CLI; this keeps a few in `cargo test`, and pins a known core issue.

use tenure_sim::random::{run_seed, Fault, RunOptions};

fn all_faults(durable: bool) -> RunOptions {
    RunOptions { faults: Fault::parse_list("all").unwrap(), durable, verbose_log: false, ..RunOptions::default() }
}

#[test]
fn out_of_scope_runs_keep_s1_view_and_converge() {
    for seed in 1_000_000..1_000_100 {
        if let Some(v) = run_seed(seed, &all_faults(true)).violation {
            panic!("{v}");
        }
    }
}

/// Out of scope, two nodes can lead the same term (after members are removed and come back, or a
/// restart without durable state). They used to never resolve it (each ignored the other's
/// heartbeats and followers flipped between them); now the leader with the greater id yields at
/// the other's first heartbeat. Seeds 1001316 and 3002534 (`--no-durable`) showed the old bug.
#[test]
fn same_term_leaders_after_member_removal_converge() {
    for (seed, durable) in [(1_001_316, true), (3_002_534, false)] {
        if let Some(v) = run_seed(seed, &all_faults(durable)).violation {
            panic!("{v}");
        }
    }
}

/// Every node down when the network becomes stable: what the chaos phase left in flight (here a
/// replay of a heartbeat acknowledgement of term 6, queued to land 500 ms later) must still arrive
/// within one one-way latency of the stable point or not at all. These seeds' replays used to land
/// on nodes restarted without durable state (terms back to 0) after a new leader of term 1 had
/// settled, and deposed it in the stable network (L1). Since wire version 4 (greetings) these seeds
/// take other schedules and no longer reach the case; the seedless test below pins it.
#[test]
fn nothing_from_the_chaos_phase_lands_late_when_every_node_was_down_at_the_stable_point() {
    for seed in [500_013_603, 500_025_718] {
        if let Some(v) = run_seed(seed, &all_faults(false)).violation {
            panic!("{v}");
        }
    }
}

fn variant(faults: &str) -> RunOptions {
    RunOptions { faults: Fault::parse_list(faults).unwrap(), verbose_log: false, ..RunOptions::default() }
}

fn clean(opts: &RunOptions, seeds: std::ops::Range<u64>) {
    for seed in seeds {
        if let Some(v) = run_seed(seed, opts).violation {
            panic!("{v}");
        }
    }
}

/// Strangers (undeclared ids) writing to a closed cluster, through the chaos and the
/// stable phase, and a fake voter granting every vote: dropped (`unknown_peer`), 0 violations,
/// and the stable leader is never lost (L1).
#[test]
fn strangers_and_a_fake_voter_change_nothing_in_a_closed_cluster() {
    clean(&variant("fakeids,fakevoter,partition,crash"), 5_000_000..5_000_200);
}

/// Near-maximum terms (and terms just past the plausible jump) under a member's id:
/// the cluster re-elects within the L1 bounds and every invariant holds.
#[test]
fn near_maximum_terms_do_not_stop_elections() {
    clean(&variant("hugeterm,crash,partition"), 5_100_000..5_100_200);
}

/// A recorder replaying any recorded datagram at random later times (and, after the
/// leader's crash, its last datagram of each kind — heartbeats, vote requests — to each receiver
/// every 20–150 ms) and duplicates delivered up to 10 s late: every invariant holds and the
/// failover stays within the L1 bound.
#[test]
fn replays_and_very_late_duplicates_change_nothing() {
    clean(&variant("replay,latedup,crash,partition"), 5_200_000..5_200_200);
}

/// Crash points between a node's outputs (a `Persist` carried out, the sends after
/// it lost), clocks drifting within ±ρ, and false `no_connection` reports (S1 stays checked
/// until a ghost actually expires).
#[test]
fn crash_points_drift_and_false_reports_keep_the_invariants() {
    clean(&variant("crash,drift,falsedown,pause"), 5_300_000..5_300_200);
}

/// Observers beside a cluster under every fault (and mixed wire versions): no observer ever
/// leads, votes, sends anything but `Observe` or enters a view, and once the network is stable
/// every observer follows the leader (L1, checked with the members).
#[test]
fn observers_never_count_and_follow_the_leader() {
    clean(&RunOptions { observers: 2, ..variant("all,notice") }, 5_400_000..5_400_150);
    clean(&RunOptions { observers: 1, ..variant("versions,notice,crash,pause,partition,loss") }, 5_500_000..5_500_150);
}

/// The same case without a seed (schedules change with the core): every node is down at the
/// stable point, and a genuine heartbeat of term 6 is still due a second later. It must arrive
/// within one one-way latency of the stable point — here at restarted nodes still at term 0 —
/// not a second later, when a new leader may have settled.
#[test]
fn the_stable_point_caps_what_is_in_flight_when_every_node_is_down() {
    use tenure::wire::{encode, Envelope, Message};
    use tenure_sim::sim::{NetConfig, Sim};
    let mut sim = Sim::cluster(7, 3, NetConfig::rtt(2), |c| c.durable(false));
    sim.run_until(10).expect("no violation");
    let env = Envelope {
        cluster: sim.nodes[0].config.cluster.clone(),
        from: "n1".into(),
        term: 6,
        incarnation: sim.last_sent.get("n1").map_or(0, |s| s.0),
        message: Message::Heartbeat { sent_at: 0 },
    };
    let bytes = encode(&env, None).expect("encodes");
    sim.inject_later(1000, "n1", "n2", bytes);
    for id in ["n1", "n2", "n3"] {
        sim.crash(id);
    }
    let max_one_way = sim.net.max_one_way();
    sim.stabilise_in_flight(max_one_way);
    for id in ["n1", "n2", "n3"] {
        sim.restart(id, false);
    }
    let t = sim.now + max_one_way;
    sim.run_until(t).expect("no violation");
    assert_eq!(sim.node("n2").term(), 6, "the heartbeat of term 6 did not arrive by the stable point + one_way");
}

/// A false `no_connection` report about a follower, made by another follower during the chaos,
/// whose messages that follower then drops (an implausible term) until the network is stable:
/// with a steady leader the two followers send each other nothing, so the ghost expired in the
/// stable phase, and when the leader crashed the survivors were no quorum together (L1). Hosts
/// take back their false reports (`join`) once the network is stable; seed 100054726 of the
/// 3-node, 20 ms variant showed it in a 1,000,000-seed soak.
#[test]
fn a_false_no_connection_report_taken_back_keeps_two_followers_a_quorum() {
    let opts = RunOptions { nodes: 3, rtt_ms: 20, verbose_log: false, ..RunOptions::default() };
    if let Some(v) = run_seed(100_054_726, &opts).violation {
        panic!("{v}");
    }
}

/// With priorities in a cluster of mixed versions, a late datagram of a restarted member's earlier
/// run made another member answer it; the new run took that answer for an answer to its own
/// `Priority` and never told its rank again, so the leader never preempted to it (L1, seed
/// 2600002479 of the priority-mixed-versions variant in a 1,000,000-seed soak). A member that
/// knows a rank from an earlier run now asks the new run.
#[test]
fn a_rank_learned_from_an_earlier_run_is_asked_of_the_new_run() {
    let faults = "priority,versions,crash,pause,partition,loss,dup,reorder,transfer,replay";
    if let Some(v) = run_seed(2_600_002_479, &variant(faults)).violation {
        panic!("{v}");
    }
}
