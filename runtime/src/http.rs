//! The HTTP sidecar (`--http ADDR`, [`crate::RuntimeConfig::http`]): `GET /leader`, `/healthz`,
//! `/readyz` and `/metrics` (Prometheus text format 0.0.4), served by `tiny_http` on a thread of
//! its own that only reads the snapshot the run loop publishes ([`crate::Handle::metrics`]).
//! `docs/http.md` documents every endpoint, field and metric.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{prometheus_text, DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use serde_json::json;

use crate::metrics::{role_name, Metrics, FAILOVER_BUCKETS_MS, ROLES};
use crate::{Handle, ReadyWhen, RuntimeError};

/// A loop that finished a round this recently is alive without asking it again.
const HEALTH_FRESH_MS: u64 = 100;
/// How long `/healthz` waits for a woken loop to finish a round before answering 503.
pub(crate) const HEALTH_TIMEOUT: Duration = Duration::from_secs(1);

/// Binds the sidecar's TCP listener (before the runtime thread starts, so that a taken port fails
/// [`crate::spawn`] with [`RuntimeError::HttpBind`]).
pub(crate) fn bind(addr: SocketAddr) -> Result<(tiny_http::Server, SocketAddr), RuntimeError> {
    let fail = |in_use: bool, message: String| RuntimeError::HttpBind { addr: addr.to_string(), in_use, message };
    let listener =
        TcpListener::bind(addr).map_err(|e| fail(e.kind() == std::io::ErrorKind::AddrInUse, e.to_string()))?;
    let bound = listener.local_addr().map_err(|e| fail(false, e.to_string()))?;
    let server = tiny_http::Server::from_listener(listener, None).map_err(|e| fail(false, e.to_string()))?;
    Ok((server, bound))
}

/// Serves requests on a thread of its own until the runtime ends (then the server is unblocked
/// and the thread joined, from the runtime thread's end guard).
pub(crate) fn serve(server: tiny_http::Server, handle: Handle, ready_when: ReadyWhen) -> std::io::Result<()> {
    let server = Arc::new(server);
    let s = server.clone();
    let h = handle.clone();
    let thread = std::thread::Builder::new().name("tenure-http".into()).spawn(move || {
        for request in s.incoming_requests() {
            let (status, content_type, body) = route(request.method(), request.url(), &h, ready_when);
            let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], content_type.as_bytes());
            let mut response = tiny_http::Response::from_string(body).with_status_code(status);
            if let Ok(header) = header {
                response.add_header(header);
            }
            let _ = request.respond(response);
        }
    })?;
    let hook = move || {
        server.unblock();
        let _ = thread.join();
    };
    handle.shared.on_end.lock().unwrap_or_else(|p| p.into_inner()).push(Box::new(hook));
    Ok(())
}

const JSON: &str = "application/json";

fn route(method: &tiny_http::Method, url: &str, handle: &Handle, ready_when: ReadyWhen) -> (u16, &'static str, String) {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    if !matches!(method, tiny_http::Method::Get | tiny_http::Method::Head) {
        return (405, JSON, json!({"error": format!("method {method} not allowed; use GET")}).to_string());
    }
    match path {
        "/leader" => (200, JSON, leader(&handle.metrics()).to_string()),
        "/healthz" => {
            let (ok, body) = health(handle);
            (if ok { 200 } else { 503 }, JSON, body.to_string())
        }
        "/readyz" => {
            let (ok, body) = ready(&handle.metrics(), ready_when);
            (if ok { 200 } else { 503 }, JSON, body.to_string())
        }
        "/metrics" => match exposition(handle.metrics()) {
            Ok(text) => (200, prometheus_text::CONTENT_TYPE, text),
            Err(_) => (500, JSON, json!({"error": "encoding the metrics failed"}).to_string()),
        },
        _ => (
            404,
            JSON,
            json!({"error": format!("no endpoint {path}"), "endpoints": ["/leader", "/healthz", "/readyz", "/metrics"]})
                .to_string(),
        ),
    }
}

/// `GET /leader`.
pub(crate) fn leader(m: &Metrics) -> serde_json::Value {
    json!({
        "id": m.id,
        "leader": m.leader,
        "leader_value": m.leader_value,
        "term": m.term,
        "is_leader": m.is_leader,
        "lease_remaining_ms": m.lease_remaining_ms,
        // The same value under its old name, which said "deadline" for a remaining time: kept
        // for one release so that existing readers keep working.
        "lease_deadline_ms": m.lease_remaining_ms,
        "role": role_name(m.role),
        "wire_version": m.wire_version,
    })
}

/// `GET /healthz`: the run loop finishes rounds. A loop idle for more than [`HEALTH_FRESH_MS`] is
/// woken and must finish a round within [`HEALTH_TIMEOUT`] (a handler blocking the runtime
/// thread, or a dead thread, fails this).
fn health(handle: &Handle) -> (bool, serde_json::Value) {
    if !handle.is_running() {
        return (false, json!({"status": "stopped", "reason": "the runtime has stopped"}));
    }
    let age = handle.metrics().loop_age_ms;
    if age <= HEALTH_FRESH_MS {
        return (true, json!({"status": "ok", "loop_age_ms": age}));
    }
    let asked = handle.now_ms();
    let _ = handle.shared.waker.wake();
    let start = Instant::now();
    while start.elapsed() < HEALTH_TIMEOUT {
        let alive_at = handle.shared.counters.alive_at.load(std::sync::atomic::Ordering::Acquire);
        if alive_at >= asked {
            return (true, json!({"status": "ok", "loop_age_ms": handle.now_ms().saturating_sub(alive_at)}));
        }
        if !handle.is_running() {
            return (false, json!({"status": "stopped", "reason": "the runtime has stopped"}));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let age = handle.metrics().loop_age_ms;
    let waited = HEALTH_TIMEOUT.as_millis();
    let reason = format!("the run loop has not finished a round for {age} ms (woken, no answer within {waited} ms)");
    (false, json!({"status": "unhealthy", "reason": reason, "loop_age_ms": age}))
}

/// `GET /readyz` in either mode.
pub(crate) fn ready(m: &Metrics, mode: ReadyWhen) -> (bool, serde_json::Value) {
    let why_not = if !m.running {
        Some("the runtime has stopped".to_string())
    } else if m.stopping {
        Some("the node is stopping".to_string())
    } else {
        match mode {
            ReadyWhen::Node => None,
            ReadyWhen::Leader if !m.is_leader => Some(match &m.leader {
                Some(l) => format!("not the leader (the leader is {l})"),
                None => "not the leader (no leader known)".to_string(),
            }),
            ReadyWhen::Leader if m.lease_valid() => None,
            ReadyWhen::Leader => Some(match m.lease_remaining_ms {
                Some(_) => "leading, but the lease expired and was not renewed yet".to_string(),
                None => "leading, but no quorum has acknowledged the lease yet".to_string(),
            }),
        }
    };
    let mode = mode.as_str();
    match why_not {
        None => (true, json!({"ready": true, "mode": mode})),
        Some(reason) => (false, json!({"ready": false, "mode": mode, "reason": reason})),
    }
}

/// The Prometheus text exposition of a snapshot.
pub(crate) fn exposition(m: Metrics) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Snapshot(m)));
    let mut text = String::new();
    prometheus_text::encode(&mut text, &registry)?;
    Ok(text)
}

/// A [`Metrics`] snapshot as a prometheus-client collector (encoded once per scrape).
#[derive(Debug)]
struct Snapshot(Metrics);

// Help texts come from `METRIC_FAMILIES`, the table the Python and Node.js collectors are
// generated from, so the three expositions cannot describe a family differently.
fn family<'a>(
    e: &'a mut DescriptorEncoder,
    name: &'a str,
    kind: MetricType,
) -> Result<prometheus_client::encoding::MetricEncoder<'a>, std::fmt::Error> {
    e.encode_descriptor(name, crate::metrics::help(name), None, kind)
}

fn gauge(e: &mut DescriptorEncoder, name: &str, v: i64) -> Result<(), std::fmt::Error> {
    family(e, name, MetricType::Gauge)?.encode_gauge(&v)
}

fn counter(e: &mut DescriptorEncoder, name: &str, v: u64) -> Result<(), std::fmt::Error> {
    family(e, name, MetricType::Counter)?.encode_counter::<NoLabelSet, _, u64>(&v, None)
}

fn as_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Collector for Snapshot {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let m = &self.0;
        gauge(&mut e, "tenure_is_leader", i64::from(m.is_leader))?;
        gauge(&mut e, "tenure_term", as_i64(m.term))?;
        let mut roles = family(&mut e, "tenure_role", MetricType::Gauge)?;
        for r in ROLES {
            roles.encode_family(&[("role", role_name(r))])?.encode_gauge(&i64::from(r == m.role))?;
        }
        counter(&mut e, "tenure_leader_changes", m.leader_changes)?;
        counter(&mut e, "tenure_elections", m.elections)?;
        counter(&mut e, "tenure_leader_work_failures", m.leader_work_failures)?;
        counter(&mut e, "tenure_leader_work_step_downs", m.leader_work_step_downs)?;
        let mut dropped = family(&mut e, "tenure_messages_dropped", MetricType::Counter)?;
        for (reason, n) in &m.dropped {
            dropped.encode_family(&[("reason", *reason)])?.encode_counter::<NoLabelSet, _, u64>(n, None)?;
        }
        let mut peers = family(&mut e, "tenure_peers", MetricType::Gauge)?;
        for (state, n) in &m.peers {
            peers.encode_family(&[("state", *state)])?.encode_gauge(&as_i64(*n))?;
        }
        let mut heard = family(&mut e, "tenure_peer_last_heard_seconds", MetricType::Gauge)?;
        for (peer, ms) in &m.peer_last_heard_ms {
            if let Some(ms) = ms {
                heard.encode_family(&[("peer", peer.as_str())])?.encode_gauge(&(*ms as f64 / 1000.0))?;
            }
        }
        let mut acked = family(&mut e, "tenure_peer_last_ack_seconds", MetricType::Gauge)?;
        for (peer, ms) in &m.peer_last_ack_ms {
            acked.encode_family(&[("peer", peer.as_str())])?.encode_gauge(&(*ms as f64 / 1000.0))?;
        }
        if let Some(slack) = m.quorum_slack {
            gauge(&mut e, "tenure_quorum_slack", slack)?;
            gauge(&mut e, "tenure_peers_silent", as_i64(m.silent_peers.len() as u64))?;
        }
        if let Some(v) = m.wire_version {
            gauge(&mut e, "tenure_wire_version", i64::from(v))?;
        }
        // The encoder takes per-bucket counts and accumulates them itself.
        let mut previous = 0u64;
        let buckets: Vec<(f64, u64)> = m
            .failover
            .buckets
            .iter()
            .map(|(le, cumulative)| {
                let n = cumulative.saturating_sub(previous);
                previous = *cumulative;
                (*le, n)
            })
            .collect();
        debug_assert_eq!(buckets.len(), FAILOVER_BUCKETS_MS.len());
        family(&mut e, "tenure_failover_seconds", MetricType::Histogram)?.encode_histogram::<NoLabelSet>(
            m.failover.sum_seconds,
            m.failover.count,
            &buckets,
            None,
        )?;
        let mut build = family(&mut e, "tenure_build_info", MetricType::Gauge)?;
        build.encode_family(&[("version", crate::VERSION)])?.encode_gauge(&1i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::METRIC_FAMILIES;

    /// `/metrics` describes exactly the families of `METRIC_FAMILIES`, in order, with their help
    /// texts: a family encoded here but missing from the table would be missing from the Python
    /// and Node.js collectors too.
    #[test]
    fn the_exposition_lists_the_families_of_the_table() {
        let m = Metrics {
            id: "a".into(),
            role: tenure::Role::Leader,
            term: 1,
            leader: Some("a".into()),
            leader_value: None,
            is_leader: true,
            lease_remaining_ms: Some(1),
            running: true,
            stopping: false,
            loop_age_ms: 0,
            leader_changes: 1,
            elections: 1,
            leader_work_failures: 0,
            leader_work_step_downs: 0,
            wire_version: Some(4),
            dropped: Default::default(),
            peers: Default::default(),
            peer_last_heard_ms: [("b".to_string(), Some(1))].into(),
            peer_last_ack_ms: [("b".to_string(), 1)].into(),
            quorum_slack: Some(1),
            silent_peers: Vec::new(),
            failover: crate::FailoverHistogram {
                buckets: FAILOVER_BUCKETS_MS.iter().map(|b| (*b as f64 / 1000.0, 0)).collect(),
                sum_seconds: 0.0,
                count: 0,
            },
        };
        let text = exposition(m).unwrap();
        let helps: Vec<(String, String)> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# HELP "))
            .filter_map(|l| l.split_once(' '))
            .map(|(n, h)| (n.to_string(), h.to_string()))
            .collect();
        // The text format names a counter's family by its sample (`_total`).
        let table: Vec<(String, String)> = METRIC_FAMILIES
            .iter()
            .map(|f| {
                let suffix = if f.kind == "counter" { "_total" } else { "" };
                (format!("{}{suffix}", f.name), f.help.to_string())
            })
            .collect();
        assert_eq!(helps, table);
    }
}
