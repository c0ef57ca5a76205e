//! # tenure-runtime — the one runtime for every tenure host
//!
//! Runs one [`tenure`] node over UDP: the socket (IPv4 and IPv6, `bind` separate from the
//! advertised id), the timers, DNS names for ids and peers, the state file, graceful stop,
//! logging and the command line. The Python and Node.js packages and `tenure-wasmtime` are this
//! crate with their own [`Engine`] and [`Handler`]; so they behave alike by construction.
//!
//! ```no_run
//! use tenure_runtime::{spawn, native, RuntimeConfig, RuntimeEvent};
//!
//! let node = tenure::Config::new("127.0.0.1:7001", "demo").bootstrap(["127.0.0.1:7002", "127.0.0.1:7003"]);
//! let handle = spawn(RuntimeConfig::new(node), native, |event: RuntimeEvent| println!("{event:?}"))?;
//! // ... later: hand leadership over (if leading), wait for the new leader, stop.
//! handle.stop();
//! # Ok::<(), tenure_runtime::RuntimeError>(())
//! ```
//!
//! ## The run loop
//!
//! One thread owns the engine and the socket. It sleeps in `epoll` (through `mio`) until a
//! datagram arrives, the earliest deadline passes (the node's own, a deferred confirmation's, a
//! stop's handover bound, a DNS re-resolution) or a [`Handle`] sends a command; then it feeds the
//! input to the engine with the current time of a monotonic millisecond clock (from [`Instant`],
//! zero at [`spawn`]) and drains the engine's outputs in order:
//!
//! - `Persist`: remembered; written to the state file (temp file, fsync, rename, fsync of the
//!   directory) before the next `Send` or event leaves, so consecutive pairs coalesce into one write.
//!   A failed write is fatal: [`RuntimeEvent::Fatal`], then [`RuntimeEvent::Stopped`].
//! - `Send`: to the peer's resolved address. A send that fails (no address after a failed DNS
//!   lookup, an unreachable network, a firewall's reject) is explained once in a warning, until the
//!   peer is heard from again, and re-resolves its name. It is not reported as
//!   `peer_down(no_connection)`: that would remove the peer after `ghost_ttl` and lower the quorum
//!   on both sides of a partition (the network-namespace test elected two leaders that way).
//! - events: to the [`Handler`]. `ConfirmLeader` asks [`Handler::confirm_leader`]; a deferred
//!   answer not given within `confirm_timeout` (default `election_timeout_min`) is a denial.
//!
//! `docs/host.md` states the same contract for hosts that drive the core themselves.
//!
//! ## A dead leader's refused port
//!
//! A follower whose leader has been quiet for 1.5 heartbeat intervals sends it an empty datagram
//! (a probe, which a receiving runtime ignores), then one per heartbeat interval. The socket has
//! `IP_RECVERR` (and `IPV6_RECVERR`) set, so an ICMP port-unreachable answer is read from its
//! error queue with the address it was sent to, and reported to the engine as
//! `peer_down(leader, refused)`: the followers campaign when their lease promise ends instead of
//! after an election timeout (docs/protocol.md, "Failover when the leader's port refuses").
//!
//! ## Graceful stop
//!
//! [`Handle::stop`]: a leader hands leadership to the core's `transfer_target()` (of the peers
//! that acknowledged one of its last two heartbeat rounds and are not reported refused, the one
//! heard from most recently) and waits until another node is known to lead, at most
//! `handover_timeout` (default `election_timeout_max`); a follower stops at once. While stopping
//! it denies any confirmation, so it cannot become leader again. Last, it sends every peer a
//! goodbye (one zero byte, docs/wire.md), which their runtimes report as `peer_down(refused)`: a
//! leader stopped right after will not hand over to it. Then `Stopped` is delivered and the
//! thread ends.
//!
//! ## DNS names
//!
//! Ids and peers may be DNS names (`node-1.tenure.default.svc:7946`). Names are resolved on a
//! resolver thread, never on the loop: at start, again after a failure (backoff from 100 ms to
//! 5 s), every `resolve_interval` (default 10 s), after a send failure, and when a datagram comes
//! from an address no peer resolves to (a peer that restarted under a new IP). A declared peer
//! that left the view (its `no_connection` ghost expired) is declared again when it resolves or
//! is heard from again. An id that is a name binds every interface (`[::]`, else `0.0.0.0`)
//! unless `bind` is given.
//!
//! ## The state file
//!
//! One format, one writer: `{"term": 4, "voted_for": "127.0.0.1:7002"}` (`null` when no vote).
//! The old one-line format `4 127.0.0.1:7002` (`-` for no vote) is read too and rewritten as JSON
//! at start. A symlinked path is resolved to the real file, which is the one written; the file
//! `REAL.lock` next to it is locked exclusively for the runtime's lifetime, so two processes can
//! never share one state file whatever paths name it, and removed when the runtime ends. The
//! temporary file is `REAL.tmp`.
//!
//! ## HTTP sidecar and metrics
//!
//! With [`RuntimeConfig::http`] (`--http IP:PORT`) a `tiny_http` thread serves `GET /leader`,
//! `/healthz`, `/readyz` ([`ReadyWhen`]) and `/metrics` (Prometheus text format), reading only
//! the snapshot the loop publishes after every round; [`Handle::metrics`] is that snapshot
//! (counters computed once, here). Cargo feature `http` (default). `docs/http.md` lists every
//! endpoint, field and metric.
//!
//! ## Pod label (Kubernetes)
//!
//! With [`RuntimeConfig::pod_label`] (`--pod-label KEY`, `pod_label=` in Python; cargo feature
//! `kubernetes`) a thread labels this node's own pod `KEY=true` while it leads and `false`
//! otherwise, following the runtime's events, so that a Service selecting the label routes to the
//! leader's pod; it clears the label before [`Handle::wait`] returns after a stop.
//!
//! ## Leader-work failure policy
//!
//! The application reports that its leader-only work failed with [`Handle::leader_work_failed`]
//! (retried after a backoff, up to `max_failures` times in one leadership) or
//! [`Handle::leadership_failed`] (the whole leadership failed: an `on_leader` callback raised).
//! The runtime counts and decides ([`FailurePolicy`], in [`RuntimeConfig::failure_policy`]): it
//! answers with a [`LeaderWorkVerdict`], hands leadership over and campaigns last for a while
//! (rate-limited warning `leader_work_failed`, metrics `leader_work_failures` and
//! `leader_work_step_downs`), and never gives up unless the user set `max_step_downs`: then that
//! many consecutive failed leaderships stop the node ([`RuntimeError::LeaderWorkFailed`] as
//! `Fatal`, a leader handing over first). The hosts only run the work and convert.
//!
//! ## Leadership and the lease
//!
//! [`RuntimeEvent::Leader`] is delivered once the lease holds (a quorum acknowledged a heartbeat
//! of the term), so leader work in every host starts with a valid lease.
//! [`Handle::lease_valid`] and [`Handle::lease_remaining_ms`] are the one computation of validity
//! and remaining time (the bindings, the HTTP sidecar and the command runner read them). The core's
//! confirm gate is always on: the runtime answers it (denying while stopping) and asks the
//! [`Handler`] only when it defers.
//!
//! ## Warnings
//!
//! Delivered as [`RuntimeEvent::Warning`] and logged at warn level, at most one per code and
//! subject every 10 s (the message counts the ones suppressed). Codes: the core's configuration
//! warnings (`small_min_cluster_size`, `slow_heartbeat`), `dropped_<reason>` for each drop reason
//! of the core (`dropped_wrong_cluster`: another cluster id; `dropped_bad_mac`: another key;
//! `dropped_sender_mismatch`: the sender's id does not match its address, see `--bind`/NAT;
//! `dropped_unknown_peer`: a sender missing from `--peer`; ...), `view_too_small`, `silent_peers`
//! and `waiting_for_quorum` (see `quorum.rs` and `docs/http.md`), `duplicate_peer`,
//! `peer_unreachable`, `unresolved_name`, `confirm_timeout`, `leader_work_failed`, `socket_error`,
//! `handover_timeout`, `failure_detection_off` (the socket cannot report ICMP errors), and, from
//! the command line, `bad_control_line`, the core's error codes for refused commands, and for the
//! leader-only command (`-- CMD ARGS...`, see `docs/command.md`) `command_failed` and
//! `command_backoff`.
#![deny(missing_docs)]
#![deny(unsafe_code)]

// docs/host.md's run loop is compiled as a doctest (`no_run`: it would wait forever), so it cannot
// go stale.
#[cfg(doctest)]
#[doc = include_str!("../../docs/host.md")]
struct HostDocDoctests;

pub mod cli;
mod clock;
mod config;
mod engine;
mod error;
mod event;
mod handle;
#[cfg(feature = "http")]
mod http;
pub mod metrics;
mod notice;
mod os;
#[cfg(feature = "kubernetes")]
mod pod_label;
mod policy;
mod probe;
mod process;
mod quorum;
mod resolve;
mod runloop;
mod sidecar;
mod start;
pub mod state;
pub mod vocabulary;
mod warn;

/// The leader-only command's supervisor as a program of its own: `args` are the arguments after
/// the program name, `__supervise GRACE_MS -- CMD ARGS...` (the protocol of [`cli::main`]'s
/// re-invocation). The `tenure-supervise` binary is this function alone, so Python and Node.js hosts
/// supervise with a small native process instead of a second interpreter. Returns the exit status.
#[doc(hidden)]
pub fn supervise_main(args: &[String]) -> i32 {
    match args.split_first() {
        Some((sub, rest)) if sub == process::supervisor::SUBCOMMAND => process::supervisor::main(rest),
        _ => {
            eprintln!(
                "tenure-supervise: the supervisor of tenure's leader-only command, started by the tenure runtime \
                 ({} GRACE_MS -- CMD ARGS...; stdin a socket)",
                process::supervisor::SUBCOMMAND
            );
            2
        }
    }
}

pub use config::{
    parse_address, parse_bind, parse_http, parse_id, parse_peer, Address, Host, ReadyWhen, RuntimeConfig,
    DEFAULT_RESOLVE_INTERVAL,
};
pub use engine::{native, Engine, EngineInit, Polled};
pub use error::{AddressProblem, RuntimeError};
pub use event::{Confirm, Handler, RuntimeEvent, CONFIRM_LEADER};
pub use handle::Handle;
pub use metrics::{FailoverHistogram, Metrics};
pub use policy::{FailurePolicy, LeaderWorkVerdict};
pub use process::command::DEFAULT_KILL_GRACE;
pub use start::spawn;

use std::time::Instant;

/// The version of this runtime (the whole project's version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The runtime's clock: monotonic milliseconds since the runtime started.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    epoch: Instant,
}

impl Clock {
    pub(crate) fn new() -> Self {
        Clock { epoch: Instant::now() }
    }
    pub(crate) fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
    pub(crate) fn instant(&self, ms: u64) -> Instant {
        self.epoch + std::time::Duration::from_millis(ms)
    }
}
