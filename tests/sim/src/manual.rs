//! A hand-driven network for scripted reproductions: every timer fires when due (nodes are never
//! starved), but nothing is delivered until the script says which datagram arrives when, and the
//! hosts answer `ConfirmLeader` only when told. Any schedule a script builds is one the real
//! network could produce (arbitrary delay and loss).

use std::collections::BTreeMap;

use tenure::wire::{self, Envelope, Message};
use tenure::{Config, Event, Node, Output};

/// A datagram sent and not yet delivered.
#[derive(Debug, Clone)]
pub struct Pending {
    /// Sender id.
    pub from: String,
    /// Receiver id.
    pub to: String,
    /// The decoded envelope.
    pub env: Envelope,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// Nodes on a manual network, one clock (no drift).
pub struct Manual {
    /// Current time (ms).
    pub now: u64,
    /// The nodes by id.
    pub nodes: BTreeMap<String, Node>,
    /// Datagrams sent and not yet delivered, in send order.
    pub pending: Vec<Pending>,
    /// Every event, in order: `(time, node, event)`.
    pub events: Vec<(u64, String, Event)>,
    /// `ConfirmLeader` questions not answered yet: `(node, term)`.
    pub confirms: Vec<(String, u64)>,
    /// Every delivery, in order.
    pub verdicts: Vec<Delivery>,
}

/// One delivery and the receiver's verdict.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// When.
    pub at: u64,
    /// Sender id.
    pub from: String,
    /// Receiver id.
    pub to: String,
    /// The message kind.
    pub kind: &'static str,
    /// The envelope's term.
    pub term: u64,
    /// `handle_message`'s result.
    pub verdict: Result<(), wire::DropReason>,
}

impl Manual {
    /// Nodes `ids` (each bootstrapped with all of them) with `config` applied, seeds `seed(i)`.
    pub fn new(ids: &[&str], config: impl Fn(Config) -> Config, seed: impl Fn(usize) -> u64) -> Manual {
        let mut nodes = BTreeMap::new();
        for (i, id) in ids.iter().enumerate() {
            let c = config(Config::new(*id, "manual").bootstrap(ids.iter().copied()));
            nodes.insert(id.to_string(), Node::new(c, seed(i), None, 0).expect("valid config"));
        }
        let mut m = Manual {
            now: 0,
            nodes,
            pending: Vec::new(),
            events: Vec::new(),
            confirms: Vec::new(),
            verdicts: Vec::new(),
        };
        for id in ids {
            m.drain(id);
        }
        m
    }

    /// The node `id`.
    pub fn node(&self, id: &str) -> &Node {
        &self.nodes[id]
    }

    fn drain(&mut self, id: &str) {
        let node = self.nodes.get_mut(id).expect("known node");
        while let Some(o) = node.poll_output() {
            match o {
                Output::Send { to, bytes } => {
                    let env = wire::decode(&bytes, None).expect("the node encodes what it sends");
                    self.pending.push(Pending { from: id.to_string(), to, env, bytes });
                }
                Output::Persist(_) => {}
                Output::Event(e) => {
                    if let Event::ConfirmLeader { term } = &e {
                        self.confirms.push((id.to_string(), *term));
                    }
                    self.events.push((self.now, id.to_string(), e));
                }
            }
        }
    }

    /// The next timer instant of any node.
    pub fn next_timer(&self) -> Option<u64> {
        self.nodes.values().filter_map(Node::poll_timeout).min()
    }

    /// Moves the clock to `t`, firing every timer due on the way, in time order.
    pub fn advance_to(&mut self, t: u64) {
        while let Some(next) = self.next_timer().filter(|n| *n <= t) {
            self.now = self.now.max(next);
            let due: Vec<String> = self
                .nodes
                .iter()
                .filter(|(_, n)| n.poll_timeout().is_some_and(|d| d <= self.now))
                .map(|(id, _)| id.clone())
                .collect();
            for id in due {
                let now = self.now;
                self.nodes.get_mut(&id).expect("known").handle_timeout(now);
                self.drain(&id);
            }
        }
        self.now = self.now.max(t);
    }

    /// Advances timer by timer until `cond` holds (checked after each); returns whether it did
    /// by `limit`.
    pub fn advance_until(&mut self, limit: u64, cond: impl Fn(&Manual) -> bool) -> bool {
        while !cond(self) {
            match self.next_timer().filter(|t| *t <= limit) {
                Some(t) => self.advance_to(t),
                None => {
                    self.advance_to(limit);
                    return cond(self);
                }
            }
        }
        true
    }

    /// Index of the first pending datagram `from → to` whose message satisfies `what`.
    pub fn find(&self, from: &str, to: &str, what: impl Fn(&Envelope) -> bool) -> Option<usize> {
        self.pending.iter().position(|p| p.from == from && p.to == to && what(&p.env))
    }

    /// Delivers the first pending datagram `from → to` matching `what` now; returns its envelope,
    /// or `None` when there is no such datagram. The receiver's verdict is in [`Manual::verdicts`].
    pub fn deliver(&mut self, from: &str, to: &str, what: impl Fn(&Envelope) -> bool) -> Option<Envelope> {
        let i = self.find(from, to, what)?;
        let p = self.pending.remove(i);
        let now = self.now;
        let r = self.nodes.get_mut(to).expect("known").handle_message(now, &p.from, &p.bytes);
        let d = Delivery {
            at: now,
            from: from.to_string(),
            to: to.to_string(),
            kind: p.env.message.kind(),
            term: p.env.term,
            verdict: r,
        };
        self.verdicts.push(d);
        self.drain(to);
        Some(p.env)
    }

    /// The host of `id` answers its pending `ConfirmLeader` now.
    pub fn confirm(&mut self, id: &str, granted: bool) -> bool {
        let Some(i) = self.confirms.iter().position(|(n, _)| n == id) else { return false };
        let (_, term) = self.confirms.remove(i);
        let now = self.now;
        let ok = self.nodes.get_mut(id).expect("known").confirm_leader(now, term, granted).is_ok();
        self.drain(id);
        ok
    }
}

/// Matches any message of this kind (`"pre_vote"`, `"vote"`, `"heartbeat"`, ...).
pub fn kind(k: &'static str) -> impl Fn(&Envelope) -> bool {
    move |e: &Envelope| e.message.kind() == k
}

/// Matches a granted or refused (pre-)vote reply.
pub fn reply(pre: bool, granted: bool) -> impl Fn(&Envelope) -> bool {
    move |e: &Envelope| match e.message {
        Message::PreVoteReply { granted: g } => pre && g == granted,
        Message::VoteReply { granted: g } => !pre && g == granted,
        _ => false,
    }
}
