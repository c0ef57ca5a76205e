//! The library API in one process: three runtimes over loopback UDP, their handles, typed errors
//! at `spawn`, deferred confirmations, graceful stop and a fatal state-file failure.

use std::net::UdpSocket;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use tenure_runtime::{
    native, spawn, Confirm, FailurePolicy, Handle, Handler, LeaderWorkVerdict, RuntimeConfig, RuntimeError,
    RuntimeEvent,
};

fn free_ports(n: usize) -> Vec<u16> {
    let sockets: Vec<UdpSocket> = (0..n).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
    sockets.iter().map(|s| s.local_addr().unwrap().port()).collect()
}

fn ids(n: usize) -> Vec<String> {
    free_ports(n).into_iter().map(|p| format!("127.0.0.1:{p}")).collect()
}

fn config(id: &str, all: &[String]) -> RuntimeConfig {
    let node = tenure::Config::new(id, "api-test").bootstrap(all.iter().cloned());
    RuntimeConfig::new(node).log(false)
}

/// Events of every node, tagged with the node's id.
fn forward(id: &str, tx: &Sender<(String, RuntimeEvent)>) -> impl FnMut(RuntimeEvent) + Send + 'static {
    let (id, tx) = (id.to_string(), tx.clone());
    move |e| {
        let _ = tx.send((id.clone(), e));
    }
}

#[track_caller]
fn wait_for(
    rx: &Receiver<(String, RuntimeEvent)>,
    limit: Duration,
    mut pred: impl FnMut(&str, &RuntimeEvent) -> bool,
) -> (String, RuntimeEvent) {
    let deadline = Instant::now() + limit;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((id, e)) if pred(&id, &e) => return (id, e),
            Ok((id, e)) => seen.push(format!("{id}: {e:?}")),
            Err(_) => panic!("timed out waiting for an event; seen: {seen:#?}"),
        }
    }
}

fn leader_of(handles: &[Handle]) -> Option<&Handle> {
    handles.iter().find(|h| h.is_leader())
}

#[test]
fn handles_and_errors_cross_threads() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<Handle>();
    send_sync::<RuntimeError>();
    send_sync::<RuntimeEvent>();
}

#[test]
fn three_runtimes_elect_transfer_broadcast_inspect_and_stop() {
    let all = ids(3);
    let (tx, rx) = channel();
    let handles: Vec<Handle> =
        all.iter().map(|id| spawn(config(id, &all), native, forward(id, &tx)).unwrap()).collect();
    let (first, e) = wait_for(&rx, Duration::from_secs(10), |_, e| matches!(e, RuntimeEvent::Leader { .. }));
    let RuntimeEvent::Leader { term, .. } = e else { unreachable!() };
    let leader = handles.iter().find(|h| h.id() == first).unwrap();
    // Snapshots follow the events.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !(leader.is_leader() && leader.lease_deadline().is_some()) {
        assert!(Instant::now() < deadline, "no lease on the leader's handle");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(leader.term(), term);
    assert_eq!(leader.leader().as_deref(), Some(first.as_str()));
    assert!(leader.lease_deadline_ms().unwrap() > 0);
    let state = leader.inspect().unwrap();
    assert_eq!(state.state, "leader");
    assert_eq!(state.view_size, 3);

    // A follower cannot transfer; the leader hands over to the peer heard from most recently.
    let follower = handles.iter().find(|h| h.id() != first).unwrap();
    let err = follower.transfer(None).unwrap_err();
    assert_eq!(err.code(), "not_leader");
    assert_eq!(leader.transfer(Some("127.0.0.1:1")).unwrap_err().code(), "unknown_peer");
    leader.transfer(None).unwrap();
    let (second, _) = wait_for(&rx, Duration::from_secs(5), |id, e| {
        matches!(e, RuntimeEvent::Leader { term: t, .. } if *t > term) && id != first
    });

    // Broadcast reaches both other members.
    let sender = handles.iter().find(|h| h.id() == second).unwrap();
    sender.broadcast(b"hello").unwrap();
    let mut got = Vec::new();
    while got.len() < 2 {
        let (id, e) = wait_for(&rx, Duration::from_secs(5), |_, e| matches!(e, RuntimeEvent::Message { .. }));
        let RuntimeEvent::Message { from, payload } = e else { unreachable!() };
        assert_eq!((from.as_str(), payload.as_slice()), (second.as_str(), &b"hello"[..]));
        got.push(id);
    }
    assert!(!got.contains(&second));

    // Graceful stop of the leader: hands over, then Stopped; idempotent; commands refused after.
    sender.stop();
    assert!(!sender.is_running());
    sender.stop();
    assert_eq!(sender.inspect().unwrap_err(), RuntimeError::Stopped);
    assert_eq!(sender.broadcast(b"x").unwrap_err().code(), "stopped");
    wait_for(&rx, Duration::from_secs(5), |id, e| matches!(e, RuntimeEvent::Leader { .. }) && id != second);
    for h in &handles {
        h.stop();
    }
    assert!(leader_of(&handles).is_none());
}

#[test]
fn bad_inputs_fail_at_spawn_with_typed_errors() {
    let all = ids(3);
    let try_spawn = |c: RuntimeConfig| spawn(c, native, |_| {}).map(|h| h.stop()).unwrap_err();
    let e = try_spawn(config("127.0.0.1", &all));
    assert_eq!(e.code(), "invalid_id");
    assert!(e.to_string().contains("\"127.0.0.1\""), "{e}");
    let e = try_spawn(config("0.0.0.0:7000", &all));
    assert!(e.to_string().contains("--bind"), "{e}");
    let e = try_spawn(config(&all[0], &["127.0.0.1:0".to_string()]));
    assert_eq!(e.code(), "invalid_peer");
    assert!(e.to_string().contains("127.0.0.1:0"), "{e}");
    let e = try_spawn(config(&all[0], &["10.0.0.1:65536".to_string()]));
    assert!(e.to_string().contains("65535"), "{e}");
    let e = try_spawn(config(&all[0], &all).bind("not-an-ip"));
    assert_eq!(e.code(), "invalid_bind");
    let mut c = config(&all[0], &all);
    c.node.election_timeout_min = Some(500);
    c.node.election_timeout_max = Some(400);
    assert_eq!(try_spawn(c).code(), "min_above_max");
    let mut c = config(&all[0], &all);
    c.node.durable = true;
    assert_eq!(try_spawn(c).code(), "invalid_option");
    let e = try_spawn(config(&all[0], &all).key_file("/nonexistent/key"));
    assert_eq!(e.code(), "key_file");

    // Address in use, and nothing half-started: the state file is not left locked.
    let dir = tempfile::tempdir().unwrap();
    let taken = UdpSocket::bind(&all[0]).unwrap();
    let e = try_spawn(config(&all[0], &all).state_file(dir.path().join("s.json")));
    assert_eq!(e.code(), "address_in_use");
    drop(taken);
    let h = spawn(config(&all[0], &all).state_file(dir.path().join("s.json")), native, |_| {}).unwrap();
    // Two runtimes can never share a state file.
    let e = try_spawn(config(&all[1], &all).state_file(dir.path().join("s.json")));
    assert_eq!(e.code(), "state_locked");
    // Released as soon as stop() returns.
    h.stop();
    spawn(config(&all[1], &all).state_file(dir.path().join("s.json")), native, |_| {}).unwrap().stop();
    let e = try_spawn(config(&all[1], &all).state_file(dir.path().join("missing").join("s.json")));
    assert_eq!(e.code(), "state_dir_missing");
}

/// A handler that defers confirmation and never answers.
struct NeverAnswers(Sender<(String, RuntimeEvent)>, String);

impl Handler for NeverAnswers {
    fn on_event(&mut self, event: RuntimeEvent) {
        let _ = self.0.send((self.1.clone(), event));
    }
    fn confirm_leader(&mut self, term: u64) -> Confirm {
        let _ =
            self.0.send((self.1.clone(), RuntimeEvent::Warning { code: "asked".into(), message: term.to_string() }));
        Confirm::Defer
    }
}

#[test]
fn an_unanswered_confirmation_is_denied_after_the_confirm_timeout() {
    let all = ids(3);
    let (tx, rx) = channel();
    let handles: Vec<Handle> = all
        .iter()
        .map(|id| {
            let c = config(id, &all).confirm_timeout(Duration::from_millis(30));
            spawn(c, native, NeverAnswers(tx.clone(), id.clone())).unwrap()
        })
        .collect();
    wait_for(&rx, Duration::from_secs(10), |_, e| matches!(e, RuntimeEvent::Warning { code, .. } if code == "asked"));
    wait_for(
        &rx,
        Duration::from_secs(10),
        |_, e| matches!(e, RuntimeEvent::Warning { code, .. } if code == "confirm_timeout"),
    );
    assert!(leader_of(&handles).is_none());
    // Answering by hand publishes leadership.
    let (id, e) = wait_for(
        &rx,
        Duration::from_secs(10),
        |_, e| matches!(e, RuntimeEvent::Warning { code, .. } if code == "asked"),
    );
    let RuntimeEvent::Warning { message, .. } = e else { unreachable!() };
    let h = handles.iter().find(|h| h.id() == id).unwrap();
    let term: u64 = message.parse().unwrap();
    if h.confirm_leader(term, true).is_ok() {
        wait_for(&rx, Duration::from_secs(5), |i, e| i == id && matches!(e, RuntimeEvent::Leader { .. }));
    }
    for h in &handles {
        h.stop();
    }
}

#[test]
fn an_unwritable_state_file_is_fatal_and_reported() {
    let all = ids(3);
    let (tx, rx) = channel();
    let dirs: Vec<_> = all.iter().map(|_| tempfile::tempdir().unwrap()).collect();
    let handles: Vec<Handle> = all
        .iter()
        .zip(&dirs)
        .map(|(id, d)| spawn(config(id, &all).state_file(d.path().join("s.json")), native, forward(id, &tx)).unwrap())
        .collect();
    // Make every state file's directory disappear: the next persist (a vote) cannot be durable.
    for d in &dirs {
        std::fs::remove_dir_all(d.path()).unwrap();
    }
    let (id, e) = wait_for(&rx, Duration::from_secs(10), |_, e| matches!(e, RuntimeEvent::Fatal { .. }));
    let RuntimeEvent::Fatal { error } = e else { unreachable!() };
    assert_eq!(error.code(), "state_unwritable");
    wait_for(&rx, Duration::from_secs(5), |i, e| i == id && matches!(e, RuntimeEvent::Stopped { .. }));
    let h = handles.iter().find(|h| h.id() == id).unwrap();
    h.wait();
    assert_eq!(h.fatal_error().map(|e| e.code()), Some("state_unwritable"));
    for h in &handles {
        h.stop();
    }
}

#[test]
fn handles_called_from_the_handler_do_not_deadlock() {
    let all = ids(3);
    let (tx, rx) = channel();
    let slot: std::sync::Arc<std::sync::OnceLock<Handle>> = Default::default();
    let s = slot.clone();
    let t = tx.clone();
    let me = all[0].clone();
    let handler = move |e: RuntimeEvent| {
        if let (RuntimeEvent::Leader { .. }, Some(h)) = (&e, s.get()) {
            // Queued, carried out right after this handler returns.
            assert!(h.broadcast(b"from the handler").is_ok());
            assert_eq!(h.inspect().unwrap_err().code(), "on_runtime_thread");
            h.stop();
        }
        let _ = t.send((me.clone(), e));
    };
    let h0 = spawn(config(&all[0], &all).election_timeout_min(60), native, handler).unwrap();
    let _ = slot.set(h0.clone());
    let others: Vec<Handle> =
        all[1..].iter().map(|id| spawn(config(id, &all), native, forward(id, &tx)).unwrap()).collect();
    // Whoever leads first, node 0 eventually stops (by itself, from its handler) or keeps following.
    let deadline = Instant::now() + Duration::from_secs(10);
    while h0.is_running() && Instant::now() < deadline {
        if others.iter().any(|h| h.is_leader()) {
            let l = others.iter().find(|h| h.is_leader()).unwrap();
            let _ = l.transfer(Some(&all[0]));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!h0.is_running(), "node 0 never led and stopped itself");
    wait_for(&rx, Duration::from_secs(5), |id, e| {
        id != all[0] && matches!(e, RuntimeEvent::Message { payload, .. } if payload == b"from the handler")
    });
    for h in others {
        h.stop();
    }
}

trait ShortTimeouts {
    fn election_timeout_min(self, ms: u64) -> Self;
}

impl ShortTimeouts for RuntimeConfig {
    fn election_timeout_min(mut self, ms: u64) -> Self {
        self.node.election_timeout_min = Some(ms);
        self.node.heartbeat_interval = ms / 4;
        self
    }
}

/// The failure policy is the runtime's: retries with backoff within a leadership, a step-down
/// (warning `leader_work_failed`) after `max_failures`, and, with a limit the user set, a stop
/// (`Fatal` with `leader_work_failed`, then `Stopped`) after `max_step_downs` failed leaderships
/// in a row.
#[test]
fn the_failure_policy_retries_steps_down_then_stops_the_node_at_a_user_limit() {
    let id = ids(1).remove(0);
    let (tx, rx) = channel();
    let policy = FailurePolicy::new(2).limit(2).backoff(Duration::from_millis(10), Duration::from_millis(40));
    let mut c = config(&id, &[]).failure_policy(policy);
    c.node.min_cluster_size = 1;
    let h = spawn(c, native, forward(&id, &tx)).unwrap();
    let (_, e) = wait_for(&rx, Duration::from_secs(10), |_, e| matches!(e, RuntimeEvent::Leader { .. }));
    let RuntimeEvent::Leader { term, .. } = e else { unreachable!() };
    assert_eq!(h.leader_work_failed(term).unwrap(), LeaderWorkVerdict::Retry { after: Duration::from_millis(10) });
    assert_eq!(h.leader_work_failed(term).unwrap(), LeaderWorkVerdict::SteppedDown);
    // Reported again for the same leadership (two tasks failing): not counted twice.
    assert_eq!(h.leader_work_failed(term).unwrap(), LeaderWorkVerdict::SteppedDown);
    wait_for(
        &rx,
        Duration::from_secs(5),
        |_, e| matches!(e, RuntimeEvent::Warning { code, .. } if code == "leader_work_failed"),
    );
    let (_, e) = wait_for(&rx, Duration::from_secs(10), |_, e| matches!(e, RuntimeEvent::Leader { .. }));
    let RuntimeEvent::Leader { term: second, .. } = e else { unreachable!() };
    assert!(second > term);
    assert_eq!(h.leadership_failed(second).unwrap(), LeaderWorkVerdict::Stopping);
    let (_, e) = wait_for(&rx, Duration::from_secs(5), |_, e| matches!(e, RuntimeEvent::Fatal { .. }));
    let RuntimeEvent::Fatal { error } = e else { unreachable!() };
    assert_eq!(error, RuntimeError::LeaderWorkFailed { leaderships: 2, term: second });
    wait_for(&rx, Duration::from_secs(5), |_, e| matches!(e, RuntimeEvent::Stopped { .. }));
    h.wait();
    assert_eq!(h.fatal_error().map(|e| e.code()), Some("leader_work_failed"));
    assert!(config(&id, &[]).failure_policy(FailurePolicy::new(0)).validate().is_err());
    assert!(config(&id, &[]).failure_policy(FailurePolicy::new(1).limit(0)).validate().is_err());
}

/// Leader work that always fails (a dependency outage) with the default policy: the cluster never
/// stops. Each failed leader hands over and campaigns last, so the next leader is another member;
/// every `Leader` event comes with a lease that holds; the metrics count the failures.
#[test]
fn work_failing_everywhere_never_stops_the_cluster_by_default() {
    let all = ids(3);
    let (tx, rx) = channel();
    let handles: Vec<Handle> = all
        .iter()
        .map(|id| spawn(config(id, &all).election_timeout_min(100), native, forward(id, &tx)).unwrap())
        .collect();
    let by_id = |id: &str| handles.iter().find(|h| h.id() == id).unwrap().clone();
    let mut leaders: Vec<(String, u64)> = Vec::new();
    let started = Instant::now();
    while leaders.len() < 6 {
        let (id, e) = wait_for(&rx, Duration::from_secs(15), |_, e| matches!(e, RuntimeEvent::Leader { .. }));
        let RuntimeEvent::Leader { term, .. } = e else { unreachable!() };
        let h = by_id(&id);
        assert!(h.lease_valid(term), "the Leader event of term {term} came before the lease held");
        assert!(h.lease_remaining_ms().is_some_and(|r| r > 0));
        assert!(!h.lease_valid(term + 1));
        assert_eq!(h.leadership_failed(term).unwrap(), LeaderWorkVerdict::SteppedDown);
        leaders.push((id, term));
    }
    for pair in leaders.windows(2) {
        assert_ne!(pair[0].0, pair[1].0, "a failed leader led again while another member could: {leaders:?}");
    }
    assert!(started.elapsed() < Duration::from_secs(12), "hand-overs took {:?}", started.elapsed());
    for h in &handles {
        assert!(h.is_running(), "{} stopped", h.id());
        assert!(h.fatal_error().is_none());
    }
    let step_downs: u64 = handles.iter().map(|h| h.metrics().leader_work_step_downs).sum();
    let failures: u64 = handles.iter().map(|h| h.metrics().leader_work_failures).sum();
    assert_eq!((step_downs, failures), (6, 6));
    // The work succeeds again: the cluster settles on one leader by itself.
    let (id, _) = wait_for(&rx, Duration::from_secs(15), |_, e| matches!(e, RuntimeEvent::Leader { .. }));
    std::thread::sleep(Duration::from_millis(600));
    assert!(by_id(&id).is_leader(), "the recovered leader did not keep leadership");
    for h in &handles {
        h.stop();
    }
}

/// A node whose work failed campaigns last: even handed leadership explicitly, it declines while
/// another member can lead (the third one leads instead).
#[test]
fn a_failed_leader_campaigns_last() {
    let all = ids(3);
    let (tx, rx) = channel();
    let handles: Vec<Handle> =
        all.iter().map(|id| spawn(config(id, &all), native, forward(id, &tx)).unwrap()).collect();
    let by_id = |id: &str| handles.iter().find(|h| h.id() == id).unwrap().clone();
    let (failed, e) = wait_for(&rx, Duration::from_secs(10), |_, e| matches!(e, RuntimeEvent::Leader { .. }));
    let RuntimeEvent::Leader { term, .. } = e else { unreachable!() };
    assert_eq!(by_id(&failed).leadership_failed(term).unwrap(), LeaderWorkVerdict::SteppedDown);
    let (next, _) = wait_for(&rx, Duration::from_secs(10), |_, e| matches!(e, RuntimeEvent::Leader { .. }));
    assert_ne!(next, failed);
    by_id(&next).transfer(Some(&failed)).unwrap();
    // The held node does not take the transfer; whoever campaigns first after it wins. That is
    // usually the third node, but the transferring leader may win again (it campaigns after one
    // `election_timeout_max`, and a loaded machine can delay the third node's timer past that).
    let (third, _) = wait_for(&rx, Duration::from_secs(10), |_, e| matches!(e, RuntimeEvent::Leader { .. }));
    assert_ne!(third, failed, "{third} led after the transfer to the held {failed}");
    for h in &handles {
        h.stop();
    }
}

#[test]
fn failed_leader_work_steps_down_and_stop_is_safe_from_many_threads() {
    let all = ids(3);
    let (tx, rx) = channel();
    let handles: Vec<Handle> =
        all.iter().map(|id| spawn(config(id, &all), native, forward(id, &tx)).unwrap()).collect();
    let (first, e) = wait_for(&rx, Duration::from_secs(10), |_, e| matches!(e, RuntimeEvent::Leader { .. }));
    let RuntimeEvent::Leader { term, .. } = e else { unreachable!() };
    let leader = handles.iter().find(|h| h.id() == first).unwrap();
    assert_eq!(leader.leader_work_failed(term + 1).unwrap_err().code(), "not_leader_in_term");
    assert_eq!(leader.leadership_failed(term).unwrap(), LeaderWorkVerdict::SteppedDown);
    // It follows, and the cluster elects again in a later term (the failed node backs off
    // first). The two events come from different nodes, in either order.
    let (mut followed, mut elected) = (false, false);
    while !(followed && elected) {
        let (id, e) = wait_for(&rx, Duration::from_secs(10), |id, e| {
            (id == first && matches!(e, RuntimeEvent::Follower { .. }))
                || matches!(e, RuntimeEvent::Leader { term: t, .. } if *t > term)
        });
        followed |= id == first && matches!(e, RuntimeEvent::Follower { .. });
        elected |= matches!(e, RuntimeEvent::Leader { term: t, .. } if t > term);
    }
    assert!(!leader.is_leader());

    // Every handle stopped from several threads at once: each call returns after the end.
    let threads: Vec<_> = (0..4)
        .flat_map(|_| handles.iter().cloned())
        .map(|h| {
            std::thread::spawn(move || {
                h.stop();
                assert!(!h.is_running());
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut stopped = 0;
    while let Ok((_, e)) = rx.recv_timeout(Duration::from_millis(200)) {
        stopped += usize::from(matches!(e, RuntimeEvent::Stopped { .. }));
    }
    assert_eq!(stopped, 3, "one Stopped per runtime");
}

#[test]
fn a_declared_peer_whose_ghost_expired_is_declared_again_when_heard_from() {
    let all = ids(4);
    let (tx, rx) = channel();
    let start = |id: &String| {
        let mut c = config(id, &all);
        c.node.ghost_ttl = 200;
        spawn(c, native, forward(id, &tx)).unwrap()
    };
    // Node 3 is declared everywhere but not running yet.
    let mut handles: Vec<Handle> = all[..3].iter().map(start).collect();
    // Node 0 is told node 3 is unreachable (as after failed sends): a ghost for 200 ms, then gone.
    handles[0].peer_down(&all[3], tenure::PeerDownReason::NoConnection).unwrap();
    wait_for(&rx, Duration::from_secs(5), |id, e| {
        id == all[0] && matches!(e, RuntimeEvent::PeerLeft { peer } if *peer == all[3])
    });
    assert_eq!(handles[0].inspect().unwrap().view_size, 3);
    // Node 3 starts and talks to node 0 (a follower hears from a follower only when it has
    // something to say: a broadcast here): the runtime declares it again.
    handles.push(start(&all[3]));
    handles[3].broadcast(b"back").unwrap();
    wait_for(&rx, Duration::from_secs(5), |id, e| {
        id == all[0] && matches!(e, RuntimeEvent::PeerJoined { peer } if *peer == all[3])
    });
    assert_eq!(handles[0].inspect().unwrap().view_size, 4);
    for h in &handles {
        h.stop();
    }
}

/// One refused report about a leader that is in fact alive (a transient error, a
/// confused host) changes nothing visible: no event on any node, the same leader and term,
/// because the leader's next heartbeat arrives before the follower may campaign.
#[test]
fn a_refused_report_about_a_live_leader_changes_nothing_visible() {
    let all = ids(3);
    let (tx, rx) = channel();
    let handles: Vec<Handle> =
        all.iter().map(|id| spawn(config(id, &all), native, forward(id, &tx)).unwrap()).collect();
    wait_for(&rx, Duration::from_secs(5), |_, e| matches!(e, RuntimeEvent::Leader { .. }));
    let leader = leader_of(&handles).expect("a leader").id().to_string();
    // Let both followers learn the leader, then drain what was said so far.
    std::thread::sleep(Duration::from_millis(300));
    let term = leader_of(&handles).expect("a leader").term();
    while rx.try_recv().is_ok() {}
    let follower = handles.iter().find(|h| h.id() != leader).unwrap();
    follower.peer_down(&leader, tenure::PeerDownReason::Refused).unwrap();
    std::thread::sleep(Duration::from_millis(1_000));
    let said: Vec<(String, RuntimeEvent)> = rx.try_iter().collect();
    let visible: Vec<_> = said
        .iter()
        .filter(|(_, e)| {
            matches!(e, RuntimeEvent::Leader { .. } | RuntimeEvent::Follower { .. } | RuntimeEvent::Warning { .. })
        })
        .collect();
    assert!(visible.is_empty(), "{visible:#?}");
    assert_eq!(leader_of(&handles).map(|h| h.id().to_string()), Some(leader));
    assert!(handles.iter().all(|h| h.term() == term));
    for h in &handles {
        h.stop();
    }
}
