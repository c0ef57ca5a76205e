//! Rate-limited warnings: at most one per (code, subject) every [`WARN_INTERVAL_MS`], with a count
//! of the occurrences since the last one reported.

use std::collections::HashMap;
use std::net::SocketAddr;

use tenure::DropReason;

/// Every warning code the runtime and the command line deliver, besides `dropped_<reason>` (one
/// per [`DropReason`]), the core's configuration warnings (`ConfigWarning::code`) and, for refused
/// control lines, the core's error codes. `runtime/tests/tables.rs` scans the sources for codes
/// passed to the warning functions and fails on one missing here.
pub const WARNING_CODES: &[&str] = &[
    "small_min_cluster_size",
    "slow_heartbeat",
    "view_too_small",
    "peer_unreachable",
    "unresolved_name",
    "confirm_timeout",
    "leader_work_failed",
    "socket_error",
    "handover_timeout",
    "failure_detection_off",
    "bad_control_line",
    "command_failed",
    "command_backoff",
    "no_transfer_target",
    "peer_refused",
    "app_unhealthy",
    "app_recovered",
    "pod_label_failed",
    "pod_label_recovered",
    "silent_peers",
    "waiting_for_quorum",
    "duplicate_peer",
    "death_notice_off",
    "transfer_dropped",
];

/// The minimum time between two warnings with the same code and subject.
pub(crate) const WARN_INTERVAL_MS: u64 = 10_000;

#[derive(Default)]
pub(crate) struct Warner {
    /// code → subject → (last reported at, suppressed since). Nested so that a rate-limited
    /// occurrence (one per datagram, in a flood) allocates nothing.
    last: HashMap<String, HashMap<String, (u64, u64)>>,
}

impl Warner {
    /// Records one occurrence; returns the message to report now (with the count of occurrences
    /// suppressed since the last report), or `None` while rate-limited.
    pub(crate) fn note(
        &mut self,
        now: u64,
        code: &str,
        subject: &str,
        message: impl FnOnce() -> String,
    ) -> Option<String> {
        match self.last.get_mut(code).and_then(|m| m.get_mut(subject)) {
            Some((at, suppressed)) if now.saturating_sub(*at) < WARN_INTERVAL_MS => {
                *suppressed += 1;
                None
            }
            Some((at, suppressed)) => {
                let n = std::mem::take(suppressed);
                *at = now;
                let mut m = message();
                if n > 0 {
                    m.push_str(&format!(" ({} more since the last report)", n));
                }
                Some(m)
            }
            None => {
                self.last.entry(code.to_string()).or_default().insert(subject.to_string(), (now, 0));
                Some(message())
            }
        }
    }
}

/// The warning for datagrams dropped for `reason`: what happened and the likely cause.
/// `claimed`: the sender id inside the message, when it differs from the transport's.
pub(crate) fn explain_drop(
    reason: DropReason,
    from: &str,
    source: SocketAddr,
    id: &str,
    claimed: Option<&str>,
) -> String {
    let name = reason.as_str();
    let what = match name {
        "wrong_cluster" => format!(
            "messages from {source} are for another cluster: the sender runs with a different --cluster"
        ),
        "bad_mac" => format!(
            "messages from {source} fail authentication: the sender uses a different key (--key-file), or only one side has a key"
        ),
        "sender_mismatch" => match claimed {
            Some(claimed) => format!(
                "a message from {source} (peer {from}) claims to come from \"{claimed}\": a node's id must be the address it sends from (listen elsewhere with --bind; check for NAT)"
            ),
            None => format!(
                "a message from {source} (peer {from}) names another sender: a node's id must be the address it sends from (listen elsewhere with --bind; check for NAT)"
            ),
        },
        "unknown_peer" => format!(
            "messages from {from} ({source}), which is not a declared peer: add it with --peer here, or check the sender's --id"
        ),
        "from_self" => format!(
            "a message from {source} claims to come from this node ({id}): this node is listed in --peer under another name, or two nodes share one --id"
        ),
        "removed_peer" => format!("messages from {from}, removed less than one election timeout ago (in flight)"),
        "view_full" => format!("messages from {from} ({source}): the view already holds max_peers peers"),
        "implausible_term" => format!(
            "messages from {from} ({source}) with a term too far ahead of this node's: a corrupt or hostile sender"
        ),
        "replay" => format!("replayed or very late duplicate messages from {from} ({source})"),
        "notice_mismatch" => format!(
            "death notices from {from} ({source}) for a leadership this node does not follow (late, replayed, or the leader had already changed)"
        ),
        "oversized" | "malformed" | "unknown_version" => format!(
            "{name} datagrams from {source}: not a tenure message of this version (another program, or another tenure version)"
        ),
        other => format!("messages from {source} dropped: {other}"),
    };
    format!("dropped {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_per_code_and_subject_per_interval_with_a_count() {
        let mut w = Warner::default();
        assert_eq!(w.note(0, "a", "x", || "m".into()).as_deref(), Some("m"));
        assert_eq!(w.note(5, "a", "x", || "m".into()), None);
        assert_eq!(w.note(6, "a", "x", || "m".into()), None);
        assert_eq!(w.note(7, "a", "y", || "m".into()).as_deref(), Some("m"));
        assert_eq!(w.note(7, "b", "x", || "m".into()).as_deref(), Some("m"));
        assert_eq!(
            w.note(WARN_INTERVAL_MS, "a", "x", || "m".into()).as_deref(),
            Some("m (2 more since the last report)")
        );
        assert_eq!(w.note(WARN_INTERVAL_MS + 1, "a", "x", || "m".into()), None);
    }

    #[test]
    fn every_drop_reason_has_an_explanation() {
        let source: SocketAddr = "127.0.0.1:9".parse().unwrap();
        for r in DropReason::ALL {
            let m = explain_drop(r, "127.0.0.1:9", source, "127.0.0.1:1", None);
            assert!(!m.contains(" dropped: "), "{r:?} falls back to the generic text: {m}");
        }
        let m = explain_drop(DropReason::SenderMismatch, "127.0.0.1:9", source, "127.0.0.1:1", Some("10.0.0.7:7000"));
        assert!(m.contains("claims to come from \"10.0.0.7:7000\""), "{m}");
    }
}
