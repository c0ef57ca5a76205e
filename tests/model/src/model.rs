//! The stateright [`Model`]: initial states, the actions enabled in a state, and their effect.

use stateright::{Model, Property};
use tenure::wire::{self, Envelope, Message, MAX_TERM};
use tenure::PeerDownReason;
use tenure_sim::scenario::Input;

use crate::step::{name, Rec};
use crate::{Clock, Ghost, Host, Opts, Running, Start, State, CLUSTER, IDS, STRANGER};

/// One action: a call into one node's API, a network fault, or time passing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Deliver the datagram at this index of the network.
    Deliver(usize),
    /// Lose it.
    Drop(usize),
    /// Duplicate it (the copy stays in flight).
    Dup(usize),
    /// The node's timer fires (`handle_timeout`).
    Fire(u8),
    /// Real time moves to this instant.
    Advance(u64),
    /// The host answers `ConfirmLeader` (granted or denied).
    Confirm(u8, bool),
    /// The leader's became-leader work fails (`leader_handler_failed`).
    LeaderFailed(u8),
    /// The leader hands leadership to the second node.
    Transfer(u8, u8),
    /// The node's process stops (outputs already carried out stay carried out).
    Crash(u8),
    /// The node restarts from its host's last carried-out `Persist`.
    Restart(u8),
    /// The host of the first node reports the second down.
    Report(u8, u8, PeerDownReason),
    /// A stranger asks the node for its vote in the next term.
    Stranger(u8),
    /// A member's id on a heartbeat with the maximum term.
    HugeTerm(u8),
    /// The adversary replays the datagram at this index of everything seen.
    Replay(usize),
    /// A partition cuts this node off.
    Cut(u8),
    /// The partition heals.
    Heal,
    /// A quiet stretch: every datagram in flight arrives a millisecond after it was sent (none
    /// across a partition), leaders' timers fire on time, until a node that does not lead has a
    /// timer due, a host has a confirmation to answer, or `election_timeout_max` has passed.
    Run,
    /// The crashed leader's watchdog sends its death notices (a path that never takes this action
    /// is one where the watchdog died with its node).
    Notice(u8),
}

/// The model: the options it runs with.
#[derive(Clone, Debug)]
pub struct TenureModel {
    /// Options.
    pub opts: Opts,
    /// How many states had their properties checked (stateright counts the states it generated,
    /// the unchecked ones one step past the depth bound included).
    pub checked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl TenureModel {
    /// The model of `opts`.
    pub fn new(opts: Opts) -> TenureModel {
        TenureModel { opts, checked: Default::default() }
    }

    /// Every initial state, in a fixed order.
    pub fn inits(&self) -> Vec<State> {
        let mut out = Vec::new();
        for start in &self.opts.starts {
            for rates in &self.opts.rates {
                out.push(initial(&self.opts, *start, rates));
            }
        }
        out
    }

    /// Applies `action` to a copy of `s`, recording the inputs when `rec` is given.
    pub fn apply(&self, s: &State, action: &Action, rec: Option<&mut Rec>) -> Option<State> {
        let opts = &self.opts;
        let mut n = s.clone();
        match *action {
            Action::Deliver(k) => {
                let d = n.net.remove(k);
                let from = name(d.from).to_string();
                n.input(opts, usize::from(d.to), &Input::Message { from, bytes: d.bytes }, true, rec).ok();
            }
            Action::Drop(k) => {
                n.net.remove(k);
                n.left.drop -= 1;
            }
            Action::Dup(k) => {
                let d = n.net[k].clone();
                n.net.insert(k, d);
                n.left.dup -= 1;
            }
            Action::Fire(i) => {
                n.input(opts, usize::from(i), &Input::Timeout, true, rec).ok();
            }
            Action::Advance(t) => n.now = t,
            Action::Cut(i) => {
                n.left.partition -= 1;
                n.cut = Some(i);
                n.net.retain(|d| d.from != i && d.to != i);
            }
            Action::Heal => n.cut = None,
            Action::Confirm(i, granted) => {
                let term = n.hosts[usize::from(i)].confirm.take()?;
                if !granted {
                    n.left.host -= 1;
                }
                n.input(opts, usize::from(i), &Input::Confirm { term, granted }, true, rec).ok();
            }
            Action::LeaderFailed(i) => {
                let term = n.hosts[usize::from(i)].node.as_ref()?.node.term();
                n.left.host -= 1;
                n.input(opts, usize::from(i), &Input::LeaderFailed(term), true, rec).ok();
            }
            Action::Transfer(i, j) => {
                let term = n.hosts[usize::from(i)].node.as_ref()?.node.term();
                n.left.host -= 1;
                let now = n.now;
                if let Ok(k) = n.ghost.lease.binary_search_by_key(&term, |e| e.0) {
                    n.ghost.lease[k].1 = n.ghost.lease[k].1.min(now);
                }
                n.input(opts, usize::from(i), &Input::Transfer(IDS[usize::from(j)].to_string()), true, rec).ok();
            }
            Action::Crash(i) => {
                let now = n.now;
                let h = &mut n.hosts[usize::from(i)];
                if opts.notice {
                    // What the watchdog was armed with: the notices of the leadership the node
                    // held when it died, computed from its state then.
                    h.notices = h.node.as_ref().filter(|r| r.node.is_leader()).map(|r| {
                        let notices = r.node.death_notices().into_iter().map(|(to, b)| (crate::index_of(&to), b));
                        (r.node.term(), now, notices.collect())
                    });
                }
                h.node = None;
                h.confirm = None;
                n.left.crash -= 1;
            }
            Action::Notice(i) => {
                let (term, died, notices) = n.hosts[usize::from(i)].notices.take()?;
                // The leader is dead since `died`: no work of its lease runs past it.
                if let Ok(k) = n.ghost.lease.binary_search_by_key(&term, |e| e.0) {
                    n.ghost.lease[k].1 = n.ghost.lease[k].1.min(died);
                }
                for (to, bytes) in notices {
                    n.gate(opts, i, to, &bytes);
                    if usize::from(to) >= opts.nodes || n.cut.is_some_and(|c| c == to || c == i) {
                        continue;
                    }
                    let d = crate::Dgram { from: i, to, bytes };
                    if n.net.len() < opts.max_in_flight {
                        let k = n.net.binary_search(&d).unwrap_or_else(|k| k);
                        n.net.insert(k, d);
                    }
                }
            }
            Action::Restart(i) => {
                n.hosts[usize::from(i)].notices = None;
                restart(opts, &mut n, usize::from(i), true);
                if let Some(rec) = rec {
                    let h = &n.hosts[usize::from(i)];
                    rec.starts.push((i, h.runs, h.clock.local(n.now), Some(h.durable.clone())));
                }
            }
            Action::Report(i, p, reason) => {
                n.left.report -= 1;
                if reason == PeerDownReason::Terminated {
                    n.ghost.s1_scope = false;
                }
                n.input(opts, usize::from(i), &Input::PeerDown(IDS[usize::from(p)].to_string(), reason), true, rec)
                    .ok();
            }
            Action::Stranger(i) => {
                n.left.adversary -= 1;
                // The next term, or the last one a datagram can carry.
                let term = (n.hosts[usize::from(i)].node.as_ref()?.node.term() + 1).min(MAX_TERM);
                let bytes = forge(STRANGER, term, 7, Message::Vote { transfer: false });
                n.input(opts, usize::from(i), &Input::Message { from: STRANGER.to_string(), bytes }, true, rec).ok();
            }
            Action::HugeTerm(i) => {
                n.left.spend_huge_term();
                let m = (usize::from(i) + 1) % opts.nodes;
                let incarnation = n.hosts[m].node.as_ref().map_or(0, |r| r.node.incarnation());
                // A heartbeat: a term the receiver would adopt (a pre-vote's term is never adopted).
                let bytes = forge(IDS[m], MAX_TERM, incarnation, Message::Heartbeat { sent_at: 0 });
                n.input(opts, usize::from(i), &Input::Message { from: IDS[m].to_string(), bytes }, true, rec).ok();
            }
            Action::Run => {
                n.left.run -= 1;
                crate::props::run_quiet(opts, &mut n, rec);
            }
            Action::Replay(k) => {
                n.left.adversary -= 1;
                let d = n.seen[k].clone();
                let from = name(d.from).to_string();
                n.input(opts, usize::from(d.to), &Input::Message { from, bytes: d.bytes }, true, rec).ok();
            }
        }
        n.check(opts);
        Some(n)
    }
}

/// The bytes of an envelope in the model's cluster (no key).
fn forge(from: &str, term: u64, incarnation: u64, message: Message) -> Vec<u8> {
    let env = Envelope { cluster: CLUSTER.to_string(), from: from.to_string(), term, incarnation, message };
    wire::encode(&env, None).expect("encodable")
}

/// Restarts node `i` from its host's durable state at the current real time.
pub fn restart(opts: &Opts, s: &mut State, i: usize, _track: bool) {
    let now = s.now;
    let h = &mut s.hosts[i];
    h.runs = h.runs.saturating_add(1);
    let local = h.clock.local(now);
    let node = opts.new_node(i, h.runs, Some(h.durable.clone()), local);
    h.node = Some(Running::new(node));
    h.confirm = None;
}

/// One initial state.
pub fn initial(opts: &Opts, start: Start, rates: &[i32]) -> State {
    initial_recorded(opts, start, rates, None)
}

/// One initial state, recording the inputs that led to it (the `Led` start's election).
pub fn initial_recorded(opts: &Opts, start: Start, rates: &[i32], mut rec: Option<&mut Rec>) -> State {
    let hosts = (0..opts.nodes)
        .map(|i| {
            let clock = Clock { rate_ppm: rates.get(i).copied().unwrap_or(0) };
            Host {
                node: Some(Running::new(opts.new_node(i, 0, None, 0))),
                durable: Default::default(),
                clock,
                runs: 0,
                confirm: None,
                notices: None,
            }
        })
        .collect();
    let mut s = State {
        now: 0,
        hosts,
        net: Vec::new(),
        seen: Vec::new(),
        left: opts.budget,
        ghost: Ghost { s1_scope: true, ..Ghost::default() },
        cut: None,
        broken: None,
    };
    for i in 0..opts.nodes {
        if let Some(rec) = rec.as_deref_mut() {
            rec.starts.push((i as u8, 0, 0, None));
        }
        s.ghost.view[i] = (s.hosts[i].node.as_ref().map_or(0, |r| r.node.view_size()), 0);
    }
    if start == Start::Led {
        // A fault-free election, then one more heartbeat round so every follower acknowledged.
        let until = 10 * opts.config(0).validate().expect("valid").election_timeout_max;
        let leased = |s: &State| {
            (0..s.hosts.len()).find(|&i| {
                s.hosts[i].node.as_ref().is_some_and(|r| r.node.is_leader() && r.node.lease_deadline().is_some())
            })
        };
        crate::props::run_stable_tracked(opts, &mut s, until, rec, leased);
        s.check(opts);
    }
    s
}

impl Model for TenureModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        self.inits()
    }

    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        if s.broken.is_some() {
            return;
        }
        let left = s.left;
        for k in 0..s.net.len() {
            if k > 0 && s.net[k] == s.net[k - 1] {
                continue;
            }
            out.push(Action::Deliver(k));
            if left.drop > 0 {
                out.push(Action::Drop(k));
            }
            if left.dup > 0 && s.net.len() < self.opts.max_in_flight {
                out.push(Action::Dup(k));
            }
        }
        let n = s.hosts.len();
        let mut due = u64::MAX;
        for i in 0..n {
            let h = &s.hosts[i];
            let Some(r) = &h.node else {
                if h.notices.is_some() {
                    out.push(Action::Notice(i as u8));
                }
                out.push(Action::Restart(i as u8));
                continue;
            };
            if let Some(t) = r.node.poll_timeout() {
                let at = h.clock.real_at(t);
                if at <= s.now {
                    out.push(Action::Fire(i as u8));
                }
                due = due.min(at);
            }
            if h.confirm.is_some() {
                out.push(Action::Confirm(i as u8, true));
                if left.host > 0 {
                    out.push(Action::Confirm(i as u8, false));
                }
            }
            if r.node.is_leader() && left.host > 0 {
                out.push(Action::LeaderFailed(i as u8));
                // A transfer names a member (the core refuses an observer: no state to explore).
                for j in (0..n).filter(|&j| j != i && !self.opts.is_observer(j)) {
                    out.push(Action::Transfer(i as u8, j as u8));
                }
            }
            if left.crash > 0 {
                out.push(Action::Crash(i as u8));
            }
            if left.report > 0 {
                for p in (0..n).filter(|&p| p != i && !self.opts.is_observer(p)) {
                    for reason in PeerDownReason::ALL {
                        if reason != PeerDownReason::Terminated || self.opts.membership {
                            out.push(Action::Report(i as u8, p as u8, reason));
                        }
                    }
                }
            }
            if left.partition > 0 && s.cut.is_none() {
                out.push(Action::Cut(i as u8));
            }
            if left.adversary > 0 {
                out.push(Action::Stranger(i as u8));
            }
            if left.adversary > 0 || left.huge_term > 0 {
                out.push(Action::HugeTerm(i as u8));
            }
        }
        if s.cut.is_some() {
            out.push(Action::Heal);
        }
        if left.adversary > 0 {
            for k in 0..s.seen.len() {
                if s.up(usize::from(s.seen[k].to)) {
                    out.push(Action::Replay(k));
                }
            }
        }
        // Time: never past a timer that is due (hosts wake on time); otherwise to each instant
        // that can change a decision, and its neighbours.
        if self.opts.advance && due > s.now && due != u64::MAX {
            let mut at = vec![due - 1, due];
            for i in 0..n {
                let h = &s.hosts[i];
                let Some(r) = &h.node else { continue };
                let promise = h.clock.real_at(r.node.promise_until());
                at.extend([promise.saturating_sub(1), promise, promise + 1]);
                if let Some(d) = r.node.lease_deadline() {
                    let end = h.clock.real_at(d.saturating_add(1));
                    at.extend([end.saturating_sub(1), end, end + 1]);
                }
            }
            at.retain(|&t| t > s.now && t <= due);
            at.sort_unstable();
            at.dedup();
            out.extend(at.into_iter().map(Action::Advance));
        }
        if left.run > 0 {
            out.push(Action::Run);
        }
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        self.apply(s, &action, None)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        crate::props::properties()
    }

    fn format_action(&self, action: &Action) -> String {
        format!("{action:?}")
    }
}
