//! The HTTP sidecar with a real HTTP client (ureq) against three runtimes over loopback UDP:
//! `/leader`, `/readyz` in both modes across transfers, `/healthz` (also of a stuck loop),
//! `/metrics` counters, typed errors for bad `http` values, and the port freed at stop.
#![cfg(feature = "http")]

use std::net::{TcpListener, UdpSocket};
use std::sync::mpsc::{channel, Sender};
use std::time::{Duration, Instant};

use serde_json::Value;
use tenure_runtime::{native, spawn, Handle, ReadyWhen, RuntimeConfig, RuntimeError, RuntimeEvent};

fn ids(n: usize) -> Vec<String> {
    let sockets: Vec<UdpSocket> = (0..n).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
    sockets.iter().map(|s| format!("127.0.0.1:{}", s.local_addr().unwrap().port())).collect()
}

fn config(id: &str, all: &[String], ready: ReadyWhen) -> RuntimeConfig {
    let node = tenure::Config::new(id, "http-test").bootstrap(all.iter().cloned());
    RuntimeConfig::new(node).log(false).http("127.0.0.1:0").ready_when(ready)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into()
}

/// `(status, content type, body)` of `GET http://<h's sidecar><path>`.
fn get(h: &Handle, path: &str) -> (u16, String, String) {
    let url = format!("http://{}{path}", h.http_addr().expect("a sidecar"));
    let mut res = agent().get(&url).call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = res.status().as_u16();
    let ct = res.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    (status, ct, res.body_mut().read_to_string().unwrap())
}

fn json(h: &Handle, path: &str) -> (u16, Value) {
    let (status, ct, body) = get(h, path);
    assert_eq!(ct, "application/json", "{path}: {body}");
    (status, serde_json::from_str(&body).unwrap())
}

/// The value of the sample line `name` (with its labels, exactly as printed) in `/metrics`.
fn sample(h: &Handle, name: &str) -> f64 {
    let (status, ct, text) = get(h, "/metrics");
    assert_eq!(status, 200);
    assert!(ct.starts_with("text/plain; version=0.0.4"), "{ct}");
    let line = text.lines().find(|l| l.rsplit_once(' ').is_some_and(|(n, _)| n == name));
    let line = line.unwrap_or_else(|| panic!("no sample {name} in:\n{text}"));
    line.rsplit_once(' ').unwrap().1.parse().unwrap()
}

#[track_caller]
fn eventually(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn forward(tx: &Sender<RuntimeEvent>) -> impl FnMut(RuntimeEvent) + Send + 'static {
    let tx = tx.clone();
    move |e| {
        let _ = tx.send(e);
    }
}

fn ready(h: &Handle) -> bool {
    let (status, body) = json(h, "/readyz");
    assert_eq!(body["ready"], Value::Bool(status == 200), "{body}");
    status == 200
}

/// The handle that leads with a confirmed lease, once every node agrees on it.
fn settled_leader(handles: &[Handle]) -> Handle {
    let mut leader = None;
    eventually("one leader with a lease that every node knows", Duration::from_secs(10), || {
        leader = handles.iter().find(|h| h.is_leader() && h.lease_deadline_ms().is_some()).cloned();
        leader.as_ref().is_some_and(|l| handles.iter().all(|h| h.leader().as_deref() == Some(l.id())))
    });
    leader.unwrap()
}

#[test]
fn leader_readyz_healthz_and_metrics_follow_the_cluster() {
    let all = ids(3);
    let (tx, _rx) = channel();
    // Two nodes ready only while leading, one ready while it runs.
    let modes = [ReadyWhen::Leader, ReadyWhen::Leader, ReadyWhen::Node];
    let handles: Vec<Handle> =
        all.iter().zip(modes).map(|(id, m)| spawn(config(id, &all, m), native, forward(&tx)).unwrap()).collect();
    let (a, b, n) = (&handles[0], &handles[1], &handles[2]);
    let mut leader = settled_leader(&handles);
    if leader.id() == n.id() {
        leader.transfer(Some(a.id())).unwrap();
        eventually("a leads", Duration::from_secs(5), || a.is_leader() && a.lease_deadline_ms().is_some());
        leader = settled_leader(&handles);
    }
    let other = if leader.id() == a.id() { b } else { a };

    // /leader: every field, on the leader and on a follower.
    let (status, l) = json(&leader, "/leader");
    assert_eq!(status, 200);
    assert_eq!(l["id"], leader.id());
    assert_eq!(l["leader"], leader.id());
    assert_eq!(l["is_leader"], true);
    assert_eq!(l["role"], "leader");
    assert_eq!(l["term"], leader.term());
    let remaining = l["lease_remaining_ms"].as_u64().expect("a lease on the leader");
    assert!(remaining <= 300, "lease_remaining_ms is the time remaining: {remaining}");
    assert_eq!(l["lease_deadline_ms"], l["lease_remaining_ms"], "the deprecated name carries the same value");
    let (_, f) = json(other, "/leader");
    assert_eq!(f["id"], other.id());
    assert_eq!(f["leader"], leader.id());
    assert_eq!(f["is_leader"], false);
    assert_eq!(f["role"], "follower");
    assert_eq!(f["lease_remaining_ms"], Value::Null);
    assert_eq!(f["lease_deadline_ms"], Value::Null);

    // /readyz: the leader-mode leader and the node-mode node are ready; the other is not, and says why.
    assert!(ready(&leader));
    assert!(ready(n));
    let (status, why) = json(other, "/readyz");
    assert_eq!(status, 503);
    assert_eq!(why["mode"], "leader");
    assert!(why["reason"].as_str().unwrap().contains(leader.id()), "{why}");

    // /healthz.
    for h in &handles {
        let (status, body) = json(h, "/healthz");
        assert_eq!((status, &body["status"]), (200, &Value::from("ok")), "{body}");
    }

    // /metrics before the transfer.
    let changes_before = sample(other, "tenure_leader_changes_total");
    let elections_before = sample(other, "tenure_elections_total");
    assert!(changes_before >= 1.0);
    assert_eq!(sample(&leader, "tenure_is_leader"), 1.0);
    assert_eq!(sample(other, "tenure_is_leader"), 0.0);
    assert_eq!(sample(&leader, "tenure_role{role=\"leader\"}"), 1.0);
    assert_eq!(sample(other, "tenure_role{role=\"follower\"}"), 1.0);
    assert_eq!(sample(other, "tenure_role{role=\"leader\"}"), 0.0);
    assert_eq!(sample(&leader, "tenure_term"), leader.term() as f64);
    assert_eq!(sample(&leader, "tenure_peers{state=\"in_view\"}"), 2.0);
    assert_eq!(sample(&leader, "tenure_build_info{version=\"0.1.0\"}"), 1.0);
    let failovers_before = sample(other, "tenure_failover_seconds_count");

    // Hand over to the other leader-mode node: readiness flips on both, counters move.
    leader.transfer(Some(other.id())).unwrap();
    eventually("readiness flips to the new leader", Duration::from_secs(5), || ready(other) && !ready(&leader));
    assert!(ready(n));
    assert_eq!(sample(other, "tenure_is_leader"), 1.0);
    assert_eq!(sample(other, "tenure_elections_total"), elections_before + 1.0);
    assert!(sample(other, "tenure_leader_changes_total") > changes_before);
    // The new leader went through a leaderless campaign (its own vote round trip): observed.
    assert!(sample(other, "tenure_failover_seconds_count") > failovers_before);
    let (_, l) = json(other, "/leader");
    assert_eq!(l["leader"], other.id());
    assert!(l["term"].as_u64().unwrap() > leader.term() - 1);

    // To the node-mode node: it stays ready; neither leader-mode node is.
    other.transfer(Some(n.id())).unwrap();
    eventually("n leads", Duration::from_secs(5), || n.is_leader());
    eventually("no leader-mode node is ready", Duration::from_secs(5), || !ready(a) && !ready(b));
    assert!(ready(n));

    // A datagram no tenure node sent is counted as a drop.
    let dropped = |h: &Handle| -> u64 { h.metrics().dropped.values().sum() };
    let before = dropped(a);
    UdpSocket::bind("127.0.0.1:0").unwrap().send_to(b"not tenure", a.bound_addr()).unwrap();
    eventually("the drop is counted", Duration::from_secs(5), || dropped(a) > before);

    // Unknown paths and methods.
    assert_eq!(get(a, "/nope").0, 404);
    let url = format!("http://{}/leader", a.http_addr().unwrap());
    assert_eq!(agent().post(&url).send("").unwrap().status().as_u16(), 405);

    // Stopped: the sidecar's port is released.
    let addr = a.http_addr().unwrap();
    for h in &handles {
        h.stop();
    }
    TcpListener::bind(addr).expect("the sidecar's port is free after stop");
}

#[test]
fn healthz_fails_while_the_loop_is_stuck() {
    let all = ids(3);
    let handles: Vec<Handle> = all
        .iter()
        .map(|id| {
            // A handler that blocks the runtime thread for 2 s on any message.
            let handler = |e: RuntimeEvent| {
                if matches!(e, RuntimeEvent::Message { .. }) {
                    std::thread::sleep(Duration::from_secs(2));
                }
            };
            spawn(config(id, &all, ReadyWhen::Node), native, handler).unwrap()
        })
        .collect();
    let leader = settled_leader(&handles);
    let stuck = handles.iter().find(|h| h.id() != leader.id()).unwrap();
    assert_eq!(json(stuck, "/healthz").0, 200);
    leader.broadcast(b"block").unwrap();
    let mut body = Value::Null;
    eventually("the stuck loop is reported", Duration::from_secs(3), || {
        let (status, b) = json(stuck, "/healthz");
        body = b;
        status == 503
    });
    assert!(body["reason"].as_str().unwrap_or_default().contains("has not finished a round"), "{body}");
    eventually("it recovers", Duration::from_secs(5), || json(stuck, "/healthz").0 == 200);
    for h in &handles {
        h.stop();
    }
}

#[test]
fn bad_http_values_fail_at_spawn_with_typed_errors() {
    let all = ids(3);
    let bad = |addr: &str| {
        let c = config(&all[0], &all, ReadyWhen::Node).http(addr);
        spawn(c, native, |_| {}).unwrap_err()
    };
    for value in ["localhost:8080", "127.0.0.1", "8080", ""] {
        match bad(value) {
            RuntimeError::InvalidOption { option: "http", message } => assert!(message.contains(value), "{message}"),
            e => panic!("{value}: {e:?}"),
        }
    }
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let e = bad(&addr);
    assert!(matches!(&e, RuntimeError::HttpBind { addr: a, in_use: true, .. } if *a == addr), "{e:?}");
    assert_eq!((e.code(), e.kind()), ("address_in_use", "bind"));
    assert!(e.to_string().contains("HTTP sidecar"), "{e}");
    // Nothing was left running: the UDP port is free again.
    UdpSocket::bind(&all[0]).expect("the UDP port is free after a failed spawn");
    assert!("follower".parse::<ReadyWhen>().is_err());
}
