//! A rolling stop: stop a follower, then at once the leader. The leader must hand over to the
//! node still running, not to the one stopped a moment before (which cost an election timeout of
//! leaderlessness: the stopped target never campaigned).

mod common;

use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use common::{loopback_ids as ids, spawn_all};
use tenure_runtime::{RuntimeConfig, RuntimeEvent};

#[test]
fn the_leader_hands_over_to_the_node_still_running() {
    for round in 0..2 {
        let all = ids(3);
        let (tx, rx) = channel();
        // min_cluster_size 2: two nodes are still a cluster after the first stop.
        // Slow heartbeats: no round falls between choosing the victim and the two stops, so the
        // victim is the peer the leader heard from last when it stops.
        let configs = all.iter().map(|id| {
            let node = tenure::Config::new(id.as_str(), "rolling")
                .bootstrap(all.iter().cloned())
                .min_cluster_size(2)
                .heartbeat_interval(200)
                .election_timeout_min(1000);
            RuntimeConfig::new(node).log(false)
        });
        let handles = spawn_all(configs, &tx);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !handles.iter().any(|h| h.is_leader() && h.lease_deadline().is_some()) {
            assert!(Instant::now() < deadline, "no leader");
            std::thread::sleep(Duration::from_millis(5));
        }
        // Let every follower acknowledge a few heartbeats (each is a fresh answerer), then act
        // just after a round.
        std::thread::sleep(Duration::from_millis(500));
        let leader = handles.iter().find(|h| h.is_leader()).unwrap();
        let last = leader.inspect().unwrap().heartbeat_out_last;
        while leader.inspect().unwrap().heartbeat_out_last == last {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        let leader = handles.iter().find(|h| h.is_leader()).unwrap();
        // The follower the leader heard from last: the one a freshness rule alone would pick.
        // (Ties go to the smaller id, as in the core's choice.)
        let heard = leader.inspect().unwrap().peer_heard_at;
        let victim_id = heard.iter().max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0))).unwrap().0.clone();
        let victim = handles.iter().find(|h| h.id() == victim_id).unwrap();
        let survivor = handles.iter().find(|h| h.id() != victim_id && !h.is_leader()).unwrap();
        victim.stop();
        let stopped_at = Instant::now();
        leader.stop();
        let mut took = None;
        let deadline = Instant::now() + Duration::from_secs(5);
        while took.is_none() {
            let (id, at, e) =
                rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("no new leader");
            match e {
                RuntimeEvent::Warning { code, message } if code == "handover_timeout" => {
                    panic!("round {round}: {id}: {message}")
                }
                RuntimeEvent::Leader { .. } if id == survivor.id() && at >= stopped_at => took = Some(at - stopped_at),
                _ => {}
            }
        }
        // A handover costs about one round trip; a missed one, the handover timeout and an
        // election timeout (seconds here).
        assert!(took.unwrap() < Duration::from_millis(100), "round {round}: leaderless for {took:?}");
        survivor.stop();
    }
}
