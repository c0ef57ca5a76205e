//! [`RuntimeEvent`] and [`Handler`]: what the runtime tells the application, on its own thread;
//! and the one writer of its JSON event lines (the command line's stdout, the leader-only
//! command's own events).

use std::net::SocketAddr;

use crate::RuntimeError;

/// Something the application should know, delivered in order on the runtime thread.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuntimeEvent {
    /// The socket is bound and the node runs. Always the first event.
    Started {
        /// The node id (as configured).
        id: String,
        /// The local address the UDP socket is bound to.
        bound_addr: SocketAddr,
        /// The term the node starts in (from the state file, else 0).
        term: u64,
    },
    /// This node leads `term` (the fencing token). A handler that cannot do the leader's work
    /// reports it with [`crate::Handle::leader_work_failed`].
    Leader {
        /// The term led.
        term: u64,
        /// The value this node proclaims (`value` of the core configuration in [`crate::RuntimeConfig::node`]), if any.
        value: Option<String>,
    },
    /// This node follows (every transition into follower, and news of a leader while following,
    /// its proclaimed value included).
    Follower {
        /// The current term.
        term: u64,
        /// The leader, when known.
        leader: Option<String>,
        /// The value the leader proclaims, once this node learned it (within a heartbeat
        /// interval of the leader's first heartbeat; a `Follower` event follows each change).
        value: Option<String>,
    },
    /// A peer entered the view.
    PeerJoined {
        /// Its id.
        peer: String,
    },
    /// A peer left the view.
    PeerLeft {
        /// Its id.
        peer: String,
    },
    /// An application payload sent by a peer's `broadcast`.
    Message {
        /// The sender's id.
        from: String,
        /// The payload.
        payload: Vec<u8>,
    },
    /// Something probably misconfigured or failing (rate-limited: at most one per code and
    /// subject every 10 s, with a count). Codes are listed in the crate docs.
    Warning {
        /// A stable snake_case code.
        code: String,
        /// A sentence naming the likely cause.
        message: String,
    },
    /// The runtime failed and is stopping (a `Stopped` event follows). The command line exits
    /// non-zero.
    Fatal {
        /// Why.
        error: RuntimeError,
    },
    /// The runtime has stopped (after a graceful stop or a fatal error). Always the last event.
    Stopped {
        /// The last term.
        term: u64,
    },
}

/// The kind name of the confirm-leader question ([`Handler::confirm_leader`]) wherever a host
/// delivers it as an event (the Python and Node.js electors, the browser build, JSON lines).
pub const CONFIRM_LEADER: &str = "confirm_leader";

impl RuntimeEvent {
    /// The event's snake_case kind, the same word in every host (`event` of the JSON lines).
    pub fn kind(&self) -> &'static str {
        match self {
            RuntimeEvent::Started { .. } => "started",
            RuntimeEvent::Leader { .. } => "leader",
            RuntimeEvent::Follower { .. } => "follower",
            RuntimeEvent::PeerJoined { .. } => "peer_joined",
            RuntimeEvent::PeerLeft { .. } => "peer_left",
            RuntimeEvent::Message { .. } => "message",
            RuntimeEvent::Warning { .. } => "warning",
            RuntimeEvent::Fatal { .. } => "fatal",
            RuntimeEvent::Stopped { .. } => "stopped",
        }
    }
}

/// The handler's answer to a won election (the core's leadership gate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirm {
    /// Publish leadership now.
    Grant,
    /// Withhold it: the node re-campaigns after a backoff that grows with consecutive denials.
    Deny,
    /// Answer later with [`crate::Handle::confirm_leader`]; unanswered after the configured
    /// `confirm_timeout`, the runtime denies it.
    Defer,
}

/// Receives the runtime's events on the runtime thread. Keep it short: the node is not driven
/// while it runs. [`crate::Handle`] methods may be called from it (see their docs).
///
/// Any `FnMut(RuntimeEvent) + Send + 'static` closure is a handler that grants every
/// confirmation.
pub trait Handler: Send + 'static {
    /// One event.
    fn on_event(&mut self, event: RuntimeEvent);
    /// This node won the election of `term`: may it lead? Default: [`Confirm::Grant`].
    fn confirm_leader(&mut self, term: u64) -> Confirm {
        let _ = term;
        Confirm::Grant
    }
    /// Whether leader-only work this handler started still runs after leadership ended. While it
    /// does, a leadership transfer the engine decided on its own (a preemption) waits: its
    /// `TimeoutNow` leaves only once the work is gone, so the next leader's work cannot start
    /// beside it. A transfer the application asks for stops the work first itself. Default: no
    /// such work (`false`).
    fn leader_work_running(&self) -> bool {
        false
    }
}

impl<F: FnMut(RuntimeEvent) + Send + 'static> Handler for F {
    fn on_event(&mut self, event: RuntimeEvent) {
        self(event)
    }
}

impl Handler for Box<dyn Handler> {
    fn on_event(&mut self, event: RuntimeEvent) {
        (**self).on_event(event)
    }
    fn confirm_leader(&mut self, term: u64) -> Confirm {
        (**self).confirm_leader(term)
    }
    fn leader_work_running(&self) -> bool {
        (**self).leader_work_running()
    }
}

/// A JSON string literal (quoted and escaped).
pub(crate) fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// One JSON event line (without the newline): `{"ts_ms":…,"id":…,"event":EVENT` then `rest`
/// (the event's own fields, each starting with a comma), then `}`. Every line the command line
/// prints has this head, whoever writes it.
pub(crate) fn json_line(ts_ms: u64, id: &str, event: &str, rest: &str) -> String {
    format!("{{\"ts_ms\":{ts_ms},\"id\":{},\"event\":\"{event}\"{rest}}}", json_str(id))
}

/// The JSON line for an event (without the newline).
pub fn event_line(ts_ms: u64, id: &str, event: &RuntimeEvent) -> String {
    let rest = match event {
        RuntimeEvent::Started { bound_addr, term, .. } => {
            format!(",\"term\":{term},\"bound\":{}", json_str(&bound_addr.to_string()))
        }
        RuntimeEvent::Leader { term, value } => {
            format!(",\"term\":{term},\"value\":{}", value.as_deref().map_or("null".into(), json_str))
        }
        RuntimeEvent::Follower { term, leader, value } => format!(
            ",\"term\":{term},\"leader\":{},\"value\":{}",
            leader.as_deref().map_or("null".into(), json_str),
            value.as_deref().map_or("null".into(), json_str)
        ),
        RuntimeEvent::PeerJoined { peer } => format!(",\"peer\":{}", json_str(peer)),
        RuntimeEvent::PeerLeft { peer } => format!(",\"peer\":{}", json_str(peer)),
        RuntimeEvent::Message { from, payload } => {
            let hex: String = payload.iter().map(|b| format!("{b:02x}")).collect();
            format!(",\"from\":{},\"payload_hex\":\"{hex}\"", json_str(from))
        }
        RuntimeEvent::Warning { code, message } => warning_fields(code, message),
        RuntimeEvent::Fatal { error } => warning_fields(error.code(), &error.to_string()),
        RuntimeEvent::Stopped { term } => format!(",\"term\":{term}"),
    };
    json_line(ts_ms, id, event.kind(), &rest)
}

/// The fields of a `warning` (and `fatal`) line: its code and message.
pub(crate) fn warning_fields(code: &str, message: &str) -> String {
    format!(",\"code\":{},\"message\":{}", json_str(code), json_str(message))
}

/// The JSON `inspect` line: `{"ts_ms":…,"id":…,"event":"inspect","state":{…every inspect key…}}`.
pub fn inspect_line(ts_ms: u64, id: &str, state: &tenure::Inspect) -> String {
    json_line(ts_ms, id, "inspect", &format!(",\"state\":{state}"))
}
