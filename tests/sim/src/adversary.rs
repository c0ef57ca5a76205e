//! Hostile and mistaken traffic for the randomised runs: strangers (ids nobody declared), a fake
//! voter, members that send near-maximum terms, a recorder that replays old datagrams, false
//! `no_connection` reports, and clocks that change rate. Each is a [`crate::random::Fault`].

use tenure::wire::{self, Envelope, Message, MAX_TERM, MAX_TERM_JUMP};
use tenure::PeerDownReason;

use crate::rng::Rng;
use crate::scenario::Input;
use crate::sim::Sim;

/// The ids the strangers use (never declared by any host).
pub const FAKE_IDS: [&str; 4] = ["x-stranger-1", "x-stranger-2", "x-stranger-3", "x-stranger-4"];

/// The id of the fake voter.
pub const FAKE_VOTER: &str = "x-fake-voter";

/// Encodes a message for `to` with the cluster's id and key (an adversary that knows both: no key
/// is set in the randomised runs).
fn forge(sim: &Sim, from: &str, to: &str, term: u64, incarnation: u64, message: Message) -> Option<Vec<u8>> {
    let c = &sim.nodes[0].config;
    let env = Envelope { cluster: c.cluster.clone(), from: from.to_string(), term, incarnation, message };
    wire::encode(&env, c.key.as_deref().map(|key| wire::Auth { key, receiver: to })).ok()
}

fn term_of(sim: &Sim, id: &str) -> u64 {
    sim.nodes[sim.idx(id)].node.as_ref().map_or(0, |n| n.term())
}

fn random_message(rng: &mut Rng) -> Message {
    match rng.below(5) {
        0 => Message::PreVote,
        1 => Message::Vote { transfer: rng.chance(0.3) },
        2 => Message::Heartbeat { sent_at: rng.next_u64() >> 20 },
        3 => Message::HeartbeatAck { echo: rng.next_u64() >> 20 },
        _ => Message::App { seq: rng.below(1000) as u64, payload: vec![0xAB; rng.below(32)] },
    }
}

/// Strangers send `count` plausible messages (current or next term) to random members, spread
/// over the next `over_ms`.
pub fn strangers(sim: &mut Sim, rng: &mut Rng, count: usize, over_ms: u64) {
    let ids: Vec<String> = sim.nodes.iter().map(|n| n.id.clone()).collect();
    for _ in 0..count {
        let to = ids[rng.below(ids.len())].clone();
        let fake = FAKE_IDS[rng.below(FAKE_IDS.len())];
        let term = term_of(sim, &to) + rng.below(2) as u64;
        let msg = random_message(rng);
        if let Some(bytes) = forge(sim, fake, &to, term, 7, msg) {
            let delay = rng.range(0, over_ms);
            sim.inject_later(delay, fake, &to, bytes);
        }
    }
}

/// A member sends (by mistake, or a forger without a key sends under its id, with its current
/// incarnation) one message with a term near the top of the range or just past the plausible
/// jump, to a random member.
pub fn huge_term(sim: &mut Sim, rng: &mut Rng) {
    let ids: Vec<String> = sim.nodes.iter().map(|n| n.id.clone()).collect();
    let from = ids[rng.below(ids.len())].clone();
    let to = ids[rng.below(ids.len())].clone();
    if from == to {
        return;
    }
    let own = term_of(sim, &to);
    let term = match rng.below(5) {
        0 => MAX_TERM,
        1 => MAX_TERM - rng.range(0, 3),
        2 => own.saturating_add(MAX_TERM_JUMP),
        3 => own.saturating_add(MAX_TERM_JUMP + 1),
        _ => own.saturating_add(rng.range(2, MAX_TERM_JUMP)),
    }
    .min(MAX_TERM);
    let incarnation = sim.last_sent.get(&from).map_or(0, |s| s.0);
    let msg = match rng.below(4) {
        0 => Message::PreVote,
        1 => Message::Heartbeat { sent_at: 0 },
        2 => Message::HeartbeatAck { echo: 0 },
        _ => Message::App { seq: rng.next_u64() >> 12, payload: b"oops".to_vec() },
    };
    if let Some(bytes) = forge(sim, &from, &to, term, incarnation, msg) {
        sim.logf(format_args!("ADVERSARY {from} -> {to}: term {term}"));
        let delay = rng.range(0, 5);
        sim.inject_later(delay, &from, &to, bytes);
    }
}

/// The recorder replays `count` datagrams it saw earlier (any of every datagram sent so far), byte
/// for byte, to their original receivers under their original senders, at random later times:
/// half within 50 ms, half up to 3 s later (past partitions that formed or healed since, and
/// through any partition: the adversary is not on the blocked links).
pub fn replay(sim: &mut Sim, rng: &mut Rng, count: usize) {
    if sim.recorder.is_empty() {
        return;
    }
    for _ in 0..count {
        let (from, to, bytes) = sim.recorder[rng.below(sim.recorder.len())].clone();
        let delay = if rng.chance(0.5) { rng.range(0, 50) } else { rng.range(0, 3_000) };
        sim.inject_later(delay, &from, &to, bytes);
    }
}

/// After `dead` (the leader) crashed silently, the recorder works for `for_ms`: every `period`
/// ms (drawn per run, 20–150) it replays the newest datagram `dead` sent in its last term of each
/// kind to each receiver — its last heartbeats, the vote requests of the campaign that made it
/// leader, its last broadcasts — each with probability ½, plus 0–3 datagrams drawn from
/// everything recorded. Replayed vote requests once kept every follower from timing out (each re-grant
/// restarted its election timer); replayed heartbeats kept them loyal (stickiness).
pub fn replay_after_crash(sim: &mut Sim, rng: &mut Rng, dead: &str, for_ms: u64) {
    let key = sim.nodes[0].config.key.clone();
    let Some(&(_, term)) = sim.last_sent.get(dead) else { return };
    let mut newest: Vec<((String, &'static str), Vec<u8>)> = Vec::new();
    for (from, to, bytes) in sim.recorder.iter().rev() {
        if from != dead {
            continue;
        }
        let Ok(env) = wire::decode(bytes, key.as_deref().map(|key| wire::Auth { key, receiver: to })) else { continue };
        if env.term < term {
            // Sent before the campaign that made it leader: older terms are what the uniform
            // picks below replay (and what decoding the whole run would cost every seed).
            break;
        }
        let k = (to.clone(), env.message.kind());
        if !newest.iter().any(|(x, _)| *x == k) {
            newest.push((k, bytes.clone()));
        }
    }
    let period = rng.range(20, 150);
    let mut t = rng.range(0, period);
    while t <= for_ms {
        for ((to, _), bytes) in &newest {
            if rng.chance(0.5) {
                sim.inject_later(t, dead, to, bytes.clone());
            }
        }
        for _ in 0..rng.range(0, 3) {
            if sim.recorder.is_empty() {
                break;
            }
            let (from, to, bytes) = sim.recorder[rng.below(sim.recorder.len())].clone();
            sim.inject_later(t + rng.range(0, period), &from, &to, bytes);
        }
        t += period;
    }
}

/// Some hosts falsely report a peer they can still reach as `no_connection`. Returns the
/// (reporter, peer) pairs reported, which the hosts take back once the network is stable.
pub fn false_down(sim: &mut Sim, rng: &mut Rng) -> Vec<(String, String)> {
    let ids: Vec<String> = sim.nodes.iter().map(|n| n.id.clone()).collect();
    let peer = ids[rng.below(ids.len())].clone();
    let mut reported = Vec::new();
    for r in ids.iter().filter(|r| **r != peer) {
        if sim.nodes[sim.idx(r)].node.is_some() && rng.chance(0.5) {
            let ok = sim.call(r, Input::PeerDown(peer.clone(), PeerDownReason::NoConnection)).is_ok();
            // Only members are taken back: a report about an observer (or by one) is refused.
            let members = !sim.nodes[sim.idx(r)].config.observer && !sim.nodes[sim.idx(&peer)].config.observer;
            if ok && members {
                reported.push((r.clone(), peer.clone()));
            }
        }
    }
    reported
}

/// `peer_down(refused)` reports: about a crashed member (true: its port is closed), or about the
/// live leader (false: a transient error, a confused host) to some of the running nodes.
pub fn refused(sim: &mut Sim, rng: &mut Rng) {
    let ids: Vec<String> = sim.nodes.iter().map(|n| n.id.clone()).collect();
    let crashed: Vec<String> = sim.nodes.iter().filter(|n| n.node.is_none()).map(|n| n.id.clone()).collect();
    let subject = match (sim.leader(), crashed.is_empty()) {
        (Some(l), true) => l,
        (Some(l), false) if rng.chance(0.5) => l,
        (_, false) => crashed[rng.below(crashed.len())].clone(),
        (None, true) => ids[rng.below(ids.len())].clone(),
    };
    for r in ids.iter().filter(|r| **r != subject) {
        if sim.nodes[sim.idx(r)].node.is_some() && rng.chance(0.6) {
            let _ = sim.call(r, Input::PeerDown(subject.clone(), PeerDownReason::Refused));
        }
    }
}

/// Every running node but `peer` reports `peer` refused (the survivors' probes of a dead port).
pub fn report_refused(sim: &mut Sim, peer: &str) {
    let ids: Vec<String> = sim.nodes.iter().map(|n| n.id.clone()).collect();
    for r in ids.iter().filter(|r| *r != peer) {
        if sim.nodes[sim.idx(r)].node.is_some() {
            let _ = sim.call(r, Input::PeerDown(peer.to_string(), PeerDownReason::Refused));
        }
    }
}

/// Draws a clock rate within ±`rho_ppm`: each extreme a third of the time (the worst cases),
/// otherwise uniform.
pub fn draw_rate(rng: &mut Rng, rho_ppm: u32) -> i64 {
    let rho = i64::from(rho_ppm);
    match rng.below(3) {
        0 => -rho,
        1 => rho,
        _ => rng.range(0, 2 * rho as u64) as i64 - rho,
    }
}

/// Death notices that must change nothing, and deaths that must: one of
/// - a node whose watchdog is armed (a leader, or one whose leadership ended a moment ago, before
///   its host disarmed the watchdog) crashes: the watchdog sends its notices;
/// - a forged notice under a member's id: another incarnation than its run's, or a term it never
///   led (a run that is alive and led the term would be a true forgery, which only a key
///   prevents: without one every message is forgeable), or tagged with a key nobody has;
/// - a replay of a true notice sent earlier (an older term or an older incarnation).
pub fn notices(sim: &mut Sim, rng: &mut Rng) {
    let ids: Vec<String> = sim.nodes.iter().map(|n| n.id.clone()).collect();
    match rng.below(4) {
        0 => {
            let armed: Vec<String> =
                sim.nodes.iter().filter(|n| n.node.is_some() && n.armed.is_some()).map(|n| n.id.clone()).collect();
            if !armed.is_empty() {
                let id = armed[rng.below(armed.len())].clone();
                sim.crash(&id);
            }
        }
        1 | 2 => {
            let from = ids[rng.below(ids.len())].clone();
            let to = ids[rng.below(ids.len())].clone();
            let Some(&(incarnation, term)) = sim.last_sent.get(&from) else { return };
            if from == to {
                return;
            }
            // Under its live run: only a term below the one it is in now (it cannot lead that term
            // any more) that it did not lead. The run's current or a future term would be a true
            // forgery: without a key every message is forgeable, and this one releases promises.
            let led = |t: u64| sim.checker.term_leader.get(&t).is_some_and(|l| *l == from);
            let now_in = sim.nodes[sim.idx(&from)].node.as_ref().map(|n| n.term());
            let (term, incarnation, key) = match rng.below(3) {
                0 => (term, incarnation ^ (1 + rng.below(1 << 20) as u64), None),
                1 => {
                    let t = term.saturating_sub(rng.range(1, 3));
                    if led(t) || now_in.is_some_and(|now_in| t >= now_in) {
                        return;
                    }
                    (t, incarnation, None)
                }
                _ => (term, incarnation, Some(&b"a key nobody has"[..])),
            };
            let c = &sim.nodes[0].config;
            let env = Envelope {
                cluster: c.cluster.clone(),
                from: from.clone(),
                term,
                incarnation,
                message: Message::DeathNotice,
            };
            let Ok(bytes) = wire::encode(&env, key.map(|key| wire::Auth { key, receiver: &to })) else { return };
            sim.logf(format_args!("ADVERSARY forged death notice {from} -> {to}: term {term}"));
            let delay = rng.range(0, 50);
            sim.inject_later(delay, &from, &to, bytes);
        }
        _ => {
            if sim.sent_notices.is_empty() {
                return;
            }
            let (from, to, bytes) = sim.sent_notices[rng.below(sim.sent_notices.len())].clone();
            sim.logf(format_args!("ADVERSARY replays a death notice {from} -> {to}"));
            let delay = rng.range(0, 3_000);
            sim.inject_later(delay, &from, &to, bytes);
        }
    }
}
