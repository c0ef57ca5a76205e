//! Randomised runs: one seed → one schedule of faults, then a stable phase in which L1 is checked,
//! then a silent crash of the leader whose failover time is measured.

use std::collections::BTreeSet;

use tenure::{Bug, Config, PeerDownReason};

use crate::check::{Violation, L1_SETTLE_BOUND_ELECTION_TIMEOUTS};
use crate::clock::Clock;
use crate::rng::Rng;
use crate::scenario::Input;
use crate::sim::{HostPolicy, NetConfig, Sim};
use crate::{adversary, compat};

/// A kind of fault the chaos phase may inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// Crash a node, restart it later with its durable state.
    Crash,
    /// Restart a node without its durable state (out of S1's scope: the documented hazard).
    Amnesia,
    /// Stall a node (GC pause); its clock jumps when it resumes.
    Pause,
    /// Symmetric partitions.
    Partition,
    /// One-way link failures.
    OneWay,
    /// Datagram loss.
    Loss,
    /// Datagram duplication.
    Dup,
    /// Reordering (extra delay on some datagrams).
    Reorder,
    /// `peer_down(no_connection)` for unreachable peers (ghosts), `leave` and
    /// `peer_down(terminated)` of crashed members with a later `join` back (out of S1's scope).
    Membership,
    /// Hosts deny `confirm_leader`, never answer it, or answer it late.
    Deny,
    /// Became-leader handlers fail.
    Handler,
    /// Leaders transfer leadership.
    Transfer,
    /// Nodes broadcast payloads.
    Broadcast,
    /// A clock changes its rate (always within ±ρ).
    Drift,
    /// The network delivers duplicates up to 10 s late.
    LateDup,
    /// A recorder of every datagram replays any of them at random later times (and, after the
    /// leader's silent crash, the dead leader's last datagram of each kind to each receiver,
    /// heartbeats and vote requests included, every 20–150 ms).
    Replay,
    /// Ids nobody declared send messages (during the chaos and the stable phase).
    FakeIds,
    /// A fake id grants every `PreVote` and `Vote` it sees on the wire.
    FakeVoter,
    /// A member sends a message with a near-maximum term, or just past the plausible jump.
    HugeTerm,
    /// Hosts falsely report a reachable peer `no_connection`.
    FalseDown,
    /// `peer_down(refused)`: true reports of crashed members (what a runtime's probe of a dead
    /// port learns), false ones about the live leader, and, after the failover probe's crash,
    /// the survivors' probes 1.5 heartbeat intervals later.
    Refused,
    /// A cluster that mixes wire versions: every run (start or restart) of a node speaks only
    /// v0.1.0's version with probability ½ (`Node::limit_wire_version`), so restarts upgrade and
    /// downgrade members. Not part of `all`: named on its own.
    Versions,
    /// Every node runs a watchdog: a crashed leader's (or a leader crashed just after a transfer
    /// or a step-down, before its host disarmed it) sends its death notices, unless it dies with
    /// it; plus forged notices (wrong incarnation, a term the sender never led, another key) and
    /// replays of earlier true ones (older terms, older incarnations). Not part of `all`: named
    /// on its own, so that the other variants keep measuring the lease path.
    Notice,
    /// Priorities and witnesses: every node gets a priority from 0 to 3 and every node but the
    /// first two is a witness with probability ⅓ ([`ranks`]), so leaders preempt to members of
    /// higher priority by transfers. The stable phase then also requires the leader to have the
    /// highest priority of the non-witness members. Not part of `all`: named on its own.
    Priority,
}

/// The rank node `id` (`n1`, `n2`, …) has in a run of `seed` with the `priority` fault:
/// (priority, witness). The first two nodes are never witnesses, so that a majority that can
/// elect remains after any one crash.
pub fn ranks(seed: u64, id: &str) -> (u32, bool) {
    let index: u64 = id.trim_start_matches('n').parse().unwrap_or(0);
    let mut rng = Rng::new(seed ^ 0x9A1D_0000_0000_0000 ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let priority = rng.below(4) as u32;
    let witness = index > 2 && rng.chance(1.0 / 3.0);
    (priority, witness)
}

impl Fault {
    /// Every fault, with its command-line name.
    pub const ALL: [(Fault, &'static str); 24] = [
        (Fault::Crash, "crash"),
        (Fault::Amnesia, "amnesia"),
        (Fault::Pause, "pause"),
        (Fault::Partition, "partition"),
        (Fault::OneWay, "oneway"),
        (Fault::Loss, "loss"),
        (Fault::Dup, "dup"),
        (Fault::Reorder, "reorder"),
        (Fault::Membership, "membership"),
        (Fault::Deny, "deny"),
        (Fault::Handler, "handler"),
        (Fault::Transfer, "transfer"),
        (Fault::Broadcast, "broadcast"),
        (Fault::Drift, "drift"),
        (Fault::LateDup, "latedup"),
        (Fault::Replay, "replay"),
        (Fault::FakeIds, "fakeids"),
        (Fault::FakeVoter, "fakevoter"),
        (Fault::HugeTerm, "hugeterm"),
        (Fault::FalseDown, "falsedown"),
        (Fault::Refused, "refused"),
        (Fault::Versions, "versions"),
        (Fault::Notice, "notice"),
        (Fault::Priority, "priority"),
    ];

    /// The faults that keep a run inside S1's scope (the default), less `refused` (so that the
    /// default runs measure failover after a silent crash; `refused` has its own variants).
    pub fn in_scope() -> BTreeSet<Fault> {
        Fault::ALL
            .iter()
            .map(|f| f.0)
            .filter(|f| {
                !matches!(
                    f,
                    Fault::Amnesia
                        | Fault::Membership
                        | Fault::Refused
                        | Fault::Versions
                        | Fault::Notice
                        | Fault::Priority
                )
            })
            .collect()
    }

    /// Parses `a,b,c`, `default` or `all`.
    pub fn parse_list(s: &str) -> Result<BTreeSet<Fault>, String> {
        let mut out = BTreeSet::new();
        for name in s.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "all" => out.extend(
                    Fault::ALL
                        .iter()
                        .map(|f| f.0)
                        .filter(|f| !matches!(f, Fault::Versions | Fault::Notice | Fault::Priority)),
                ),
                "default" => out.extend(Fault::in_scope()),
                "none" => {}
                _ => {
                    let f = Fault::ALL
                        .iter()
                        .find(|f| f.1 == name)
                        .ok_or_else(|| format!("unknown fault {name:?}; known: all, default, none, {}", names()))?;
                    out.insert(f.0);
                }
            }
        }
        Ok(out)
    }
}

fn names() -> String {
    Fault::ALL.iter().map(|f| f.1).collect::<Vec<_>>().join(", ")
}

/// What one seed runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Cluster size.
    pub nodes: usize,
    /// Round-trip time of the network.
    pub rtt_ms: u64,
    /// Faults the chaos phase draws from.
    pub faults: BTreeSet<Fault>,
    /// Bugs switched on in every node.
    pub bugs: Vec<Bug>,
    /// Durable term and vote (on by default; without it restarts leave S1's scope).
    pub durable: bool,
    /// Pre-vote (on by default).
    pub pre_vote: bool,
    /// Length of the chaos phase.
    pub chaos_ms: u64,
    /// Keep the full log (for `--verbose` and failing-seed reports).
    pub verbose_log: bool,
    /// Print every log line as it happens (`--trace`).
    pub echo: bool,
    /// Clocks drift: every host's clock gets an offset and a rate within ±ρ (on by default).
    pub drift: bool,
    /// `Config::admit_unknown_peers` (off by default: closed membership).
    pub admit_unknown_peers: bool,
    /// `Config::heartbeat_interval` (`None`: the core's default).
    pub heartbeat_interval: Option<u64>,
    /// `Config::lease_duration` (`None`: the core's default).
    pub lease_duration: Option<u64>,
    /// Injected bug (with `notice`): a watchdog sends its notices while its node lives (a stalled
    /// leader taken for dead). The lease invariant must catch it.
    pub watchdog_sends_while_alive: bool,
    /// Observers `o1`..`oK` of the cluster, listed by every member (0: none). They are never
    /// faulted themselves; L1 requires them to follow the leader as the members do.
    pub observers: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            nodes: 5,
            rtt_ms: 2,
            faults: Fault::in_scope(),
            bugs: Vec::new(),
            durable: true,
            pre_vote: true,
            chaos_ms: 3000,
            verbose_log: true,
            echo: false,
            drift: true,
            admit_unknown_peers: false,
            heartbeat_interval: None,
            lease_duration: None,
            watchdog_sends_while_alive: false,
            observers: 0,
        }
    }
}

/// The outcome of one seed.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The seed.
    pub seed: u64,
    /// The first violation, if any.
    pub violation: Option<Violation>,
    /// Time from the silent crash of a stable leader to the next leader.
    pub failover_ms: Option<u64>,
    /// Whether the run stayed inside S1's scope.
    pub s1_in_scope: bool,
    /// The log tail (only with `verbose_log`).
    pub log: Vec<String>,
}

/// Runs one seed.
pub fn run_seed(seed: u64, opts: &RunOptions) -> RunResult {
    let ranked = opts.faults.contains(&Fault::Priority);
    let observers: Vec<String> = (1..=opts.observers).map(|i| format!("o{i}")).collect();
    let tweak = |c: Config| {
        let c = compat::timing(c, opts.heartbeat_interval, opts.lease_duration);
        let c = match ranked {
            true => {
                let (priority, witness) = ranks(seed, &c.id);
                c.priority(priority).never_lead(witness)
            }
            false => c,
        };
        let c = compat::observer_peers(c, &observers);
        compat::admit_unknown_peers(c.durable(opts.durable).pre_vote(opts.pre_vote), opts.admit_unknown_peers)
    };
    let rho = compat::max_clock_drift_ppm(&tweak(Config::new("n", "sim")));
    let mut clock_rng = Rng::new(seed ^ 0xC10C_4D21_F700);
    let mut sim =
        Sim::cluster_with_clocks(seed, opts.nodes.max(1), NetConfig::rtt(opts.rtt_ms), tweak, |_| match opts.drift {
            true => Clock::drifting(0, clock_rng.range(0, 1 << 40), adversary::draw_rate(&mut clock_rng, rho)),
            false => Clock::exact(),
        });
    for o in &observers {
        let clock = match opts.drift {
            true => Clock::drifting(0, clock_rng.range(0, 1 << 40), adversary::draw_rate(&mut clock_rng, rho)),
            false => Clock::exact(),
        };
        sim.add_observer(o, opts.nodes.max(1), tweak, clock);
    }
    if opts.faults.contains(&Fault::Replay) {
        // The recorder keeps every datagram of the run.
        sim.recorder_cap = usize::MAX;
    }
    if opts.faults.contains(&Fault::Versions) {
        sim.mix_versions();
    }
    if opts.faults.contains(&Fault::Notice) {
        sim.watchdogs = true;
        sim.watchdog_dies_with_node = 0.2;
        sim.disarm_lag_ms = 5;
    }
    sim.verbose_log = opts.verbose_log;
    sim.echo = opts.echo;
    for id in sim.nodes.iter().map(|n| n.id.clone()).collect::<Vec<_>>() {
        for b in &opts.bugs {
            sim.inject(&id, *b);
        }
    }
    let mut failover_ms = None;
    let result = drive(&mut sim, opts, &mut failover_ms);
    let log = if opts.verbose_log { sim.log_tail() } else { Vec::new() };
    RunResult { seed, violation: result.err(), failover_ms, s1_in_scope: sim.checker.s1_in_scope, log }
}

/// The members (observers apart: the faults and the majorities are the members').
fn ids(sim: &Sim) -> Vec<String> {
    sim.nodes.iter().filter(|n| !n.config.observer).map(|n| n.id.clone()).collect()
}

fn drive(sim: &mut Sim, opts: &RunOptions, failover_ms: &mut Option<u64>) -> Result<(), Violation> {
    let mut rng = Rng::new(sim.seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x000C_4A05);
    let faults: Vec<Fault> = opts.faults.iter().copied().collect();
    let all = ids(sim);
    let n = all.len();
    let valid = sim.nodes[0].config.validate().expect("valid simulator config");
    let et_max = valid.election_timeout_max;
    let rho = compat::max_clock_drift_ppm(&sim.nodes[0].config);
    let rtt = opts.rtt_ms;
    // Nodes removed by leave/terminated (crashed), to be joined back in the stable phase.
    let mut removed: Vec<String> = Vec::new();
    // False `no_connection` reports (reporter, peer), taken back in the stable phase.
    let mut false_reports: Vec<(String, String)> = Vec::new();

    // ---- chaos -------------------------------------------------------------------------
    let chaos_end = sim.now + opts.chaos_ms;
    sim.run_until(rng.range(0, 400))?;
    while sim.now < chaos_end && !faults.is_empty() {
        let fault = faults[rng.below(faults.len())];
        let pick = |rng: &mut Rng| all[rng.below(n)].clone();
        match fault {
            Fault::Crash | Fault::Amnesia => {
                let down: Vec<String> = sim
                    .nodes
                    .iter()
                    .filter(|x| x.node.is_none() && !removed.contains(&x.id))
                    .map(|x| x.id.clone())
                    .collect();
                if !down.is_empty() && (down.len() * 2 >= n || rng.chance(0.5)) {
                    let id = down[rng.below(down.len())].clone();
                    let keep = !(fault == Fault::Amnesia && rng.chance(0.7));
                    sim.restart(&id, keep);
                } else {
                    // Prefer the leader half of the time: that is where the interesting bugs are.
                    let id = match sim.leader() {
                        Some(l) if rng.chance(0.5) => l,
                        _ => pick(&mut rng),
                    };
                    let i = sim.idx(&id);
                    if sim.nodes[i].node.is_some() {
                        if rng.chance(0.5) {
                            sim.crash(&id);
                        } else {
                            // A crash point inside the handling of its next input: after 0..3
                            // outputs were carried out (e.g. a `Persist` but not the sends).
                            sim.nodes[i].crash_after = Some(rng.below(4));
                        }
                    }
                }
            }
            Fault::Pause => {
                let id = match sim.leader() {
                    Some(l) if rng.chance(0.5) => l,
                    _ => pick(&mut rng),
                };
                let ms = rng.range(20, 4 * et_max);
                sim.pause(&id, ms);
                if opts.watchdog_sends_while_alive {
                    let i = sim.idx(&id);
                    sim.watchdog_fires_while_alive(i);
                }
            }
            Fault::Partition => {
                if rng.chance(0.35) {
                    sim.heal();
                } else {
                    let mut a = Vec::new();
                    let mut b = Vec::new();
                    for id in &all {
                        if rng.chance(0.5) {
                            a.push(id.clone())
                        } else {
                            b.push(id.clone())
                        }
                    }
                    sim.partition(&[a, b]);
                }
            }
            Fault::OneWay => {
                if rng.chance(0.3) {
                    sim.heal();
                } else {
                    let from = match sim.leader() {
                        Some(l) if rng.chance(0.5) => l,
                        _ => pick(&mut rng),
                    };
                    for _ in 0..rng.range(1, n as u64) {
                        let to = pick(&mut rng);
                        if to != from {
                            if rng.chance(0.5) {
                                sim.block(&from, &to);
                            } else {
                                sim.block(&to, &from);
                            }
                        }
                    }
                }
            }
            Fault::Loss => sim.net.loss = if rng.chance(0.3) { 0.0 } else { rng.unit() * 0.4 },
            Fault::Dup => sim.net.duplicate = if rng.chance(0.3) { 0.0 } else { rng.unit() * 0.3 },
            Fault::Reorder => sim.net.reorder = if rng.chance(0.3) { 0.0 } else { rng.unit() * 0.3 },
            Fault::Membership => {
                let id = pick(&mut rng);
                match rng.below(3) {
                    0 => {
                        // Hosts that cannot reach `id` report it unreachable.
                        let reporters: Vec<String> =
                            all.iter().filter(|o| **o != id && !sim.connected(o, &id)).cloned().collect();
                        // S1 stays checked until a ghost actually expires (the checker sees the
                        // view shrink).
                        for r in reporters {
                            if sim.nodes[sim.idx(&r)].node.is_some() {
                                let _ = sim.call(&r, Input::PeerDown(id.clone(), PeerDownReason::NoConnection));
                            }
                        }
                    }
                    k => {
                        // A member goes away for good: it stops, the others leave/terminate it.
                        if removed.len() * 2 + 2 < n && sim.nodes[sim.idx(&id)].node.is_some() {
                            sim.crash(&id);
                            removed.push(id.clone());
                            sim.checker.leave_s1_scope();
                            for o in all.iter().filter(|o| **o != id) {
                                if sim.nodes[sim.idx(o)].node.is_some() {
                                    let input = if k == 1 {
                                        Input::Leave(id.clone())
                                    } else {
                                        Input::PeerDown(id.clone(), PeerDownReason::Terminated)
                                    };
                                    let _ = sim.call(o, input);
                                }
                            }
                        }
                    }
                }
            }
            Fault::Deny => {
                let id = pick(&mut rng);
                let p = &mut sim.host(&id).policy;
                if rng.chance(0.5) {
                    p.deny_next = rng.range(1, 3) as u32;
                } else {
                    p.deny_confirm = rng.unit() * 0.6;
                }
                p.ignore_confirm = rng.chance(0.1);
                // A slow gate: some answers come up to past the core's deadline for them
                // (`election_timeout_max`), so a leadership can start on old votes.
                if rng.chance(0.5) {
                    p.slow_confirm = rng.unit();
                    p.confirm_delay_max = rng.range(1, et_max + et_max / 4);
                }
            }
            Fault::Handler => {
                let id = pick(&mut rng);
                let p = &mut sim.host(&id).policy;
                if rng.chance(0.5) {
                    p.fail_next = 1;
                } else {
                    p.fail_handler = rng.unit() * 0.5;
                }
            }
            Fault::Transfer => {
                if let Some(l) = sim.leader() {
                    let to = pick(&mut rng);
                    let done = sim.call(&l, Input::Transfer(to)).is_ok();
                    // A notice racing the transfer: the old leader dies before its host disarmed
                    // the watchdog.
                    if done && sim.watchdogs && rng.chance(0.3) {
                        sim.crash(&l);
                    }
                }
            }
            Fault::Broadcast => {
                let id = pick(&mut rng);
                if sim.nodes[sim.idx(&id)].is_running() {
                    let len = rng.range(0, 64) as usize;
                    let payload: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                    let _ = sim.call(&id, Input::Broadcast(payload));
                }
            }
            Fault::Drift => {
                let i = rng.below(n);
                let rate = adversary::draw_rate(&mut rng, rho);
                let now = sim.now;
                sim.nodes[i].clock.set_rate(now, rate);
            }
            Fault::LateDup => sim.net.late_duplicate = if rng.chance(0.3) { 0.0 } else { rng.unit() * 0.2 },
            Fault::Replay => {
                let k = rng.range(1, 20) as usize;
                adversary::replay(sim, &mut rng, k);
            }
            Fault::FakeIds => {
                let k = rng.range(1, 30) as usize;
                adversary::strangers(sim, &mut rng, k, 250);
            }
            Fault::FakeVoter => {
                sim.fake_voters = if rng.chance(0.3) { Vec::new() } else { vec![adversary::FAKE_VOTER.to_string()] }
            }
            Fault::HugeTerm => adversary::huge_term(sim, &mut rng),
            Fault::FalseDown => false_reports.extend(adversary::false_down(sim, &mut rng)),
            Fault::Refused => adversary::refused(sim, &mut rng),
            // A property of every start and restart (`Sim::mix_versions`), not an event.
            Fault::Versions => {}
            Fault::Notice => adversary::notices(sim, &mut rng),
            // A property of every node's configuration (`ranks`), not an event.
            Fault::Priority => {}
        }
        let gap = rng.range(5, 250);
        sim.run_until((sim.now + gap).min(chaos_end))?;
    }
    sim.run_until(chaos_end)?;

    // ---- stable ------------------------------------------------------------------------
    sim.logf(format_args!("--- STABLE: heal, restart, no loss, hosts grant ---"));
    sim.heal();
    sim.net = NetConfig::rtt(rtt);
    let max_one_way = sim.net.max_one_way();
    sim.stabilise_in_flight(max_one_way);
    for id in &all {
        let i = sim.idx(id);
        sim.nodes[i].policy = HostPolicy::default();
        sim.nodes[i].crash_after = None;
        if let Some(p) = sim.nodes[i].paused_until {
            if p > sim.now {
                sim.nodes[i].paused_until = Some(sim.now);
            }
        }
    }
    for id in &all {
        if sim.nodes[sim.idx(id)].node.is_none() {
            sim.restart(id, true);
        }
    }
    for r in &removed {
        for o in all.iter().filter(|o| *o != r) {
            let _ = sim.call(o, Input::Join(r.clone()));
        }
    }
    // Failure detectors are eventually accurate: once the network is stable a host takes back a
    // `no_connection` report about a peer it reaches again, by declaring it (`join`). Without
    // that, a live follower reported by another follower leaves that follower's view at its
    // ghost_ttl: followers of a steady leader send each other nothing, so neither hears the other
    // again, and once the leader dies the two no longer make a quorum together.
    false_reports.sort();
    false_reports.dedup();
    for (reporter, peer) in &false_reports {
        let _ = sim.call(reporter, Input::Join(peer.clone()));
    }
    let settle_start = sim.now;
    let ranked = opts.faults.contains(&Fault::Priority);
    // With priorities the settled leader is the preferred one: a leader of lower priority hands
    // over after preempt_after of steady answers, or, if it preempted to that member during the
    // chaos and the member failed, after its backoff (PREEMPT_BACKOFF_FACTOR × preempt_after).
    let bound = L1_SETTLE_BOUND_ELECTION_TIMEOUTS * et_max
        + if ranked { (tenure::PREEMPT_BACKOFF_FACTOR + 1) * valid.preempt_after + et_max } else { 0 };
    // The highest priority of the members that may lead, as the others can know it: a run that
    // speaks only wire version 3 (v0.1.0's) tells none and counts as 0; a leader of that version
    // knows none, so it preempts to nobody.
    let effective = |sim: &Sim, id: &str| match sim.runs_oldest(id) {
        true => 0,
        false => sim.nodes[sim.idx(id)].config.priority,
    };
    let preferred = |sim: &Sim, l: &str| {
        let top = sim.nodes.iter().filter(|x| !x.config.never_lead).map(|x| effective(sim, &x.id)).max();
        !ranked || sim.runs_oldest(l) || Some(effective(sim, l)) == top
    };
    if opts.faults.contains(&Fault::FakeIds) {
        // Strangers keep writing through the stable phase: dropped, they must not cost the leader.
        let span = bound + 4 * et_max;
        adversary::strangers(sim, &mut rng, (span / 20) as usize, span);
    }
    sim.fake_voters.clear();
    // Converged = one leader followed by every connected node, continuously for one election
    // timeout plus a heartbeat (so that stale followers whose timers are about to fire count).
    let window = et_max + sim.nodes[0].config.heartbeat_interval + 2 * rtt;
    let mut since: Option<(u64, String, u64)> = None;
    loop {
        if sim.converged() && sim.leader().is_some_and(|l| preferred(sim, &l)) {
            let l = sim.leader().expect("converged");
            let t = sim.node(&l).term();
            match &since {
                Some((_, sl, st)) if *sl == l && *st == t => {}
                _ => since = Some((sim.now, l, t)),
            }
        } else {
            since = None;
        }
        if let Some((t0, _, _)) = &since {
            if sim.now >= t0 + window {
                break;
            }
        }
        if sim.now > settle_start + bound {
            sim.fail(
                "L1",
                format!(
                    "no single converged leader{} within {bound} ms of the network becoming stable (leaders: {:?}{})",
                    if ranked { " of the highest priority" } else { "" },
                    sim.leaders(),
                    match ranked {
                        // What each leader knows of the others' ranks: (id, priority, witness).
                        true => sim
                            .leaders()
                            .iter()
                            .map(|l| format!("; {l} knows {:?}", sim.node(l).known_priorities()))
                            .collect::<String>(),
                        false => String::new(),
                    }
                ),
            );
            return Err(sim.violation().cloned().expect("just failed"));
        }
        let limit = since.as_ref().map_or(settle_start + bound + 1, |(t0, _, _)| t0 + window);
        sim.step(limit);
        if let Some(v) = sim.violation() {
            return Err(v.clone());
        }
    }
    // The leader must keep leading while the network stays stable — even with one follower that
    // cannot hear it (a one-way cut), which pre-vote and leader stickiness must neutralise.
    let leader = sim.leader().expect("converged");
    let term = sim.node(&leader).term();
    // (Without pre-vote such a follower does depose the leader: that is what pre-vote is for.)
    if n >= 3 && rng.chance(0.5) && opts.pre_vote {
        let f = all.iter().filter(|x| **x != leader).nth(rng.below(n - 1)).expect("a follower").clone();
        sim.block(&leader, &f);
    }
    let hold = rng.range(2 * et_max, 4 * et_max);
    let stable_end = sim.now + hold;
    while sim.now < stable_end {
        if !sim.step(stable_end) {
            break;
        }
        if let Some(v) = sim.violation() {
            return Err(v.clone());
        }
        if sim.leaders() != [leader.clone()] || sim.node(&leader).term() != term {
            sim.fail(
                "L1",
                format!(
                    "leader {leader} (term {term}) lost its leadership in a stable network (leaders now: {:?})",
                    sim.leaders()
                ),
            );
            return Err(sim.violation().cloned().expect("just failed"));
        }
    }

    // ---- failover probe ----------------------------------------------------------------
    sim.heal();
    if n >= 3 {
        sim.run_for(rng.range(0, 60))?;
        let Some(old) = sim.leader() else { return Ok(()) };
        // The failover measured with watchdogs is the notice path's: this one survives.
        sim.watchdog_dies_with_node = 0.0;
        let crash_at = sim.now;
        sim.crash(&old);
        let bound = crate::check::l1_failover_bound_ms(et_max, rho, sim.net.max_one_way());
        if opts.faults.contains(&Fault::Replay) {
            // The recorder replays the dead leader's last datagrams of every kind (and any
            // others) through the whole failover: no effect on the bound allowed.
            adversary::replay_after_crash(sim, &mut rng, &old, bound);
        }
        if opts.faults.contains(&Fault::Refused) {
            // Each survivor's runtime probes the silent leader 1.5 heartbeat intervals after the
            // last heartbeat it got, and the dead port refuses.
            let probe = valid.heartbeat_interval * 3 / 2;
            if sim.run_until_cond(crash_at + probe, |s| s.leader().is_some())?.is_none() {
                adversary::report_refused(sim, &old);
            }
        }
        let found = sim.run_until_cond(crash_at + bound, |s| s.leader().is_some())?;
        match found {
            Some(t) => *failover_ms = Some(t - crash_at),
            None => {
                sim.fail(
                    "L1",
                    format!("no new leader within the failover bound of {bound} ms after the leader's crash"),
                );
                return Err(sim.violation().cloned().expect("just failed"));
            }
        }
    }
    Ok(())
}
