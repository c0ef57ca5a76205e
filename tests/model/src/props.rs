//! The properties, checked on every state the model checker reaches.
//!
//! - **one-leader** (S1): at most one node becomes leader of a term (while every view keeps its
//!   members: a `terminated` report or a `leave` ends the scope, as SPEC states).
//! - **one-vote** (S2): no voter gives its vote of one term to two candidates, counted from the
//!   granted `VoteReply`s actually put on the wire and the self-votes actually persisted.
//! - **fencing**: each leadership begins with a fencing token above every token of the leaderships
//!   before it, so a fencing checker never sees one go backwards.
//! - **lease**: no node becomes leader of a higher term before the real instant at which the
//!   clock of a leader that reported a lease (`lease_deadline() = d` while its clock had not
//!   passed `d`) reads `d + 1`; a transfer ends the lease when it is called.
//! - **lease-unique**: at most one node reports itself leader with a lease its own clock has not
//!   passed.
//! - **check-quorum** (S4): a leader without quorum evidence (acknowledgements, in its term, of
//!   heartbeats it sent, dated when they left) for `election_timeout_min + heartbeat_interval`
//!   (each stretched by ρ for a slow clock) is no longer leader.
//! - **liveness**: from the state, once the network is stable (every datagram delivered in 1 ms,
//!   crashed nodes restarted, hosts granting, timers on time), a leader followed by every node
//!   exists within [`SETTLE_BOUND_TIMEOUTS`] election timeouts; then its silent crash, while an
//!   adversary replays its last heartbeats, is followed by a new leader within the simulator's L1
//!   failover bound. Checked as a safety property of a deterministic continuation (bounded paths
//!   only: an exhaustive checker cannot decide `eventually` on cyclic ones).
//! - **gate** (scopes with a node of the oldest wire version): no node addresses that node a
//!   datagram of a newer version other than a `Hello` (a death notice, in particular).
//! - **witness** (scopes with priorities): a witness (`never_lead`) is never candidate or leader
//!   and never asks for a vote or a pre-vote.
//! - **preempt** (scopes with priorities): a `TimeoutNow` a node sends on its own is a
//!   preemption, and a preemption is a transfer: the node led, stops leading in the same input
//!   (its lease ends there), and hands over to a member of higher priority that may lead. The
//!   liveness probe adds that the stable network ends with the highest priority leading, and no
//!   stretch without a leader on the way outlasts a transfer's ([`TRANSFER_GAP_MS`]).
//! - **observer** (scopes with an observer): the observer stays one, never votes, sends nothing
//!   but `Observe`, and no member's view holds it (check-quorum counts the members only).

use stateright::Property;
use tenure::wire::Message;
use tenure_sim::scenario::Input;

use crate::model::TenureModel;
use crate::step::{name, Rec};
use crate::{Broken, Opts, State, IDS};

/// Every property's name, in the order they are checked.
pub const NAMES: [&str; 11] = [
    "one-leader",
    "one-vote",
    "fencing",
    "lease",
    "lease-unique",
    "check-quorum",
    "liveness",
    "gate",
    "witness",
    "preempt",
    "observer",
];

/// The `sometimes` property that shows a bound reaches an election at all.
pub const ELECTED: &str = "a leader is elected";
/// The `sometimes` property that shows a bound reaches a preemption.
pub const PREEMPTED: &str = "a leader preempts to a member of higher priority";

/// A leadership transfer (a preemption is one) leaves the cluster leaderless for at most two
/// round trips (docs/protocol.md, "Liveness bound (L1)": timeout-now, vote, reply); the model's
/// network delivers in 1 ms, a round trip of 2 ms.
pub const TRANSFER_GAP_MS: u64 = 2 * 2;

/// Liveness: a leader followed by every node within this many `election_timeout_max` of the
/// network becoming stable (the simulator's L1 settle bound).
pub const SETTLE_BOUND_TIMEOUTS: u64 = tenure_sim::L1_SETTLE_BOUND_ELECTION_TIMEOUTS;

/// The stateright properties: one per name, each true while the state breaks nothing of that name.
pub fn properties() -> Vec<Property<TenureModel>> {
    vec![
        Property::always("one-leader", |m, s| {
            // Evaluated first, once per checked state.
            m.checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            ok(s, "one-leader")
        }),
        Property::always("one-vote", |_, s| ok(s, "one-vote")),
        Property::always("fencing", |_, s| ok(s, "fencing")),
        Property::always("lease", |_, s| ok(s, "lease")),
        Property::always("lease-unique", |_, s| ok(s, "lease-unique")),
        Property::always("check-quorum", |_, s| ok(s, "check-quorum")),
        Property::always("gate", |_, s| ok(s, "gate")),
        Property::always("witness", |_, s| ok(s, "witness")),
        Property::always("preempt", |_, s| ok(s, "preempt")),
        Property::always("observer", |_, s| ok(s, "observer")),
        Property::always("liveness", |m, s| {
            ok(s, "liveness")
                && (!s.ghost.s1_scope || s.fingerprint() % m.opts.probe_every != 0 || probe(&m.opts, s).is_ok())
        }),
        // Not a requirement: shows the bound reaches elections at all (a vacuous run would pass).
        Property::sometimes(ELECTED, |_, s: &State| {
            s.hosts.iter().any(|h| h.node.as_ref().is_some_and(|r| r.node.is_leader()))
        }),
        // Likewise: shows a scope with priorities reaches a preemption (one that never preempts
        // would check `preempt` on nothing).
        Property::sometimes(PREEMPTED, |_, s: &State| s.ghost.preempted),
    ]
}

fn ok(s: &State, name: &str) -> bool {
    s.broken.as_ref().is_none_or(|b| b.name != name)
}

/// ρ-stretched span: the real time a slow clock (rate 1 − ρ) takes to count `ms`.
fn slow(opts: &Opts, ms: u64) -> u64 {
    let rho = u64::from(opts.config(0).max_clock_drift_ppm.min(999_999));
    (ms * 1_000_000).div_ceil(1_000_000 - rho)
}

pub(crate) fn set_broken(broken: &mut Option<Broken>, name: &'static str, why: String) {
    if broken.is_none() {
        *broken = Some(Broken { name, why });
    }
}

impl State {
    /// The checks after every step (new leaderships, check-quorum, leases).
    #[allow(clippy::needless_range_loop)] // `i` indexes the hosts and the ghost's per-node arrays alike
    pub fn check(&mut self, opts: &Opts) {
        let now = self.now;
        for i in 0..self.hosts.len() {
            let Some(run) = &self.hosts[i].node else {
                self.ghost.leading[i] = None;
                continue;
            };
            let node = &run.node;
            if let Some((name, why)) = roles(opts, i, node) {
                set_broken(&mut self.broken, name, why);
            }
            let vs = node.view_size();
            if self.ghost.view[i].0 != vs {
                self.ghost.view[i] = (vs, now);
            }
            if !node.is_leader() {
                self.ghost.leading[i] = None;
                continue;
            }
            let term = node.term();
            let id = i as u8;
            let since = match self.ghost.leading[i] {
                Some((t, since)) if t == term => since,
                _ => {
                    self.ghost.leading[i] = Some((term, now));
                    if vs < node.config().min_cluster_size as usize {
                        let why = format!("{} leads with a view of {vs}", IDS[i]);
                        set_broken(&mut self.broken, "one-leader", why);
                    }
                    match self.ghost.term_leader.binary_search_by_key(&term, |e| e.0) {
                        Ok(k) if self.ghost.term_leader[k].1 != id && self.ghost.s1_scope => {
                            let why = format!(
                                "{} and {} both became leader of term {term}",
                                name(self.ghost.term_leader[k].1),
                                IDS[i]
                            );
                            set_broken(&mut self.broken, "one-leader", why);
                        }
                        Ok(_) => {}
                        Err(k) => self.ghost.term_leader.insert(k, (term, id)),
                    }
                    let token = node.fencing_token().unwrap_or(0);
                    if self.ghost.s1_scope && token <= self.ghost.fence_max {
                        let why = format!(
                            "{} leads with fencing token {token}, not above the {} a fencing checker already saw",
                            IDS[i], self.ghost.fence_max
                        );
                        set_broken(&mut self.broken, "fencing", why);
                    }
                    self.ghost.fence_max = self.ghost.fence_max.max(token);
                    if self.ghost.s1_scope {
                        if let Some(&(t, until, holder)) =
                            self.ghost.lease.iter().find(|(t, until, h)| *t < term && *until > now && *h != id)
                        {
                            let why = format!(
                                "{} became leader of term {term} at {now} ms (real), before the lease {} reported for term {t} ran out at {until} ms",
                                IDS[i],
                                name(holder)
                            );
                            set_broken(&mut self.broken, "lease", why);
                        }
                    }
                    // Check-quorum from the first moment: the votes that won the term (or any
                    // newer evidence) are no older than `election_timeout_min` of the new
                    // leader's clock (one more millisecond for whole-ms clock readings).
                    let evidence = self.evidence(opts, i, node);
                    let limit = slow(opts, node.config().election_timeout_min + 1);
                    if evidence.is_some_and(|e| now > e + limit) {
                        let why = format!(
                            "{} became leader of term {term} at {now} ms on quorum evidence from {} ms, older than election_timeout_min",
                            IDS[i],
                            evidence.unwrap_or(0)
                        );
                        set_broken(&mut self.broken, "check-quorum", why);
                    }
                    now
                }
            };
            // Check-quorum: a quorum of its view (itself included) acknowledged heartbeats sent
            // within the window, or the leadership (or the view) is younger than it.
            // The window runs from the evidence itself, not from the leadership's start: the
            // votes that won it are evidence dated when they were asked for.
            let Some(evidence) = self.evidence(opts, i, node) else { continue };
            let cfg = node.config();
            let from = evidence.max(self.ghost.view[i].1) + slow(opts, cfg.election_timeout_min);
            if now > from + slow(opts, cfg.heartbeat_interval) {
                let why = format!(
                    "{} still leads term {term} at {now} ms; its quorum evidence lapsed (the quorum's newest evidence is from {evidence} ms, leading since {since} ms)",
                    IDS[i]
                );
                set_broken(&mut self.broken, "check-quorum", why);
            }
        }
        // Leases reported now, as the real instant the leader's clock passes them; and no two
        // leaders with a lease running on their own clocks.
        let mut valid = Vec::new();
        for i in 0..self.hosts.len() {
            let Some(run) = &self.hosts[i].node else { continue };
            let Some(d) = run.node.lease_deadline() else { continue };
            let clock = self.hosts[i].clock;
            if d < clock.local(now) {
                continue;
            }
            valid.push(i);
            let until = clock.real_at(d.saturating_add(1));
            let term = run.node.term();
            match self.ghost.lease.binary_search_by_key(&term, |e| e.0) {
                Ok(k) => {
                    if until > self.ghost.lease[k].1 {
                        self.ghost.lease[k] = (term, until, i as u8);
                    }
                }
                Err(k) => self.ghost.lease.insert(k, (term, until, i as u8)),
            }
        }
        if valid.len() > 1 && self.ghost.s1_scope {
            let names: Vec<&str> = valid.iter().map(|&i| IDS[i]).collect();
            set_broken(
                &mut self.broken,
                "lease-unique",
                format!("{names:?} all report a lease their clocks have not passed at {now} ms"),
            );
        }
    }
}

impl State {
    /// Leader (or winner) `i`'s quorum evidence: the real instant of the oldest of the newest
    /// answers a quorum of its view gave (votes of its campaign, acknowledgements of its
    /// heartbeats); `None` in a view that needs no answer.
    fn evidence(&self, opts: &Opts, i: usize, node: &tenure::Node) -> Option<u64> {
        // The members only: an observer in a view (the `observer` property's violation) must not
        // make a quorum of the members' answers look larger than it is.
        let mut view = node.view();
        view.retain(|p| !opts.is_observer(crate::index_of(p) as usize));
        let need = view.len() / 2;
        if need == 0 {
            return None;
        }
        let mut times: Vec<u64> = view
            .iter()
            .map(|p| crate::index_of(p) as usize)
            .filter(|&p| p != i && p < 4)
            .map(|p| self.ghost.heard[i][p])
            .collect();
        times.sort_unstable_by(|a, b| b.cmp(a));
        Some(times.get(need - 1).copied().unwrap_or(0))
    }
}

/// The roles priorities and observers promise, on node `i` now: a witness never campaigns or
/// leads; an observer is always one (it never campaigns, leads or votes), and no member's view
/// holds it (so it counts toward no view size, quorum or check-quorum evidence).
fn roles(opts: &Opts, i: usize, node: &tenure::Node) -> Option<(&'static str, String)> {
    let role = node.role();
    if opts.ranks[i].1 && matches!(role, tenure::Role::Candidate | tenure::Role::Leader) {
        let why = format!("{} is {} in term {}, but it is a witness (never_lead)", IDS[i], role.as_str(), node.term());
        return Some(("witness", why));
    }
    let o = usize::from(opts.observer?);
    if i == o && (role != tenure::Role::Observer || node.voted_for().is_some()) {
        return Some((
            "observer",
            format!("observer {} is {} (voted for {:?})", IDS[i], role.as_str(), node.voted_for()),
        ));
    }
    if i != o && node.view().iter().any(|v| *v == IDS[o]) {
        return Some((
            "observer",
            format!("{} counts observer {} in its view of {}", IDS[i], IDS[o], node.view_size()),
        ));
    }
    None
}

/// A quiet stretch of the network (`Action::Run`): datagrams in flight arrive a millisecond
/// after they were sent (the ones already in flight, a millisecond from now; none crosses a
/// partition), leaders' timers fire on time, the checks run after every step. It stops, with time
/// at that instant, as soon as a node that does not lead has its timer due or a host has a
/// `ConfirmLeader` to answer (those are the model's choices again), a property breaks, or
/// `election_timeout_max` has passed. One action for what would otherwise be a dozen deliveries
/// and heartbeat rounds: the paths it stands for are all paths of the model already.
pub fn run_quiet(opts: &Opts, s: &mut State, mut rec: Option<&mut Rec>) {
    let until = s.now + opts.config(0).validate().expect("valid").election_timeout_max;
    let mut queue: std::collections::VecDeque<(u64, crate::Dgram)> =
        std::mem::take(&mut s.net).into_iter().map(|d| (s.now + 1, d)).collect();
    loop {
        if s.broken.is_some() || s.hosts.iter().any(|h| h.confirm.is_some()) {
            break;
        }
        let (mut follower_due, mut leader_due) = (None::<u64>, None::<u64>);
        for h in &s.hosts {
            let Some(r) = &h.node else { continue };
            let Some(t) = r.node.poll_timeout() else { continue };
            let at = h.clock.real_at(t).max(s.now);
            let slot = if r.node.is_leader() { &mut leader_due } else { &mut follower_due };
            *slot = Some(slot.map_or(at, |v| v.min(at)));
        }
        let deliver = queue.front().map(|q| q.0);
        let Some(next) = [follower_due, leader_due, deliver].into_iter().flatten().min() else {
            s.now = until;
            break;
        };
        if next > until {
            s.now = until;
            break;
        }
        s.now = next;
        if follower_due == Some(next) {
            break;
        }
        if deliver == Some(next) {
            let (_, d) = queue.pop_front().expect("front");
            let from = IDS[usize::from(d.from)].to_string();
            let _ =
                s.input(opts, usize::from(d.to), &Input::Message { from, bytes: d.bytes }, true, rec.as_deref_mut());
        } else {
            for i in 0..s.hosts.len() {
                let r = s.hosts[i].node.as_ref();
                if r.is_some_and(|r| r.node.is_leader() && r.node.poll_timeout().is_some_and(|t| t <= s.local(i))) {
                    let _ = s.input(opts, i, &Input::Timeout, true, rec.as_deref_mut());
                }
            }
        }
        s.check(opts);
        let now = s.now;
        queue.extend(std::mem::take(&mut s.net).into_iter().map(|d| (now + 1, d)));
    }
    let mut net: Vec<crate::Dgram> = queue.into_iter().map(|q| q.1).collect();
    net.truncate(opts.max_in_flight);
    net.sort();
    s.net = net;
}

/// The bounded-liveness probe: the deterministic stable continuation of `s` (see the module
/// documentation). `Err` says what did not happen in time.
pub fn probe(opts: &Opts, s: &State) -> Result<(), String> {
    let mut s = s.clone();
    s.cut = None;
    let cfg = opts.config(0).validate().expect("valid");
    for i in 0..s.hosts.len() {
        if !s.up(i) {
            crate::model::restart(opts, &mut s, i, false);
        }
    }
    let start = s.now;
    let settle = start + SETTLE_BOUND_TIMEOUTS * cfg.election_timeout_max;
    let Some(mut leader) = run_stable(opts, &mut s, settle, None, settled) else {
        return Err(format!(
            "no leader followed by every node {} ms after the network became stable at {start} ms",
            settle - start
        ));
    };
    if opts.ranked() && cfg.preempt_after > 0 {
        leader = preferred(opts, &mut s, &cfg)?;
    }
    // The leader crashes silently; an adversary replays its last heartbeat to each follower,
    // and the vote requests of the campaign that won its term, every 100 ms (as the simulator's
    // recorder does).
    let term = s.hosts[leader].node.as_ref().map_or(0, |r| r.node.term());
    let votes: Vec<(u8, Vec<u8>)> = s
        .seen
        .iter()
        .filter(|d| usize::from(d.from) == leader)
        .filter(|d| {
            tenure::wire::decode(&d.bytes, None)
                .is_ok_and(|e| e.term == term && matches!(e.message, Message::Vote { .. }))
        })
        .map(|d| (d.to, d.bytes.clone()))
        .collect();
    let mut replay: Vec<(u8, Vec<u8>)> = (0..s.hosts.len())
        .filter(|&i| i != leader)
        .filter_map(|to| {
            s.seen
                .iter()
                .filter(|d| usize::from(d.from) == leader && usize::from(d.to) == to)
                .filter_map(|d| tenure::wire::decode(&d.bytes, None).ok().map(|e| (e, d)))
                .filter(|(e, _)| matches!(e.message, Message::Heartbeat { .. }))
                .max_by_key(|(e, _)| {
                    (
                        e.term,
                        match e.message {
                            Message::Heartbeat { sent_at } => sent_at,
                            _ => 0,
                        },
                    )
                })
                .map(|(_, d)| (to as u8, d.bytes.clone()))
        })
        .collect();
    replay.extend(votes);
    s.hosts[leader].node = None;
    s.net.retain(|d| usize::from(d.to) != leader);
    let crashed = s.now;
    let bound = crashed + tenure_sim::check::l1_failover_bound_ms(cfg.election_timeout_max, cfg.max_clock_drift_ppm, 1);
    let gone = leader;
    if run_stable(opts, &mut s, bound, Some((gone, &replay)), |s| {
        (0..s.hosts.len()).find(|&i| i != gone && s.hosts[i].node.as_ref().is_some_and(|r| r.node.is_leader()))
    })
    .is_none()
    {
        return Err(format!(
            "after {} (leader) crashed at {crashed} ms with its heartbeats replayed, no new leader by {bound} ms",
            IDS[leader]
        ));
    }
    Ok(())
}

/// With priorities, the stable continuation goes on until the settled leader has the highest
/// priority of the members that may lead: a leader of lower priority hands over after
/// `preempt_after` of steady answers, or, if it preempted to that member on the path and the member
/// failed, after its backoff (as the simulator's L1 bound allows). Every handover on the way is a
/// transfer: no moment without a leader lasts more than [`TRANSFER_GAP_MS`].
fn preferred(opts: &Opts, s: &mut State, cfg: &tenure::ValidConfig) -> Result<usize, String> {
    let start = s.now;
    let bound = start + (tenure::PREEMPT_BACKOFF_FACTOR + 1) * cfg.preempt_after + cfg.election_timeout_max;
    let top = (0..s.hosts.len()).filter(|&i| opts.may_lead(i)).map(|i| opts.ranks[i].0).max();
    // The instant the cluster was last left without a leader (each call sees the state after
    // one event: a leadership that ends ends at that event's instant).
    let lost = std::cell::Cell::new(None::<u64>);
    let gap = std::cell::Cell::new(None::<(u64, u64)>);
    let found = run_stable(opts, s, bound, None, |s| {
        let leading = s.hosts.iter().any(|h| h.node.as_ref().is_some_and(|r| r.node.is_leader()));
        let from = lost.get().unwrap_or(s.now);
        if s.now > from + TRANSFER_GAP_MS && gap.get().is_none() {
            gap.set(Some((from, s.now)));
        }
        lost.set((!leading).then_some(from));
        settled(s).filter(|&l| Some(opts.ranks[l].0) == top)
    });
    if let Some((from, to)) = gap.get() {
        return Err(format!(
            "no leader from {from} ms to {to} ms after a leadership of the stable network ended: more than a transfer's {TRANSFER_GAP_MS} ms (a preemption must be a transfer)"
        ));
    }
    found.ok_or_else(|| {
        format!(
            "no settled leader of priority {} (the highest of the members that may lead) by {bound} ms, {} ms after the network settled",
            top.unwrap_or(0),
            bound - start
        )
    })
}

/// A leader that every running node follows in its term.
fn settled(s: &State) -> Option<usize> {
    let l = (0..s.hosts.len()).find(|&i| s.hosts[i].node.as_ref().is_some_and(|r| r.node.is_leader()))?;
    let term = s.hosts[l].node.as_ref()?.node.term();
    s.hosts
        .iter()
        .filter_map(|h| h.node.as_ref())
        .all(|r| r.node.term() == term && r.node.leader() == Some(IDS[l]))
        .then_some(l)
}

/// A datagram the adversary replays in the stable continuation: destination index and bytes.
pub type Replayed = (u8, Vec<u8>);

/// Runs the stable network until `done` names a node or real time passes `until`: in-flight
/// datagrams arrive 1 ms after they were sent (the ones already in flight, 1 ms from now), timers
/// fire on time, hosts grant every confirmation, `replay` datagrams (from the crashed node `gone`)
/// arrive every 100 ms.
pub fn run_stable(
    opts: &Opts,
    s: &mut State,
    until: u64,
    replay: Option<(usize, &[Replayed])>,
    done: impl Fn(&State) -> Option<usize>,
) -> Option<usize> {
    run_stable_with(opts, s, until, replay, false, None, done)
}

/// [`run_stable`] keeping the checker's history (how the `Led` initial state is reached); the
/// datagrams still in flight at the end stay in flight.
pub fn run_stable_tracked(
    opts: &Opts,
    s: &mut State,
    until: u64,
    rec: Option<&mut Rec>,
    done: impl Fn(&State) -> Option<usize>,
) -> Option<usize> {
    run_stable_with(opts, s, until, None, true, rec, done)
}

fn run_stable_with(
    opts: &Opts,
    s: &mut State,
    until: u64,
    replay: Option<(usize, &[Replayed])>,
    track: bool,
    mut rec: Option<&mut Rec>,
    done: impl Fn(&State) -> Option<usize>,
) -> Option<usize> {
    let mut queue: std::collections::VecDeque<(u64, crate::Dgram)> =
        std::mem::take(&mut s.net).into_iter().map(|d| (s.now + 1, d)).collect();
    let mut next_replay = s.now + 100;
    // A timer that stays due after firing would spin at one instant: a liveness failure too.
    for _ in 0..100_000 {
        if let Some(l) = done(s) {
            s.net.extend(queue.into_iter().map(|q| q.1));
            s.net.sort();
            return Some(l);
        }
        for i in 0..s.hosts.len() {
            if let Some(term) = s.hosts[i].confirm.take() {
                let _ = s.input(opts, i, &Input::Confirm { term, granted: true }, track, rec.as_deref_mut());
                s.hosts[i].confirm = None;
                queue.extend(std::mem::take(&mut s.net).into_iter().map(|d| (s.now + 1, d)));
            }
        }
        let timer = (0..s.hosts.len())
            .filter_map(|i| {
                let t = s.hosts[i].node.as_ref()?.node.poll_timeout()?;
                Some(s.hosts[i].clock.real_at(t).max(s.now))
            })
            .min();
        let deliver = queue.front().map(|q| q.0);
        let rep = replay.filter(|r| !r.1.is_empty()).map(|_| next_replay);
        let next = [timer, deliver, rep].into_iter().flatten().min()?;
        if next > until {
            return None;
        }
        s.now = next;
        if deliver == Some(next) {
            let (_, d) = queue.pop_front().expect("front");
            let from = IDS[usize::from(d.from)].to_string();
            let _ =
                s.input(opts, usize::from(d.to), &Input::Message { from, bytes: d.bytes }, track, rec.as_deref_mut());
        } else if timer == Some(next) {
            for i in 0..s.hosts.len() {
                let due = s.hosts[i].node.as_ref().and_then(|r| r.node.poll_timeout());
                if due.is_some_and(|t| t <= s.local(i)) {
                    let _ = s.input(opts, i, &Input::Timeout, track, rec.as_deref_mut());
                }
            }
        } else if let Some((gone, rs)) = replay {
            for (to, bytes) in rs {
                let from = IDS[gone].to_string();
                let _ = s.input(
                    opts,
                    usize::from(*to),
                    &Input::Message { from, bytes: bytes.clone() },
                    track,
                    rec.as_deref_mut(),
                );
            }
            next_replay += 100;
        }
        let now = s.now;
        queue.extend(std::mem::take(&mut s.net).into_iter().map(|d| (now + 1, d)));
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::{model::initial, scopes, Start};

    /// The priority continuation of the liveness probe: from the start (`n2` leads, `n3` of the
    /// higher priority answers), `n3` leads within the bound through a preemption no longer
    /// without a leader than a transfer; a leadership that ends without a transfer (here the
    /// leader's process stops: nobody is told to campaign) leaves a longer gap, which it reports.
    #[test]
    fn the_priority_continuation_ends_with_the_preferred_leader_and_catches_a_gap() {
        let opts = scopes().into_iter().find(|s| s.name == "priority").expect("scope").opts;
        let cfg = opts.config(0).validate().expect("valid");
        let start = initial(&opts, Start::Led, &[0; 4]);
        let mut s = start.clone();
        assert_eq!(super::preferred(&opts, &mut s, &cfg), Ok(2), "n3 leads");
        let mut s = start;
        s.hosts[1].node = None;
        let err = super::preferred(&opts, &mut s, &cfg).expect_err("no leader for an election timeout");
        assert!(err.contains("more than a transfer's"), "{err}");
    }
}
