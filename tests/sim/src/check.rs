//! The invariants, checked after every step of every simulation (every input a node handles, every
//! output its host carries out, every crash and restart).
//!
//! What a step is: the host carries a node's outputs out **one at a time, in order**, and a crash
//! point can stop it between any two of them (a `Persist` done, the sends after it lost). A restart
//! starts from the last `Persist` actually carried out. Every host has its own clock (see
//! [`crate::clock`]); in the randomised runs each runs at a rate within ±ρ
//! (`max_clock_drift_ppm`) of real time. Real time is the simulator's clock; the checks below are
//! in real time and convert a node's readings with its own clock.
//!
//! - **S1** one leader per term: a global `term → leader` record over the whole run. Enforced
//!   while the run is inside the scope of SPEC's guarantee: every node's view has exactly the
//!   members it started with (a `no_connection` ghost still counts until it actually expires; the
//!   checker watches the view size, so a ghost expiry, `leave`, `terminated` or an admitted
//!   stranger ends the scope) and no node restarted without its durable state. In every run, in
//!   or out of scope, a node becomes leader only with the votes of a majority of its own view
//!   (**S1-view**), counted from the granted `VoteReply`s actually sent.
//! - **S2** one vote per term per voter, **from the wire**: two granted `VoteReply`s a voter put on
//!   the wire for different candidates in one term are a violation, across restarts (forgotten
//!   only by a restart without durable state). Also: a node's term never goes back while it
//!   runs, nor below its last carried-out `Persist` when it restarts.
//! - **S3** no node is leader while its view is smaller than `min_cluster_size`.
//! - **S4** (check quorum) a leader is no longer leader once, for longer than
//!   `election_timeout_min + heartbeat_interval`, it has had no quorum evidence — checked from
//!   the first moment of a leadership, with no grace for a new one. Evidence is only an
//!   acknowledgement, in the leader's term, echoing a heartbeat it sent, dated when that
//!   heartbeat left, or a granted `VoteReply` of its term received while it campaigned, dated
//!   when its campaign sent the `Vote` requests (so a late duplicate, a slow reply or a replayed
//!   datagram is old evidence, never fresh); a quorum of its view, counting itself, must have
//!   answered within the window. The core looks back one `election_timeout_min` when leadership
//!   starts and at each heartbeat tick, so that is the exact bound (plus the difference between
//!   the leader's clock and real time over that span, at most ρ of it, which the checker allows);
//!   a view that grew restarts the clock.
//! - **lease** (in S1's scope): whenever a leader reports `lease_deadline() = d` while its clock
//!   has not passed `d`, the lease of its term runs until the first real instant at which its
//!   clock reads `d + 1`. No other node becomes leader of a higher term before the latest such
//!   instant of any lower term. A leader that calls `transfer_leadership` ends its lease at that
//!   instant.
//! - **fencing** each node's fencing token strictly increases from one leadership to the next,
//!   across restarts with durable state (a restart without it forgets the node's history).
//! - **terms** no node's term comes within 2^41 of `MAX_TERM` (2^53 − 1): the term space is
//!   never exhausted (a term may rise by at most `MAX_TERM_JUMP` = 2^32 per message, and a run
//!   sees far fewer than 2^9 such jumps).
//! - **L1** (checked by the run driver, [`crate::random`], and the conformance tests): once the
//!   network is stable and a majority is up and connected, exactly one leader exists within
//!   [`L1_SETTLE_BOUND_ELECTION_TIMEOUTS`] election timeouts, every connected node follows it, and
//!   it keeps leading while the network stays so (strangers still writing to it). After a silent
//!   crash of the leader of such a cluster, a new leader exists within [`l1_failover_bound_ms`]
//!   ([`L1_FAILOVER_ROUNDS`] election rounds, clock drift included), even while a recorder
//!   replays the dead leader's last datagrams of every kind (heartbeats, the vote requests of its
//!   campaign) and any other recorded datagram. The conformance tests check the tighter one-round bound
//!   `election_timeout_max + L1_FAILOVER_BOUND_RTTS` round trips on fixed seeds without drift.
//! - **events** every role change is announced with the right event (`BecameLeader`,
//!   `BecameFollower` naming the leader known).
//! - **gate** (wire versions) no node addresses a message of a kind newer than the oldest wire
//!   version (a `DeathNotice`, in its death notices or any output), `Hello` apart, to a peer
//!   whose run it heard from speaks only the oldest version (v0.1.0). Checked where the core
//!   decides: every send, and every arming of a leader's watchdog.
//! - **observer** (runs with observers) an observer is never leader or candidate, grants no vote
//!   and puts nothing on the wire but `Observe`; no member's view ever holds an observer (so none
//!   counts toward a view size, a quorum or check quorum's evidence). That observers learn the
//!   leader is L1's: once the cluster is stable, every connected running node follows the leader,
//!   observers included.
//! - A crashed leader's watchdog ends the lease of its term at the crash (as a transfer ends it
//!   at the transfer): the death is what its notices vouch for. A watchdog that sends while its
//!   node lives ends nothing, so the lease invariant catches it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use tenure::wire::{Envelope, Message, MAX_TERM};
use tenure::{DurableState, Event, Node};

use crate::sim::SimNode;

/// L1 failover bound: a new leader within `election_timeout_max` plus this many round trips after
/// the silent crash of the leader of a stable cluster (one for pre-vote, one for the vote).
pub const L1_FAILOVER_BOUND_RTTS: u64 = 2;

/// How many election rounds [`l1_failover_bound_ms`] allows.
pub const L1_FAILOVER_ROUNDS: u64 = 5;

/// L1's checked failover bound, in real ms: after the silent crash of the leader of a stable
/// cluster (every member up and connected, one-way latency at most `one_way`, clock rates within
/// ±ρ), a new leader exists within [`L1_FAILOVER_ROUNDS`] election rounds:
///
/// `one_way + L1_FAILOVER_ROUNDS · (⌈election_timeout_max / (1 − ρ)⌉ + 2·(2·one_way))`
///
/// The last heartbeat reaches the followers at most `one_way` after the crash; a round is one
/// randomised election timeout (at most `election_timeout_max` of the slowest clock) plus a
/// pre-vote and a vote round trip. A round fails when two survivors time out within about a round
/// trip of each other (a split vote) or when voters whose promise or stickiness has not run out
/// yet (slower clocks) refuse; the next round follows. Rounds fail independently with a
/// probability that grows with `one_way / (election_timeout_max − election_timeout_min)`: about
/// 5 % at 3 nodes and 20 ms RTT (3 in 1,000 failovers needed a third round), far less at 2 ms.
/// Five rounds make a violation an event of about one in a million failovers at 20 ms RTT: the
/// bound is checked, not proven, and `make soak` reports every run that exceeded it.
pub fn l1_failover_bound_ms(election_timeout_max: u64, rho_ppm: u32, one_way: u64) -> u64 {
    let slow = (u128::from(election_timeout_max) * 1_000_000).div_ceil(1_000_000 - u128::from(rho_ppm.min(999_999)));
    let round = u64::try_from(slow).unwrap_or(u64::MAX) + 2 * (2 * one_way);
    one_way + L1_FAILOVER_ROUNDS * round
}

/// L1 convergence bound after the network becomes stable again (heal, restarts, no loss), in
/// units of `election_timeout_max`: exactly one leader, followed by every connected node.
pub const L1_SETTLE_BOUND_ELECTION_TIMEOUTS: u64 = 10;

/// Every invariant name a [`Violation`] can carry (`events`: the node's events disagree with its
/// role changes).
pub const INVARIANTS: [&str; 12] =
    ["S1", "S1-view", "S2", "S3", "S4", "lease", "fencing", "terms", "L1", "events", "gate", "observer"];

/// A broken invariant, with the seed and the last few hundred log lines.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The run's seed.
    pub seed: u64,
    /// Simulated time of the failing step.
    pub at: u64,
    /// Which invariant (`S1`, `S1-view`, `S2`, `S3`, `S4`, `L1`).
    pub invariant: &'static str,
    /// What happened.
    pub detail: String,
    /// The event log tail.
    pub log: Vec<String>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "VIOLATION of {} at {} ms, seed {}: {}", self.invariant, self.at, self.seed, self.detail)?;
        writeln!(f, "--- last {} log lines ---", self.log.len())?;
        for l in &self.log {
            writeln!(f, "{l}")?;
        }
        write!(f, "--- end of log (seed {}) ---", self.seed)
    }
}

/// State the checker keeps over a whole run.
#[derive(Debug, Clone)]
pub struct Checker {
    /// S1: the leader of each term.
    pub term_leader: BTreeMap<u64, String>,
    /// Whether the run is still within S1's scope.
    pub s1_in_scope: bool,
    /// S2: the candidate each voter granted its vote to in each term, from the `VoteReply`s it
    /// actually sent (forgotten only by a restart without durable state).
    votes: BTreeMap<(String, u64), String>,
    /// S2: highest term each durable node was seen in since it last started (a restart goes back
    /// to the last carried-out `Persist`).
    max_term: BTreeMap<String, u64>,
    /// Fencing: the highest fencing token each node has held (across restarts with state).
    fence: BTreeMap<String, u64>,
    /// Lease: for each term, the latest real instant until which its leader reported a lease
    /// (deadlines observed while in the future, converted from the leader's clock), and who.
    lease: BTreeMap<u64, (u64, String)>,
    /// S1 scope: the view size each node started with (a smaller view means a member was
    /// actually removed; a larger one that a stranger was admitted).
    first_view: BTreeMap<String, usize>,
    /// S1-view: voters that sent a granted vote reply, by (term, candidate).
    grants: BTreeMap<(u64, String), BTreeSet<String>>,
    /// S4: the freshest evidence (a real instant) each node had from each peer: an acknowledged
    /// heartbeat's send time, or a granted vote's request time.
    heard: BTreeMap<(String, String), u64>,
    /// S4: when each (node, term)'s campaign sent its first `Vote` request (real time).
    asked: BTreeMap<(String, u64), u64>,
    /// S4: since when each node leads (term, since), and its view size with the time it changed.
    leading: BTreeMap<String, (u64, u64)>,
    view: BTreeMap<String, (usize, u64)>,
    /// The observers of the run (`Sim::add_observer`), for the observer invariant.
    pub observers: BTreeSet<String>,
}

impl Default for Checker {
    fn default() -> Self {
        Checker {
            term_leader: BTreeMap::new(),
            s1_in_scope: true,
            votes: BTreeMap::new(),
            max_term: BTreeMap::new(),
            grants: BTreeMap::new(),
            fence: BTreeMap::new(),
            lease: BTreeMap::new(),
            first_view: BTreeMap::new(),
            heard: BTreeMap::new(),
            asked: BTreeMap::new(),
            leading: BTreeMap::new(),
            view: BTreeMap::new(),
            observers: BTreeSet::new(),
        }
    }
}

impl Checker {
    /// The run leaves S1's scope (a member removed, views diverged, or a restart without state):
    /// from now on only S1-view and convergence (L1) are checked.
    pub fn leave_s1_scope(&mut self) {
        self.s1_in_scope = false;
    }

    /// A node restarted without its durable state: its past votes and terms are forgotten (the
    /// documented hazard), and S1 no longer holds.
    pub fn forget_durable(&mut self, id: &str) {
        self.votes.retain(|(n, _), _| n != id);
        // It may campaign again in a term it campaigned in before: that campaign asks anew.
        self.asked.retain(|(n, _), _| n != id);
        self.max_term.remove(id);
        self.fence.remove(id);
        self.leave_s1_scope();
    }

    /// A node (re)started, from `restored` if any: its term restarts from there.
    pub(crate) fn on_start(&mut self, id: &str, restored: Option<&DurableState>) {
        match restored {
            Some(s) => {
                self.max_term.insert(id.to_string(), s.term);
            }
            None => {
                self.max_term.remove(id);
            }
        }
    }

    /// The leader of `term` called `transfer_leadership` at real instant `now`: its lease ends.
    pub(crate) fn on_transfer(&mut self, term: u64, now: u64) {
        if let Some((until, _)) = self.lease.get_mut(&term) {
            *until = (*until).min(now);
        }
    }

    /// Leader `node` accepted `from`'s acknowledgement of a heartbeat it sent at real instant `sent`.
    pub(crate) fn on_evidence(&mut self, sent: u64, node: &str, from: &str) {
        let e = self.heard.entry((node.to_string(), from.to_string())).or_insert(sent);
        *e = (*e).max(sent);
    }

    /// Candidate `node` accepted `from`'s granted vote of `term`: evidence dated when its campaign
    /// asked (its first `Vote` request of the term; a grant cannot be older than that).
    pub(crate) fn on_vote_evidence(&mut self, node: &str, term: u64, from: &str) {
        if let Some(&asked) = self.asked.get(&(node.to_string(), term)) {
            self.on_evidence(asked, node, from);
        }
    }

    pub(crate) fn on_persist(&mut self, _node: &str, _s: &DurableState) {}

    /// A datagram the host actually put on the wire at real instant `now`. S2 is checked here,
    /// from the grants sent; S4 notes when each campaign asked for votes.
    pub(crate) fn on_send(&mut self, now: u64, from: &str, to: &str, env: &Envelope) -> Option<(&'static str, String)> {
        if self.observers.contains(from) && !matches!(env.message, Message::Observe { .. }) {
            return Some(("observer", format!("observer {from} sent a {} to {to}", env.message.kind())));
        }
        if let Message::Vote { .. } = env.message {
            self.asked.entry((from.to_string(), env.term)).or_insert(now);
        }
        if let Message::VoteReply { granted: true } = env.message {
            self.grants.entry((env.term, to.to_string())).or_default().insert(from.to_string());
            match self.votes.get(&(from.to_string(), env.term)) {
                Some(prev) if prev != to => {
                    return Some((
                        "S2",
                        format!("{from} sent granted votes to {prev} and to {to} in term {}", env.term),
                    ));
                }
                Some(_) => {}
                None => {
                    self.votes.insert((from.to_string(), env.term), to.to_string());
                }
            }
        }
        None
    }

    pub(crate) fn on_event(&mut self, id: &str, e: &Event, node: Option<&Node>) -> Option<(&'static str, String)> {
        if let (Event::BecameLeader { term }, Some(node)) = (e, node) {
            let view = node.view();
            let need = view.len() / 2 + 1;
            let granted = self.grants.get(&(*term, id.to_string()));
            let votes = view.iter().filter(|v| *v == id || granted.is_some_and(|g| g.contains(*v))).count();
            if votes < need {
                return Some((
                    "S1-view",
                    format!(
                        "{id} became leader of term {term} with {votes} vote(s) from its view of {} (needs {need}); granted by {:?}",
                        view.len(),
                        granted
                    ),
                ));
            }
        }
        None
    }

    /// The observer invariant over every running node (nothing to check in a run without any).
    pub(crate) fn observers_after_step(&self, nodes: &[SimNode]) -> Option<(&'static str, String)> {
        if self.observers.is_empty() {
            return None;
        }
        for n in nodes {
            let Some(node) = &n.node else { continue };
            if self.observers.contains(&n.id) {
                if node.role() != tenure::Role::Observer || node.voted_for().is_some() {
                    let detail = format!("observer {} is {:?}, voted for {:?}", n.id, node.role(), node.voted_for());
                    return Some(("observer", detail));
                }
            } else if let Some(o) = node.view().into_iter().find(|v| self.observers.contains(v)) {
                return Some(("observer", format!("{} counts observer {o} in its view of {}", n.id, node.view_size())));
            }
        }
        None
    }

    /// Checks S1–S4 over every node; the first broken invariant is returned.
    pub(crate) fn after_step(&mut self, now: u64, nodes: &[SimNode]) -> Option<(&'static str, String)> {
        for n in nodes {
            let Some(node) = &n.node else {
                self.leading.remove(&n.id);
                continue;
            };
            let id = &n.id;
            let term = node.term();
            // S2 (terms; votes are checked on the wire): a node's term never goes back while it
            // runs, nor below its last carried-out `Persist` when it restarts.
            if let Some(&max) = self.max_term.get(id) {
                // An observer's term is no promise: it may go back to the leader it hears.
                if term < max && !self.observers.contains(id) {
                    return Some(("S2", format!("{id}'s term went back from {max} to {term}")));
                }
            }
            self.max_term.insert(id.clone(), term);
            // Term space: no run comes anywhere near exhausting it (each message may raise a term
            // by at most MAX_TERM_JUMP; a run sees far fewer than 2^20 such jumps).
            if term > MAX_TERM - (MAX_TERM >> 12) {
                return Some(("terms", format!("{id} is in term {term}, near the end of the term space ({MAX_TERM})")));
            }
            // View changes (S4's clock), and S1's scope: S1 holds while every view keeps the
            // members it started with (a `no_connection` ghost still counts until it expires).
            let vs = node.view_size();
            let first = *self.first_view.entry(id.clone()).or_insert(vs);
            if vs != first && self.s1_in_scope {
                self.s1_in_scope = false;
            }
            match self.view.get(id) {
                Some((size, _)) if *size == vs => {}
                _ => {
                    self.view.insert(id.clone(), (vs, now));
                }
            }
            if !node.is_leader() {
                self.leading.remove(id);
                continue;
            }
            // S1.
            match self.term_leader.get(&term) {
                Some(l) if l != id && self.s1_in_scope => {
                    return Some(("S1", format!("{l} and {id} both became leader of term {term}")));
                }
                Some(_) => {}
                None => {
                    self.term_leader.insert(term, id.clone());
                }
            }
            // S3.
            let min = node.config().min_cluster_size as usize;
            if vs < min {
                return Some(("S3", format!("{id} leads with a view of {vs} < min_cluster_size {min}")));
            }
            // S4 (a paused node cannot act; it is checked once it runs again).
            match self.leading.get(id) {
                Some((t, _)) if *t == term => {}
                _ => {
                    // A new leadership (or the first step after a restart): fencing and lease.
                    self.leading.insert(id.clone(), (term, now));
                    let token = node.fencing_token().unwrap_or(0);
                    if let Some(&prev) = self.fence.get(id) {
                        if token <= prev {
                            return Some((
                                "fencing",
                                format!("{id} leads with fencing token {token}, not above its earlier {prev}"),
                            ));
                        }
                    }
                    self.fence.insert(id.clone(), token);
                    if self.s1_in_scope {
                        if let Some((t, (until, holder))) =
                            self.lease.range(..term).find(|(_, (until, h))| *until > now && h != id)
                        {
                            return Some((
                                "lease",
                                format!(
                                    "{id} became leader of term {term} at {now} ms, before the lease that {holder} reported for term {t} ran out (at {until} ms, real time)"
                                ),
                            ));
                        }
                    }
                }
            }
            if n.paused_until.is_some() {
                continue;
            }
            let view = node.view();
            let need = (view.len() / 2 + 1).saturating_sub(1);
            if need == 0 {
                continue;
            }
            let mut times: Vec<u64> = view
                .iter()
                .filter(|p| *p != id)
                .filter_map(|p| self.heard.get(&(id.clone(), p.clone())).copied())
                .collect();
            times.sort_unstable_by(|a, b| b.cmp(a));
            let evidence = times.get(need - 1).copied().unwrap_or(0);
            let cfg = node.config();
            let view_since = self.view.get(id).map_or(0, |v| v.1);
            // The leader measures the window with its own clock: allow for a slow one (ρ).
            let rho = u64::from(crate::compat::max_clock_drift_ppm(&n.config).min(999_999));
            let slow = |ms: u64| (ms * 1_000_000).div_ceil(1_000_000 - rho);
            // From the first moment of a leadership: its evidence is the votes that won it (dated
            // when they were asked for) and the acknowledgements since. Only a grown view has one
            // `election_timeout_min` to collect evidence from its new quorum.
            let from = evidence.max(view_since) + slow(cfg.election_timeout_min);
            if now > from + slow(cfg.heartbeat_interval) {
                return Some((
                    "S4",
                    format!(
                        "{id} still leads term {term} at {now} ms; its quorum evidence lapsed at {} ms (heard: {times:?}, needs {need})",
                        evidence + cfg.election_timeout_min
                    ),
                ));
            }
        }
        None
    }

    /// Lease: records the deadline every running leader reports while it is still in the future,
    /// as the real instant at which the leader's own clock passes it.
    pub(crate) fn lease_after_step(&mut self, now: u64, nodes: &[SimNode]) -> Option<(&'static str, String)> {
        for n in nodes {
            let Some(node) = &n.node else { continue };
            let Some(d) = node.lease_deadline() else { continue };
            if d < n.clock.local(now) {
                continue;
            }
            // The leader is sure until its clock has passed `d`: the first real instant at which
            // it reads `d + 1`.
            let until = n.clock.real_at(d.saturating_add(1));
            let e = self.lease.entry(node.term()).or_insert((until, n.id.clone()));
            if until > e.0 {
                *e = (until, n.id.clone());
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::l1_failover_bound_ms;

    /// The figure docs/protocol.md quotes for the defaults (300 ms, ρ = 1 %, 2 ms RTT).
    #[test]
    fn failover_bound_at_the_defaults() {
        let one_way = crate::NetConfig::rtt(2).max_one_way();
        assert_eq!(l1_failover_bound_ms(300, 10_000, one_way), 1562);
    }
}
