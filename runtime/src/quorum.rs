//! Which members are silent, and how many more can fail before the quorum is lost, from when
//! the runtime last had a message from each member accepted (tracked by the run loop for every
//! engine) and the core's `Inspect::peer_acked_at` (native engine only), for `/metrics` and two
//! warnings.
//!
//! A node only hears the members that talk to it: a leader hears every member (acknowledgements),
//! a node without a leader hears every member that answers its (pre-)vote requests, but a
//! follower hears its leader alone, never the other followers. So a follower with a leader makes
//! no claim (`slack` is `None`, no member is called silent); the leader's `/metrics` and
//! warnings are the ones that see a dead follower.

use tenure::Inspect;

/// What [`assess`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct QuorumView {
    /// Members in the view, counting this node.
    pub(crate) members: u64,
    /// Votes needed to win.
    pub(crate) quorum: u64,
    /// Members not heard from within the window (sorted by id); empty when unknown.
    pub(crate) silent: Vec<String>,
    /// How many more members can fail before the quorum is lost (negative: lost already);
    /// `None` when this node cannot tell (a follower with a leader).
    pub(crate) slack: Option<i64>,
    /// Per peer: (id, last heard at, last acknowledged heartbeat's `sent_at`), runtime-clock ms.
    pub(crate) peers: Vec<(String, Option<u64>, Option<u64>)>,
}

/// How long a member may go unheard before it counts as silent: two election timeouts. A leader
/// hears each member every heartbeat interval; a node without a leader asks for (pre-)votes at
/// least once per election timeout, so a live member answers well within it.
pub(crate) fn silent_after(election_timeout_max: u64) -> u64 {
    election_timeout_max.saturating_mul(2)
}

/// Reads `i` at `now`, with `heard(peer)` when a message of `peer` was last accepted: `window`
/// is [`silent_after`]'s.
pub(crate) fn assess(i: &Inspect, heard: impl Fn(&str) -> Option<u64>, now: u64, window: u64) -> QuorumView {
    let acked = |id: &str| i.peer_acked_at.iter().find(|(k, _)| k == id).map(|&(_, t)| t);
    let peers: Vec<(String, Option<u64>, Option<u64>)> =
        i.peers.iter().map(|p| (p.clone(), heard(p), acked(p))).collect();
    let members = u64::from(i.view_size);
    let quorum = u64::from(i.quorum);
    let sees_everyone = i.is_leader || i.leader.is_none();
    if !sees_everyone {
        return QuorumView { members, quorum, silent: Vec::new(), slack: None, peers };
    }
    let silent: Vec<String> = peers
        .iter()
        .filter(|(_, heard, _)| heard.is_none_or(|t| now.saturating_sub(t) > window))
        .map(|(p, _, _)| p.clone())
        .collect();
    let answering = members.saturating_sub(silent.len() as u64);
    let slack = i64::try_from(answering).unwrap_or(i64::MAX) - i64::try_from(quorum).unwrap_or(i64::MAX);
    QuorumView { members, quorum, silent, slack: Some(slack), peers }
}

/// The warning a leader gives while members are silent (`silent_peers`).
pub(crate) fn silent_message(v: &QuorumView, window: u64) -> String {
    let slack = v.slack.unwrap_or(0);
    let margin = match slack {
        s if s < 0 => "the quorum is lost: this leader will step down".to_string(),
        0 => "no other member can fail without losing the quorum".to_string(),
        s => format!("{s} more can fail before the quorum is lost"),
    };
    format!(
        "{} of {} members silent for more than {window} ms ({}); {margin}",
        v.silent.len(),
        v.members,
        v.silent.join(", ")
    )
}

/// The warning of a node that cannot elect because too few members answer
/// (`waiting_for_quorum`).
pub(crate) fn waiting_message(v: &QuorumView) -> String {
    format!(
        "waiting for a quorum: {} of {} members silent ({}); a leader needs {} answering",
        v.silent.len(),
        v.members,
        v.silent.join(", "),
        v.quorum
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inspect(is_leader: bool, leader: Option<&str>, heard: &[(&str, u64)], acked: &[(&str, u64)]) -> Inspect {
        let pairs = |v: &[(&str, u64)]| v.iter().map(|(k, t)| (k.to_string(), *t)).collect();
        let mut i =
            tenure::Node::new(tenure::Config::new("a", "c").bootstrap(["b", "c"]), 1, None, 0).unwrap().inspect();
        i.is_leader = is_leader;
        i.leader = leader.map(String::from);
        i.peer_heard_at = pairs(heard);
        i.peer_acked_at = pairs(acked);
        i
    }

    /// The test inspects carry the heard-at times the run loop would have tracked.
    fn heard_of(i: &Inspect, p: &str) -> Option<u64> {
        i.peer_heard_at.iter().find(|(k, _)| k == p).map(|&(_, t)| t)
    }

    #[test]
    fn a_leader_names_silent_members_and_the_slack() {
        let i = inspect(true, Some("a"), &[("b", 1_000), ("c", 400)], &[("b", 990)]);
        let v = assess(&i, |p| heard_of(&i, p), 1_100, 600);
        assert_eq!((v.members, v.quorum), (3, 2));
        assert_eq!(v.silent, ["c"]);
        assert_eq!(v.slack, Some(0));
        assert_eq!(v.peers[0], ("b".to_string(), Some(1_000), Some(990)));
        assert_eq!(v.peers[1], ("c".to_string(), Some(400), None));
        let m = silent_message(&v, 600);
        assert_eq!(
            m,
            "1 of 3 members silent for more than 600 ms (c); no other member can fail without losing the quorum"
        );
        // Everyone answering: one more can fail.
        let i = inspect(true, Some("a"), &[("b", 1_000), ("c", 1_000)], &[]);
        let v = assess(&i, |p| heard_of(&i, p), 1_100, 600);
        assert_eq!((v.silent.len(), v.slack), (0, Some(1)));
    }

    #[test]
    fn a_node_without_a_leader_counts_who_answers_and_a_follower_makes_no_claim() {
        // 1 of 3 running: neither peer ever answered.
        let v = assess(&inspect(false, None, &[], &[]), |_| None, 5_000, 600);
        assert_eq!(v.silent, ["b", "c"]);
        assert_eq!(v.slack, Some(-1));
        assert_eq!(
            waiting_message(&v),
            "waiting for a quorum: 2 of 3 members silent (b, c); a leader needs 2 answering"
        );
        // A follower hears its leader only: the other follower's silence means nothing.
        let i = inspect(false, Some("b"), &[("b", 4_990)], &[]);
        let v = assess(&i, |p| heard_of(&i, p), 5_000, 600);
        assert_eq!((v.silent.len(), v.slack), (0, None));
    }
}
