//! Named tests: what one stranger can and cannot do to a cluster.

use std::collections::BTreeMap;

use tenure::{Config, Event};
use tenure_sim::adversary::FAKE_VOTER;
use tenure_sim::compat::admit_unknown_peers;
use tenure_sim::sim::{NetConfig, Sim};

/// A 4-node cluster split 2|2 with a fake voter that grants every vote it sees; returns the
/// leaders of each term seen during 3 s (from the `BecameLeader` events).
fn split_with_fake_voter(admit: bool) -> BTreeMap<u64, Vec<String>> {
    let mut s = Sim::cluster(4242, 4, NetConfig::rtt(2), |c: Config| admit_unknown_peers(c.durable(true), admit));
    s.keep_events = true;
    s.fake_voters = vec![FAKE_VOTER.to_string()];
    s.partition(&[vec!["n1".into(), "n2".into()], vec!["n3".into(), "n4".into()]]);
    if let Err(v) = s.run_for(3000) {
        panic!("{v}");
    }
    let mut leaders: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for n in &s.nodes {
        for (_, e) in &n.events {
            if let Event::BecameLeader { term } = e {
                leaders.entry(*term).or_default().push(n.id.clone());
            }
        }
    }
    leaders
}

/// Closed membership (the default): the fake voter's grants are dropped (`unknown_peer`), so
/// neither half of a 2|2 split has a majority and nobody leads.
#[test]
fn a_fake_voter_cannot_elect_anyone_in_a_closed_cluster() {
    let leaders = split_with_fake_voter(false);
    assert!(leaders.is_empty(), "no half of a 2|2 split may lead, but: {leaders:?}");
}

/// With `admit_unknown_peers` (discovery mode, no key) the fake voter is admitted and counted:
/// the documented hazard of that mode, shown here so that it is never mistaken for the default.
#[test]
fn a_fake_voter_is_counted_in_admit_mode_without_a_key() {
    let leaders = split_with_fake_voter(true);
    assert!(!leaders.is_empty(), "in admit mode a fake voter tips a half into electing: {leaders:?}");
}
