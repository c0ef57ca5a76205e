//! One host step: an input handed to the real node at its clock's reading, then every output
//! carried out in order (a `Persist` is durable before any later `Send` leaves, as docs/host.md
//! requires), with the checker's bookkeeping on what actually went on the wire.

use tenure::wire::{self, Message};
use tenure::{Event, Output};
use tenure_sim::scenario::{apply_input, output_json, Input, Step};

use crate::{index_of, Broken, Dgram, Opts, State, IDS};

/// A recording of a path: per node run, the scenario steps it took, and a readable log.
#[derive(Debug, Default)]
pub struct Rec {
    /// `(node, run, start_ms, restored, step)` for every input handed to a node.
    pub steps: Vec<(u8, u8, Step)>,
    /// Where each node run started: `(node, run, host time, restored state)`.
    pub starts: Vec<(u8, u8, u64, Option<tenure::DurableState>)>,
}

impl State {
    /// Node `i`'s clock reading now.
    pub fn local(&self, i: usize) -> u64 {
        self.hosts[i].clock.local(self.now)
    }

    /// Whether node `i` runs.
    pub fn up(&self, i: usize) -> bool {
        self.hosts[i].node.is_some()
    }

    /// Hands `input` to node `i` and carries out its outputs; `track` keeps the checker's history
    /// (off in the liveness probe's continuation). Returns the input's result.
    pub fn input(
        &mut self,
        opts: &Opts,
        i: usize,
        input: &Input,
        track: bool,
        rec: Option<&mut Rec>,
    ) -> Result<(), &'static str> {
        let local = self.local(i);
        let now = self.now;
        let host = &mut self.hosts[i];
        let Some(run) = host.node.as_mut() else { return Err("down") };
        let led = run.node.is_leader().then(|| run.node.term());
        let node = run.node_mut();
        let result = apply_input(node, local, input);
        let mut outputs = Vec::new();
        let mut sends = Vec::new();
        let mut self_votes = Vec::new();
        while let Some(o) = node.poll_output() {
            if rec.is_some() {
                outputs.push(output_json(&o));
            }
            match o {
                Output::Send { to, bytes } => sends.push((index_of(&to), bytes)),
                Output::Persist(s) => {
                    if s.voted_for.as_deref() == Some(IDS[i]) {
                        self_votes.push(s.term);
                    }
                    host.durable = s;
                }
                Output::Event(Event::ConfirmLeader { term }) => host.confirm = Some(term),
                Output::Event(_) => {}
            }
        }
        let leader_term = run.node.is_leader().then(|| run.node.term());
        // A campaign of a new term asks for votes now (`start_election` runs inside one input).
        let candidate_term = (run.node.role() == tenure::Role::Candidate).then(|| run.node.term());
        let term_now = run.node.term();
        let lease_after = run.node.lease_deadline();
        let next_deadline = run.node.poll_timeout();
        let clock = host.clock;
        if let Some(rec) = rec {
            let step = Step {
                at: local,
                input: input.to_json(),
                result: result.map_or_else(|e| e.to_string(), |()| "ok".to_string()),
                outputs,
                next_deadline,
            };
            rec.steps.push((i as u8, host.runs, step));
        }
        if track {
            for term in self_votes {
                self.vote(i as u8, term, i as u8);
            }
            if let Some(term) = candidate_term {
                if self.ghost.campaign[i].0 != term {
                    // The core forgets the evidence of earlier terms when it campaigns.
                    self.ghost.campaign[i] = (term, clock.real_at(clock.local(now)).min(now));
                    self.ghost.heard[i] = [0; 4];
                }
            }
            // Check-quorum evidence: an acknowledgement the leader accepted, in its term, of a
            // heartbeat it sent, dated when that heartbeat left (a replay is old evidence); and a
            // vote granted to its campaign in that term, dated when the campaign asked.
            if let (Input::Message { from, bytes }, Ok(())) = (input, result) {
                if let Ok(env) = wire::decode(bytes, None) {
                    let p = index_of(from) as usize;
                    let fresh = match env.message {
                        Message::HeartbeatAck { echo } if leader_term == Some(env.term) => {
                            Some(clock.real_at(echo).min(now))
                        }
                        Message::VoteReply { granted: true }
                            if env.term == term_now && self.ghost.campaign[i].0 == term_now =>
                        {
                            Some(self.ghost.campaign[i].1)
                        }
                        _ => None,
                    };
                    if let (Some(at), true) = (fresh, p < 4) {
                        let e = &mut self.ghost.heard[i][p];
                        *e = (*e).max(at);
                    }
                }
            }
        }
        let transfer = matches!(input, Input::Transfer(_));
        // Each datagram decoded once, for every check below.
        let sends: Vec<(u8, Vec<u8>, Option<wire::Envelope>)> = sends
            .into_iter()
            .map(|(to, bytes)| {
                let env = wire::decode(&bytes, None).ok();
                (to, bytes, env)
            })
            .collect();
        for (to, _, env) in &sends {
            let Some(env) = env else { continue };
            self.roles_sent(opts, i, *to, &env.message);
            if env.message == Message::TimeoutNow && !transfer {
                self.preempted(opts, i, *to, led, (leader_term, lease_after));
            }
        }
        for (to, bytes, env) in sends {
            self.gate(opts, i as u8, to, &bytes);
            if track {
                if let Some(env) = &env {
                    if let Message::VoteReply { granted: true } = env.message {
                        self.vote(i as u8, env.term, to);
                    }
                }
            }
            if usize::from(to) >= opts.nodes || self.cut.is_some_and(|c| c == to || usize::from(c) == i) {
                continue;
            }
            let d = Dgram { from: i as u8, to, bytes };
            self.remember(opts, &d, env.as_ref());
            if self.net.len() < opts.max_in_flight {
                let k = self.net.binary_search(&d).unwrap_or_else(|k| k);
                self.net.insert(k, d);
            }
        }
        result
    }

    /// Adds a datagram a member sent to [`State::seen`]. Without an adversary that replays
    /// anything, only what the liveness probe's recorder replays is kept: per sender and
    /// destination, the newest heartbeat and the vote requests of the newest term (older history
    /// would only tell otherwise equal states apart). `env`: `d` decoded (`None`: undecodable).
    fn remember(&mut self, opts: &Opts, d: &Dgram, env: Option<&wire::Envelope>) {
        if opts.budget.adversary == 0 {
            let Some(env) = env else { return };
            let heartbeat = matches!(env.message, Message::Heartbeat { .. });
            if !heartbeat && !matches!(env.message, Message::Vote { .. }) {
                return;
            }
            // Drops what this datagram supersedes: an older heartbeat, votes of an older term.
            self.seen.retain(|o| {
                if o.from != d.from || o.to != d.to {
                    return true;
                }
                match wire::decode(&o.bytes, None) {
                    Ok(old) => match old.message {
                        Message::Heartbeat { .. } => !heartbeat,
                        Message::Vote { .. } => old.term >= env.term,
                        _ => false,
                    },
                    Err(_) => false,
                }
            });
        }
        if let Err(k) = self.seen.binary_search(d) {
            self.seen.insert(k, d.clone());
        }
    }

    /// The wire-version gate: `from` addresses `to` a datagram. A violation when `to` is the node
    /// that speaks only version 3 (`Opts::old`, which never says otherwise) and the datagram is
    /// of a newer version and no `Hello`.
    pub fn gate(&mut self, opts: &Opts, from: u8, to: u8, bytes: &[u8]) {
        let newer = bytes.get(2).is_some_and(|v| *v > wire::MIN_VERSION);
        if opts.old != Some(to) || !newer || self.broken.is_some() {
            return;
        }
        match wire::decode(bytes, None) {
            Ok(env) if matches!(env.message, Message::Hello { .. }) => {}
            decoded => {
                let kind = decoded.map_or("undecodable", |e| e.message.kind());
                self.broken = Some(Broken {
                    name: "gate",
                    why: format!(
                        "{} sent {} a {kind} (wire version 4); it speaks only version 3",
                        name(from),
                        name(to)
                    ),
                });
            }
        }
    }

    /// What a witness and an observer may put on the wire: an observer only `Observe` (it never
    /// votes, acknowledges or greets), a witness no vote request (it never campaigns).
    fn roles_sent(&mut self, opts: &Opts, from: usize, to: u8, message: &Message) {
        if opts.is_observer(from) && !matches!(message, Message::Observe { .. }) {
            let why = format!("observer {} sent {} a {}", IDS[from], name(to), message.kind());
            crate::props::set_broken(&mut self.broken, "observer", why);
        }
        if opts.ranks[from].1 && matches!(message, Message::Vote { .. } | Message::PreVote) {
            let why = format!("witness {} asked {} for a {}: it campaigns", IDS[from], name(to), message.kind());
            crate::props::set_broken(&mut self.broken, "witness", why);
        }
    }

    /// Node `i` sent `to` a `TimeoutNow` on an input that was no host transfer: a preemption.
    /// It is a transfer (docs/protocol.md, "Priorities"): the node led (`led`: its term before
    /// the input), stops leading in the same input, its lease ending there (`after`: the term it
    /// leads and the lease it reports after the input), and hands over to a member of higher
    /// priority than its own that is no witness. Its lease then ends at this instant, as a host's
    /// transfer ends it.
    fn preempted(&mut self, opts: &Opts, i: usize, to: u8, led: Option<u64>, after: (Option<u64>, Option<u64>)) {
        let (me, target) = (opts.ranks[i], opts.ranks.get(usize::from(to)).copied().unwrap_or((0, true)));
        let why = match (led, after) {
            (None, _) => Some(format!("{} sent {} a TimeoutNow without leading", IDS[i], name(to))),
            (Some(t), (Some(_), lease)) => Some(format!(
                "{} preempted to {} (TimeoutNow) in term {t} and still leads, its lease {}",
                IDS[i],
                name(to),
                lease.map_or("ended".to_string(), |d| format!("running to {d} ms of its clock"))
            )),
            _ if !opts.may_lead(usize::from(to)) => {
                Some(format!("{} preempted to {}, which may not lead (witness or observer)", IDS[i], name(to)))
            }
            _ if target.0 <= me.0 => Some(format!(
                "{} (priority {}) preempted to {} of priority {}, not higher",
                IDS[i],
                me.0,
                name(to),
                target.0
            )),
            _ => None,
        };
        if let Some(why) = why {
            crate::props::set_broken(&mut self.broken, "preempt", why);
        }
        if let Some(term) = led {
            self.ghost.preempted = true;
            let now = self.now;
            if let Ok(k) = self.ghost.lease.binary_search_by_key(&term, |e| e.0) {
                self.ghost.lease[k].1 = self.ghost.lease[k].1.min(now);
            }
        }
    }

    /// Records that `voter` gave its vote of `term` to `candidate` (one vote per term).
    fn vote(&mut self, voter: u8, term: u64, candidate: u8) {
        let votes = &mut self.ghost.votes;
        match votes.binary_search_by(|v| (v.0, v.1).cmp(&(voter, term))) {
            Ok(k) => {
                let prev = votes[k].2;
                if prev != candidate && self.broken.is_none() {
                    self.broken = Some(Broken {
                        name: "one-vote",
                        why: format!(
                            "{} gave its vote of term {term} to {} and to {}",
                            IDS[voter as usize],
                            name(prev),
                            name(candidate)
                        ),
                    });
                }
            }
            Err(k) => votes.insert(k, (voter, term, candidate)),
        }
    }
}

/// A readable node name.
pub fn name(i: u8) -> &'static str {
    IDS.get(usize::from(i)).copied().unwrap_or(crate::STRANGER)
}

#[cfg(test)]
mod tests {
    use crate::{model::initial, scopes, Start};

    /// `preempt` judges a preemption by the ranks: to a witness, or to a member of no higher
    /// priority, is a violation; to a member of higher priority that may lead is not, and ends the
    /// leader's lease at that instant (the core never does the first two, so only this test shows
    /// the property can fail on them).
    #[test]
    fn preempt_judges_the_target_by_its_rank_and_a_handover_ends_the_lease() {
        let opts = scopes().into_iter().find(|s| s.name == "priority").expect("scope").opts;
        let start = initial(&opts, Start::Led, &[0; 4]);
        let term = start.hosts[1].node.as_ref().expect("n2 runs").node.term();
        assert!(start.ghost.lease.iter().any(|l| l.0 == term && l.1 > start.now), "n2 holds a lease");
        let broken = |from: usize, to: u8| {
            let mut s = start.clone();
            s.preempted(&opts, from, to, Some(term), (None, None));
            s
        };
        let to_witness = broken(1, 0).broken.expect("to the witness n1");
        assert_eq!((to_witness.name, to_witness.why.contains("may not lead")), ("preempt", true), "{to_witness:?}");
        let downward = broken(2, 1).broken.expect("n3 (priority 2) to n2 (priority 1)");
        assert_eq!((downward.name, downward.why.contains("not higher")), ("preempt", true), "{downward:?}");
        let up = broken(1, 2);
        assert!(up.broken.is_none(), "{:?}", up.broken);
        assert!(up.ghost.preempted);
        assert!(up.ghost.lease.iter().all(|l| l.0 != term || l.1 <= up.now), "the lease ends at the handover");
    }
}
