//! Failure detection from the socket reaches the core for the watched leader only: a leader whose
//! follower's port is closed gets an ICMP port-unreachable for every heartbeat it sends there, and
//! none of them may become a `peer_down(.., refused)` call on the engine (the core acts on a
//! refusal only from the leader a follower listens to; the rest is noise on every heartbeat).
//! The engine here is the native node behind a wrapper that records `peer_down` calls.

use std::net::UdpSocket;
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tenure::{DropReason, Error, Inspect, Node, Output, PeerDownReason, Role};
use tenure_runtime::{native, spawn, Engine, EngineInit, RuntimeConfig, RuntimeError, RuntimeEvent};

type Calls = Arc<Mutex<Vec<(String, PeerDownReason)>>>;

/// The native node, with every `peer_down` call recorded.
struct Recording {
    node: Node,
    calls: Calls,
}

impl Engine for Recording {
    fn handle_message(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
        self.node.handle_message(now, from, bytes)
    }
    fn handle_timeout(&mut self, now: u64) {
        self.node.handle_timeout(now)
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.node.poll_output()
    }
    fn poll_timeout(&mut self) -> Option<u64> {
        self.node.poll_timeout()
    }
    fn join(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        self.node.join(now, peer)
    }
    fn leave(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        self.node.leave(now, peer)
    }
    fn peer_down(&mut self, now: u64, peer: &str, reason: PeerDownReason) -> Result<(), Error> {
        self.calls.lock().unwrap().push((peer.to_string(), reason));
        self.node.peer_down(now, peer, reason)
    }
    fn confirm_leader(&mut self, now: u64, term: u64, granted: bool) -> Result<(), Error> {
        self.node.confirm_leader(now, term, granted)
    }
    fn leader_handler_failed(&mut self, now: u64, term: u64) -> Result<(), Error> {
        self.node.leader_handler_failed(now, term)
    }
    fn transfer_leadership(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        self.node.transfer_leadership(now, peer)
    }
    fn transfer_target(&mut self) -> Option<String> {
        self.node.transfer_target().map(str::to_string)
    }
    fn broadcast(&mut self, now: u64, payload: &[u8]) -> Result<(), Error> {
        self.node.broadcast(now, payload)
    }
    fn inspect(&mut self) -> Inspect {
        self.node.inspect()
    }
    fn role(&mut self) -> Role {
        self.node.role()
    }
    fn term(&mut self) -> u64 {
        self.node.term()
    }
    fn leader(&mut self) -> Option<String> {
        self.node.leader().map(str::to_string)
    }
    fn lease_deadline(&mut self) -> Option<u64> {
        self.node.lease_deadline()
    }
}

fn ids(n: usize) -> Vec<String> {
    let sockets: Vec<UdpSocket> = (0..n).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
    sockets.iter().map(|s| format!("127.0.0.1:{}", s.local_addr().unwrap().port())).collect()
}

#[test]
fn a_followers_refused_port_reaches_the_core_once() {
    // Three members; the third never runs, so its port refuses every datagram sent to it.
    let all = ids(3);
    let dead = all[2].clone();
    let calls: Calls = Arc::default();
    let (tx, rx) = channel();
    let handles: Vec<_> = all[..2]
        .iter()
        .map(|id| {
            let node = tenure::Config::new(id.as_str(), "refused-test").bootstrap(all.iter().cloned());
            let config = RuntimeConfig::new(node).log(false);
            let calls = calls.clone();
            let engine = move |init: EngineInit| -> Result<Recording, RuntimeError> {
                Ok(Recording { node: native(init)?, calls })
            };
            let tx = tx.clone();
            spawn(config, engine, move |e: RuntimeEvent| {
                let _ = tx.send(e);
            })
            .unwrap()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !matches!(rx.recv_timeout(Duration::from_millis(100)), Ok(RuntimeEvent::Leader { .. })) {
        assert!(Instant::now() < deadline, "no leader");
    }
    // Twenty heartbeats (50 ms) to the closed port, each answered by ICMP port unreachable.
    std::thread::sleep(Duration::from_millis(1_000));
    assert!(handles.iter().any(|h| h.is_leader()), "the leader kept leading");
    let reported: Vec<_> = calls
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, r)| *p == dead && matches!(r, PeerDownReason::Refused))
        .cloned()
        .collect();
    // Once, not once per heartbeat: the core then hands leadership to it no more (a rolling
    // stop's dead follower), and nothing else changes for a follower's port.
    // (At most once per node: both may have sent it a vote request.)
    assert!((1..=2).contains(&reported.len()), "the closed follower port reached the core once per node: {reported:?}");
    for h in &handles {
        h.stop();
    }
}
