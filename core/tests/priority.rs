//! Priorities, a preferred leader and witnesses: higher priority campaigns first, a leader hands
//! leadership to a steady member of higher priority by a transfer, a witness never leads, and a
//! cluster of default ranks sends nothing new. Test names are the rules (docs/protocol.md,
//! "Priorities, preemption and witnesses").

mod common;

use common::{ids, Harness};
use tenure::wire::Message;
use tenure::{Config, ConfigError, Event, Node, DEFAULT_ELECTION_TIMEOUT_MAX, PREEMPT_BACKOFF_FACTOR};

/// A cluster of `n` whose members get the priorities `prio` gives (and are witnesses where
/// `witness` says).
fn ranked(n: usize, prio: impl Fn(&str) -> u32, witness: impl Fn(&str) -> bool) -> Harness {
    Harness::with(n, |c| {
        let (p, w) = (prio(&c.id), witness(&c.id));
        c.priority(p).never_lead(w)
    })
}

fn kinds_on_wire(h: &Harness) -> Vec<&'static str> {
    h.wire.iter().filter_map(|(_, _, to, b)| h.nodes[to].decode_message(b).ok().map(|e| e.message.kind())).collect()
}

/// Every (instant, node) a leadership started at, in order.
fn leaderships(h: &Harness) -> Vec<(u64, String)> {
    h.events
        .iter()
        .filter(|(_, _, e)| matches!(e, Event::BecameLeader { .. }))
        .map(|(t, id, _)| (*t, id.clone()))
        .collect()
}

/// Runs in 1 ms steps, asserting that no two members lead at once.
fn run_checked(h: &mut Harness, until: u64) {
    run_for(h, until.saturating_sub(h.now));
}

/// [`run_checked`] for `ms` more.
fn run_for(h: &mut Harness, ms: u64) {
    let until = h.now + ms;
    while h.now < until {
        h.run_until(h.now + 1);
        assert!(h.leaders().len() <= 1, "two leaders at {}: {:?}", h.now, h.leaders());
    }
}

const PREEMPT: u64 = 2 * DEFAULT_ELECTION_TIMEOUT_MAX;

#[test]
fn a_leader_hands_leadership_to_a_steady_member_of_higher_priority_after_preempt_after() {
    // n5 has the highest priority; whoever wins the first election (nobody knows any priority
    // before the first messages), n5 leads after at most preempt_after of steady answers.
    let mut h = ranked(5, |id| if id == "n5" { 9 } else { 0 }, |_| false);
    run_checked(&mut h, 3_000);
    assert_eq!(h.leader(), "n5");
    let ls = leaderships(&h);
    if ls[0].1 != "n5" {
        // The first leader preempted to n5 by a transfer: n5's leadership started preempt_after
        // (plus the few ms of the first answers and the handover) after the first one.
        let (first, n5) = (ls[0].0, ls.iter().find(|(_, id)| id == "n5").unwrap().0);
        assert!(n5 >= first + PREEMPT && n5 <= first + PREEMPT + 60, "first leader at {first}, n5 at {n5}");
    }
    assert_eq!(ls.last().unwrap().1, "n5");
    // And stays: no flapping.
    let n = ls.len();
    run_checked(&mut h, 10_000);
    assert_eq!(leaderships(&h).len(), n, "{:?}", leaderships(&h));
}

#[test]
fn higher_priority_campaigns_first_among_healthy_members() {
    // Ranks n2 > n4 > the rest. Once n2 leads and dies, n4 (next in rank) is elected, not
    // whoever's timer fires first; when n4 dies too, of n1, n3 and n5 the smallest id.
    let mut h = ranked(5, |id| [("n2", 7), ("n4", 3)].iter().find(|(k, _)| *k == id).map_or(0, |p| p.1), |_| false);
    run_checked(&mut h, 3_000);
    assert_eq!(h.leader(), "n2");
    for (dead, next) in [("n2", "n4"), ("n4", "n1")] {
        h.down.insert(dead.into());
        let before = leaderships(&h).len();
        run_for(&mut h, 2_000);
        let after = leaderships(&h);
        assert_eq!(after.get(before).map(|l| l.1.as_str()), Some(next), "after {dead} died: {after:?}");
        assert_eq!(h.leader(), next);
    }
}

#[test]
fn a_witness_never_leads() {
    // n1 and n2 are witnesses: n3 leads; without n3 nobody does (the witnesses vote, and never
    // campaign), and with n3 back it leads again.
    let mut h = ranked(3, |_| 0, |id| id != "n3");
    run_checked(&mut h, 2_000);
    assert_eq!(h.leader(), "n3");
    h.down.insert("n3".into());
    run_checked(&mut h, 10_000);
    assert!(h.leaders().is_empty(), "{:?}", h.leaders());
    assert!(leaderships(&h).iter().all(|(_, id)| id == "n3"));
    h.down.remove("n3");
    run_checked(&mut h, 12_000);
    assert_eq!(h.leader(), "n3");
    // The witnesses acknowledge: n3's lease stands on them.
    assert!(h.nodes["n3"].lease_deadline().is_some());
}

#[test]
fn a_witness_never_accepts_a_transfer_to_itself_and_is_never_preempted_to() {
    // n1 is a witness of the highest priority: never preempted to, and a transfer to it is
    // ignored (the others elect after their election timeout).
    let mut h = ranked(3, |id| if id == "n1" { 50 } else { 0 }, |id| id == "n1");
    run_checked(&mut h, 5_000);
    let leader = h.leader();
    assert_ne!(leader, "n1");
    assert_eq!(h.nodes[&leader].peer_priority("n1"), Some((50, true)));
    assert_ne!(h.nodes[&leader].transfer_target(), Some("n1"));
    let now = h.now;
    h.node(&leader).transfer_leadership(now, "n1").unwrap();
    h.drain(&leader);
    run_for(&mut h, 3_000);
    assert!(leaderships(&h).iter().all(|(_, id)| id != "n1"));
    assert_eq!(h.leaders().len(), 1);
}

#[test]
fn default_ranks_everywhere_send_no_priority_message_and_elect_as_before() {
    // Priority 0 and no witness, set explicitly: the same bytes as a cluster configured without
    // them (the same timers, the same wire), and no `priority` message.
    let mut plain = Harness::new(5);
    let mut zero = ranked(5, |_| 0, |_| false);
    plain.run_until(5_000);
    zero.run_until(5_000);
    assert_eq!(plain.wire, zero.wire);
    assert!(!kinds_on_wire(&zero).contains(&"priority"));
}

#[test]
fn a_member_of_wire_version_3_counts_as_priority_0_and_is_sent_no_priority() {
    let mut h = ranked(3, |id| if id == "n2" { 4 } else { 0 }, |_| false);
    h.old.insert("n3".into());
    h.node("n3").limit_wire_version(tenure::wire::MIN_VERSION);
    run_checked(&mut h, 3_000);
    assert_eq!(h.leader(), "n2");
    let to_old = h.wire.iter().filter(|(_, _, to, _)| to == "n3");
    assert!(to_old
        .filter_map(|(_, _, _, b)| h.nodes["n1"].decode_message(b).ok())
        .all(|e| e.message.kind() != "priority"));
    assert_eq!(h.nodes["n2"].peer_priority("n3"), Some((0, false)));
    assert_eq!(h.nodes["n1"].peer_priority("n2"), Some((4, false)));
}

#[test]
fn a_lost_priority_is_told_again_until_answered() {
    let mut h = ranked(3, |id| if id == "n3" { 2 } else { 0 }, |_| false);
    // Every Priority of n3 is lost for the first second.
    while h.now < 1_000 {
        let keep = std::mem::take(&mut h.in_flight)
            .into_iter()
            .filter(|(_, from, to, b)| {
                !(from == "n3"
                    && h.nodes[to].decode_message(b).is_ok_and(|e| matches!(e.message, Message::Priority { .. })))
            })
            .collect();
        h.in_flight = keep;
        h.run_until(h.now + 1);
    }
    assert_eq!(h.nodes["n1"].peer_priority("n3"), Some((0, false)));
    run_checked(&mut h, 4_000);
    assert_eq!(h.nodes["n1"].peer_priority("n3"), Some((2, false)));
    assert_eq!(h.leader(), "n3");
    // Answered: nothing more is sent.
    let told = kinds_on_wire(&h).iter().filter(|k| **k == "priority").count();
    run_checked(&mut h, 6_000);
    assert_eq!(kinds_on_wire(&h).iter().filter(|k| **k == "priority").count(), told);
}

#[test]
fn a_preemption_is_a_transfer_the_leader_stops_leading_before_the_member_campaigns() {
    // n1 leads alone first (n3 is down), then n3 of higher priority returns: the moment n1 sends
    // its TimeoutNow it is no longer leader and its lease is over, as in any transfer.
    let mut h = ranked(3, |id| if id == "n3" { 1 } else { 0 }, |_| false);
    h.down.insert("n3".into());
    h.down.insert("n2".into());
    h.run_until(10);
    h.down.remove("n2");
    run_checked(&mut h, 2_000);
    let first = h.leader();
    h.down.remove("n3");
    let back = h.now;
    let mut handed = None;
    while handed.is_none() {
        h.run_until(h.now + 1);
        let timeout_now = h.wire.iter().any(|(t, from, _, b)| {
            *t == h.now
                && *from == first
                && h.nodes["n3"].decode_message(b).is_ok_and(|e| e.message == Message::TimeoutNow)
        });
        if timeout_now {
            handed = Some(h.now);
            assert!(!h.nodes[&first].is_leader(), "still leading after handing over");
            assert_eq!(h.nodes[&first].lease_deadline(), None);
        }
        assert!(h.now < back + 2 * PREEMPT, "no preemption");
    }
    run_for(&mut h, 100);
    assert_eq!(h.leader(), "n3");
    let took = leaderships(&h).last().unwrap().0 - back;
    // The preferred member's return to its leadership: preempt_after of steady answers, after
    // the first heartbeat it answers (at most one interval) and a few round trips.
    assert!(took <= PREEMPT + 50 + 10, "{took} ms");
}

#[test]
fn a_member_that_failed_to_take_leadership_after_a_preemption_is_not_preempted_to_before_the_backoff() {
    // n3 (higher priority) holds its campaigns, so every transfer to it fails: the leader leads
    // again after its election timeout and does not preempt to n3 again before
    // PREEMPT_BACKOFF_FACTOR × preempt_after.
    let mut h = ranked(3, |id| if id == "n3" { 1 } else { 0 }, |_| false);
    h.down.insert("n3".into());
    run_checked(&mut h, 2_000);
    h.down.remove("n3");
    let now = h.now;
    h.node("n3").hold_campaigns(now, u64::MAX);
    let until = now + 3 * PREEMPT_BACKOFF_FACTOR * PREEMPT;
    run_checked(&mut h, until);
    // The backoff is each leader's own (what it knows): per leader, one preemption to n3 per
    // window at most.
    let mut total = 0;
    for leader in ["n1", "n2"] {
        let mut preemptions: Vec<u64> = h
            .wire
            .iter()
            .filter(|(_, from, to, b)| {
                from == leader
                    && to == "n3"
                    && h.nodes["n3"].decode_message(b).is_ok_and(|e| e.message == Message::TimeoutNow)
            })
            .map(|(t, ..)| *t)
            .collect();
        preemptions.dedup();
        total += preemptions.len();
        for w in preemptions.windows(2) {
            assert!(
                w[1] - w[0] >= PREEMPT_BACKOFF_FACTOR * PREEMPT,
                "{leader} preempted again too soon: {preemptions:?}"
            );
        }
    }
    assert!(total > 0);
    assert!(leaderships(&h).iter().all(|(_, id)| id != "n3"));
}

#[test]
fn preempt_after_zero_turns_preemption_off() {
    let mut h = Harness::with(3, |c| {
        let p = u32::from(c.id == "n3");
        c.priority(p).preempt_after(0)
    });
    h.down.insert("n3".into());
    run_checked(&mut h, 2_000);
    let first = h.leader();
    h.down.remove("n3");
    run_checked(&mut h, 10_000);
    assert_eq!(h.leader(), first);
    assert_eq!(h.nodes[&first].peer_priority("n3"), Some((1, false)));
}

#[test]
fn a_restarted_member_has_the_default_rank_until_it_tells_its_new_one() {
    let mut h = ranked(3, |id| if id == "n3" { 5 } else { 0 }, |_| false);
    run_checked(&mut h, 3_000);
    assert_eq!(h.leader(), "n3");
    // n3 restarts with priority 0: nobody keeps its old rank, and nobody preempts to it.
    let config = Config::new("n3", "test").bootstrap(ids(3));
    let now = h.now;
    h.nodes.insert("n3".into(), Node::new(config, 999, None, now).unwrap());
    run_for(&mut h, 5_000);
    let leader = h.leader();
    assert_eq!(h.nodes[&leader].known_priorities(), Vec::new());
}

#[test]
fn preempt_after_is_bounded_like_every_duration() {
    let e = Config::new("a", "c").preempt_after(u64::MAX).validate().unwrap_err();
    assert_eq!(e, ConfigError::DurationTooLarge { field: "preempt_after", value: u64::MAX });
    let v = Config::new("a", "c").validate().unwrap();
    assert_eq!(v.preempt_after, 2 * v.election_timeout_max);
    assert_eq!(Config::new("a", "c").preempt_after(0).validate().unwrap().preempt_after, 0);
}

/// The injected bug: a preemption that tells the member to campaign without handing over. The
/// member's vote request to the old leader is lost (its other messages arrive): after a transfer
/// the old leader has stopped leading already; with the bug it leads on beside the new leader.
#[cfg(feature = "bug-injection")]
#[test]
fn a_preemption_without_a_transfer_is_caught() {
    let two_leaders = |bug: bool| {
        let mut h = ranked(3, |id| if id == "n3" { 1 } else { 0 }, |_| false);
        if bug {
            for n in h.nodes.values_mut() {
                n.inject_bug(tenure::Bug::PreemptWithoutTransfer);
            }
        }
        h.down.insert("n3".into());
        h.run_until(2_000);
        let first = h.leader();
        h.down.remove("n3");
        while h.now < 4_000 {
            let keep = std::mem::take(&mut h.in_flight)
                .into_iter()
                .filter(|(_, from, to, b)| {
                    !(from == "n3"
                        && *to == first
                        && h.nodes["n3"].decode_message(b).is_ok_and(|e| matches!(e.message, Message::Vote { .. })))
                })
                .collect();
            h.in_flight = keep;
            h.run_until(h.now + 1);
            if h.leaders().len() > 1 {
                return true;
            }
        }
        assert_eq!(h.leader(), "n3");
        false
    };
    assert!(!two_leaders(false), "a transfer left two leaders");
    assert!(two_leaders(true), "the bug went unnoticed: never two leaders at once");
}

#[test]
fn a_member_that_knows_an_earlier_runs_rank_asks_the_new_run_for_its_own() {
    let mut h = ranked(3, |id| if id == "n3" { 5 } else { 0 }, |_| false);
    run_checked(&mut h, 3_000);
    assert_eq!(h.nodes["n1"].peer_priority("n3"), Some((5, false)));
    let is_priority = |h: &Harness, to: &str, b: &[u8]| {
        h.nodes[to].decode_message(b).is_ok_and(|e| matches!(e.message, Message::Priority { reply: false, .. }))
    };
    // A Priority of n3's first run to n1, as a recorder on the wire keeps it.
    let old = h.wire.iter().find(|(_, from, to, b)| from == "n3" && to == "n1" && is_priority(&h, to, b)).unwrap();
    let old = old.3.clone();
    // n3 restarts with the same rank. The late copy of its first run's Priority reaches n1 before
    // anything of the new run: n1 answers it, and the new run takes that answer for an answer to
    // its own Priority, every one of which is lost for two seconds. n1 then hears the new run
    // (its greeting), so the rank it knows is the earlier run's.
    let config = Config::new("n3", "test").bootstrap(ids(3)).priority(5);
    let now = h.now;
    h.nodes.insert("n3".into(), Node::new(config, 999, None, now).unwrap());
    h.in_flight.push((now, "n3".into(), "n1".into(), old));
    while h.now < now + 2_000 {
        let keep = std::mem::take(&mut h.in_flight)
            .into_iter()
            .filter(|(t, from, to, b)| !(*t > now && from == "n3" && to == "n1" && is_priority(&h, to, b)))
            .collect();
        h.in_flight = keep;
        h.run_until(h.now + 1);
    }
    // n1 asks the new run, whose answer carries its rank.
    run_for(&mut h, 2_000);
    assert_eq!(h.nodes["n1"].peer_priority("n3"), Some((5, false)));
}
