//! The API conformance story (tests/api-conformance) through the runtime's Rust API driving the
//! WebAssembly component engine: `cargo run -p tenure-component-host --example api_story` prints
//! the story's normalised records as one JSON list. The leader work is run here, on a thread of
//! its own, and reported with `Handle::leader_work_failed`; the runtime decides what follows.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tenure_component_host::{ComponentEngine, Loader, Queue};
use tenure_runtime::{spawn, Handle, LeaderWorkVerdict, RuntimeConfig, RuntimeError, RuntimeEvent};

const TIMEOUT: Duration = Duration::from_secs(20);

fn ids(n: usize) -> Vec<String> {
    let sockets: Vec<UdpSocket> = (0..n).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
    sockets.iter().map(|s| format!("127.0.0.1:{}", s.local_addr().unwrap().port())).collect()
}

fn wait(mut ok: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + TIMEOUT;
    while !ok() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn leader_of(handles: &[Handle], exclude: Option<&str>) -> Handle {
    let mut found = None;
    wait(|| {
        found = handles.iter().find(|h| Some(h.id()) != exclude && h.is_running() && h.is_leader()).cloned();
        found.is_some()
    });
    found.expect("no leader")
}

/// Whether `h` leads `term` with an unexpired lease.
fn lease_valid(h: &Handle, term: u64) -> bool {
    h.is_leader() && h.term() == term && h.lease_deadline_ms().is_some_and(|d| h.now_ms() < d)
}

/// The work: `fails(attempt)` says whether attempt n (from 1, counted over the whole cluster)
/// fails. Failures are reported to the runtime, whose verdict says whether to retry in place.
fn run_work(
    handle: Handle,
    leaders: Receiver<u64>,
    attempts: Arc<Mutex<Vec<u64>>>,
    fails: impl Fn(usize) -> bool + Send + 'static,
) {
    std::thread::spawn(move || {
        'leaderships: while let Ok(term) = leaders.recv() {
            loop {
                let n = {
                    let mut a = attempts.lock().unwrap();
                    a.push(term);
                    a.len()
                };
                if !fails(n) {
                    continue 'leaderships;
                }
                match handle.leader_work_failed(term) {
                    Ok(LeaderWorkVerdict::Retry { after }) => std::thread::sleep(after),
                    Ok(LeaderWorkVerdict::Stopping) | Err(_) => return,
                    Ok(_) => continue 'leaderships,
                }
                if !(handle.is_leader() && handle.term() == term) {
                    continue 'leaderships;
                }
            }
        }
    });
}

struct Cluster {
    handles: Vec<Handle>,
    attempts: Arc<Mutex<Vec<u64>>>,
    warned: Arc<Mutex<Vec<String>>>,
}

fn cluster(
    loader: &Loader<Queue>,
    name: &str,
    fails: impl Fn(usize) -> bool + Send + Sync + Clone + 'static,
) -> Cluster {
    let all = ids(3);
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let warned = Arc::new(Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for id in &all {
        let (tx, rx) = channel();
        let warn = warned.clone();
        let handler = move |e: RuntimeEvent| match e {
            RuntimeEvent::Leader { term, .. } => {
                let _ = tx.send(term);
            }
            RuntimeEvent::Warning { code, .. } => warn.lock().unwrap().push(code),
            _ => {}
        };
        let node = tenure::Config::new(id.as_str(), name).bootstrap(all.iter().filter(|p| *p != id).cloned());
        let h = spawn(RuntimeConfig::new(node).log(false), ComponentEngine::factory(loader.clone()), handler)
            .expect("spawn");
        run_work(h.clone(), rx, attempts.clone(), fails.clone());
        handles.push(h);
    }
    Cluster { handles, attempts, warned }
}

fn code(r: Result<Handle, RuntimeError>) -> Value {
    match r {
        Ok(h) => {
            h.stop();
            Value::Null
        }
        Err(e) => json!(e.code()),
    }
}

fn main() {
    let loader: Loader<Queue> = Loader::built().expect("the component compiles");
    let mut out: Vec<Value> = Vec::new();
    let all = ids(3);
    let base = || tenure::Config::new(all[0].as_str(), "api").bootstrap(all[1..].iter().cloned());
    let bad: Vec<(&str, tenure::Config)> = vec![
        ("id", tenure::Config::new("nope", "api").bootstrap(all[1..].iter().cloned())),
        ("peer", tenure::Config::new(all[0].as_str(), "api").bootstrap(["127.0.0.1"])),
        ("timeouts", base().election_timeout_min(500).election_timeout_max(400)),
        ("cluster", tenure::Config::new(all[0].as_str(), "").bootstrap(all[1..].iter().cloned())),
        ("heartbeat_interval", base().heartbeat_interval(0)),
    ];
    for (name, config) in bad {
        let r = spawn(RuntimeConfig::new(config).log(false), ComponentEngine::factory(loader.clone()), |_| {});
        out.push(json!(["bad_input", name, code(r)]));
    }

    // Cluster 1: leader work that fails twice, then succeeds.
    let c = cluster(&loader, "api", |n| n <= 2);
    let leader = leader_of(&c.handles, None);
    out.push(json!(["leader_elected"]));
    let s = leader.inspect().expect("inspect");
    out.push(json!(["defaults", {
        "heartbeat_interval": s.heartbeat_interval,
        "election_timeout_min": s.election_timeout_min,
        "election_timeout_max": s.election_timeout_max,
        "ghost_ttl": s.ghost_ttl,
        "min_cluster_size": s.min_cluster_size,
    }]));
    wait(|| c.attempts.lock().unwrap().len() >= 3);
    let attempts = c.attempts.lock().unwrap().clone();
    let same_term = attempts.iter().all(|t| Some(t) == attempts.first());
    out.push(json!(["work", "attempts_until_success", attempts.len(), "same_term", same_term]));
    let leader = leader_of(&c.handles, None);
    let term = leader.term();
    wait(|| lease_valid(&leader, term));
    out.push(json!(["lease", "before_pause", lease_valid(&leader, term)]));
    std::thread::sleep(Duration::from_millis(500));
    out.push(json!(["lease", "after_pause", lease_valid(&leader, term)]));
    leader.transfer(None).expect("transfer");
    let next = leader_of(&c.handles, Some(leader.id()));
    out.push(json!([
        "transfer",
        "new_leader",
        next.id() != leader.id(),
        "old_lease_valid",
        lease_valid(&leader, term)
    ]));
    let warned = c.warned.lock().unwrap().iter().any(|w| w == "leader_work_failed");
    out.push(json!(["warned", "leader_work_failed", warned]));
    let r = leader.transfer(None);
    out.push(json!(["bad_call", "transfer_by_follower", r.err().map(|e| e.code())]));
    next.stop();
    next.wait();
    let rest: Vec<Handle> = c.handles.iter().filter(|h| h.id() != next.id()).cloned().collect();
    let after = leader_of(&rest, None);
    out.push(json!(["graceful_stop", "successor", after.id() != next.id()]));
    for h in &rest {
        h.stop();
    }

    // Cluster 2: leader work that always fails.
    let c = cluster(&loader, "api2", |_| true);
    let stopped = AtomicUsize::new(0);
    // Two of three stopped leave no quorum: the third can never lead, so never fail, again.
    wait(|| {
        stopped.store(c.handles.iter().filter(|h| !h.is_running()).count(), Ordering::Relaxed);
        stopped.load(Ordering::Relaxed) >= 2
    });
    let mut codes: Vec<Value> = c
        .handles
        .iter()
        .map(|h| match (h.fatal_error(), h.is_running()) {
            (Some(e), _) => json!(e.code()),
            (None, true) => json!("still_running"),
            (None, false) => Value::Null,
        })
        .collect();
    codes.sort_by_key(|v| v.to_string());
    for h in &c.handles {
        h.stop();
    }
    out.push(json!(["always_fails", codes]));
    println!("{}", Value::Array(out));
}
