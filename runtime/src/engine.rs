//! [`Engine`]: the part of [`tenure::Node`] the run loop drives, so that the same loop runs the
//! native core and the WebAssembly component.

use tenure::{DropReason, DurableState, Error, Event, Inspect, Node, Output, OutputRef, PeerDownReason, Role};

use crate::RuntimeError;

/// What an engine factory receives: everything needed to construct a node.
#[derive(Debug, Clone)]
pub struct EngineInit {
    /// The node configuration (validated by the runtime already; `durable` is on exactly when a
    /// state file is configured, `key` holds the key file's key).
    pub config: tenure::Config,
    /// A random seed for the node's PRNG (from the OS).
    pub seed: u64,
    /// The pair read from the state file, if there was one.
    pub restored: Option<DurableState>,
    /// The runtime clock's current time (monotonic milliseconds).
    pub now: u64,
}

/// A leader-election state machine the run loop can drive: the inputs, the polls and the queries
/// of [`tenure::Node`], with the same meaning. Implemented here for [`tenure::Node`], and in
/// `tenure-component-host` for the WebAssembly component.
///
/// Queries take `&mut self` because a component call needs its store mutably. An engine that can
/// fail as a whole (a component that traps) returns neutral values afterwards (`None`, `false`,
/// errors) and reports the failure through [`Engine::failure`]; the runtime checks it after every
/// round and stops with a [`crate::RuntimeEvent::Fatal`].
pub trait Engine: Send + 'static {
    /// A datagram from `from` (the peer id the runtime mapped its source address to, or the
    /// address itself when unknown). `Err` names why it was dropped.
    fn handle_message(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason>;
    /// The deadline from [`Engine::poll_timeout`] passed.
    fn handle_timeout(&mut self, now: u64);
    /// The next output, in order; `None` when drained.
    fn poll_output(&mut self) -> Option<Output>;
    /// The next output, in order, like [`Engine::poll_output`], but a `Send`'s destination and
    /// bytes replace the contents of `to` and `bytes` instead of arriving in a new `String` and
    /// `Vec`: the run loop's path, which keeps the two buffers across rounds. The default moves
    /// them out of [`Engine::poll_output`]; the native engine copies them from
    /// [`Node::poll_output_ref`] and so allocates nothing per send.
    fn poll_output_into(&mut self, to: &mut String, bytes: &mut Vec<u8>) -> Option<Polled> {
        Some(match self.poll_output()? {
            Output::Send { to: t, bytes: b } => {
                *to = t;
                *bytes = b;
                Polled::Send
            }
            Output::Persist(s) => Polled::Persist(s),
            Output::Event(e) => Polled::Event(e),
        })
    }
    /// When [`Engine::handle_timeout`] is due next.
    fn poll_timeout(&mut self) -> Option<u64>;
    /// Declares a peer.
    fn join(&mut self, now: u64, peer: &str) -> Result<(), Error>;
    /// Withdraws a peer.
    fn leave(&mut self, now: u64, peer: &str) -> Result<(), Error>;
    /// Reports a peer down.
    fn peer_down(&mut self, now: u64, peer: &str, reason: PeerDownReason) -> Result<(), Error>;
    /// Answers an `Event::ConfirmLeader`.
    fn confirm_leader(&mut self, now: u64, term: u64, granted: bool) -> Result<(), Error>;
    /// The application's leader work for `term` failed: roll leadership back.
    fn leader_handler_failed(&mut self, now: u64, term: u64) -> Result<(), Error>;
    /// Hands leadership to `peer`.
    fn transfer_leadership(&mut self, now: u64, peer: &str) -> Result<(), Error>;
    /// Campaign last until `until` ([`Node::hold_campaigns`]). The default does nothing: an
    /// engine without it campaigns after the core's own backoff.
    fn hold_campaigns(&mut self, now: u64, until: u64) {
        let _ = (now, until);
    }
    /// The peer a graceful stop hands leadership to.
    fn transfer_target(&mut self) -> Option<String>;
    /// Sends an application payload to every member.
    fn broadcast(&mut self, now: u64, payload: &[u8]) -> Result<(), Error>;
    /// `Node::proclaim`. An engine without proclaimed values refuses as a follower does
    /// (`not_leader`): it never has one to change.
    fn proclaim(&mut self, now: u64, value: &str) -> Result<(), Error> {
        let _ = (now, value);
        Err(Error::NotLeader)
    }
    /// `Node::leader_value`; `None` for an engine without proclaimed values.
    fn leader_value(&mut self) -> Option<String> {
        None
    }
    /// The whole election state.
    fn inspect(&mut self) -> Inspect;
    /// The role.
    fn role(&mut self) -> Role;
    /// The term.
    fn term(&mut self) -> u64;
    /// The leader known in the current term (this node's id while leading).
    fn leader(&mut self) -> Option<String>;
    /// The leadership validity deadline while leading (runtime clock, ms).
    fn lease_deadline(&mut self) -> Option<u64>;
    /// The wire version every member of the view is known to speak ([`Node::wire_version`]);
    /// `None` from an engine that does not say.
    fn wire_version(&mut self) -> Option<u8> {
        None
    }
    /// The death notices of this node's current leadership ([`Node::death_notices`]): one
    /// datagram per member known to understand them, as (peer id, bytes). Empty while not
    /// leading, and from an engine that has none (its crashes then fail over by the lease).
    fn death_notices(&mut self) -> Vec<(String, Vec<u8>)> {
        Vec::new()
    }
    /// Whether [`Engine::death_notices`] can return any: without them a watchdog is never armed.
    fn has_death_notices(&self) -> bool {
        false
    }
    /// A failure that stopped the engine as a whole (a trap), if one happened. The runtime then
    /// stops with [`RuntimeError::Engine`].
    fn failure(&mut self) -> Option<String> {
        None
    }
}

/// One output from [`Engine::poll_output_into`]: a `Send` is in the caller's buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Polled {
    /// Transmit the bytes written into `bytes` to the peer written into `to`.
    Send,
    /// Store this pair durably before sending anything after it.
    Persist(DurableState),
    /// Something happened.
    Event(Event),
}

/// The native engine factory: a [`tenure::Node`] built from the [`EngineInit`]. Pass it to
/// [`crate::spawn`] or [`crate::cli::main`].
pub fn native(init: EngineInit) -> Result<Node, RuntimeError> {
    Ok(Node::new(init.config, init.seed, init.restored, init.now)?)
}

impl Engine for Node {
    fn handle_message(&mut self, now: u64, from: &str, bytes: &[u8]) -> Result<(), DropReason> {
        Node::handle_message(self, now, from, bytes)
    }
    fn handle_timeout(&mut self, now: u64) {
        Node::handle_timeout(self, now)
    }
    fn poll_output(&mut self) -> Option<Output> {
        Node::poll_output(self)
    }
    fn wire_version(&mut self) -> Option<u8> {
        Some(Node::wire_version(self))
    }
    fn death_notices(&mut self) -> Vec<(String, Vec<u8>)> {
        Node::death_notices(self)
    }
    fn has_death_notices(&self) -> bool {
        true
    }
    fn poll_output_into(&mut self, to: &mut String, bytes: &mut Vec<u8>) -> Option<Polled> {
        Some(match Node::poll_output_ref(self)? {
            OutputRef::Send { to: t, bytes: b } => {
                to.clear();
                to.push_str(t);
                bytes.clear();
                bytes.extend_from_slice(b);
                Polled::Send
            }
            OutputRef::Persist(s) => Polled::Persist(s),
            OutputRef::Event(e) => Polled::Event(e),
        })
    }
    fn poll_timeout(&mut self) -> Option<u64> {
        Node::poll_timeout(self)
    }
    fn join(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        Node::join(self, now, peer)
    }
    fn leave(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        Node::leave(self, now, peer)
    }
    fn peer_down(&mut self, now: u64, peer: &str, reason: PeerDownReason) -> Result<(), Error> {
        Node::peer_down(self, now, peer, reason)
    }
    fn confirm_leader(&mut self, now: u64, term: u64, granted: bool) -> Result<(), Error> {
        Node::confirm_leader(self, now, term, granted)
    }
    fn leader_handler_failed(&mut self, now: u64, term: u64) -> Result<(), Error> {
        Node::leader_handler_failed(self, now, term)
    }
    fn transfer_leadership(&mut self, now: u64, peer: &str) -> Result<(), Error> {
        Node::transfer_leadership(self, now, peer)
    }
    fn hold_campaigns(&mut self, now: u64, until: u64) {
        Node::hold_campaigns(self, now, until)
    }
    fn transfer_target(&mut self) -> Option<String> {
        Node::transfer_target(self).map(str::to_string)
    }
    fn broadcast(&mut self, now: u64, payload: &[u8]) -> Result<(), Error> {
        Node::broadcast(self, now, payload)
    }
    fn proclaim(&mut self, now: u64, value: &str) -> Result<(), Error> {
        Node::proclaim(self, now, value)
    }
    fn leader_value(&mut self) -> Option<String> {
        Node::leader_value(self).map(String::from)
    }
    fn inspect(&mut self) -> Inspect {
        Node::inspect(self)
    }
    fn role(&mut self) -> Role {
        Node::role(self)
    }
    fn term(&mut self) -> u64 {
        Node::term(self)
    }
    fn leader(&mut self) -> Option<String> {
        Node::leader(self).map(str::to_string)
    }
    fn lease_deadline(&mut self) -> Option<u64> {
        Node::lease_deadline(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenure::wire::{encode, Envelope, Message};
    use tenure::Config;

    /// The run loop's path (`poll_output_into`, buffers reused) yields exactly what
    /// `poll_output` does, in order: here a persist, an event, an ack and the greeting (`Hello`)
    /// of a peer first heard from, then two acks.
    #[test]
    fn poll_output_into_matches_poll_output() {
        let config = Config::new("a", "c").bootstrap(["a", "b", "d"]).durable(true);
        let mut into = Node::new(config.clone(), 3, None, 0).unwrap();
        let mut owned = Node::new(config, 3, None, 0).unwrap();
        let hb = |sent_at| {
            let e = Envelope {
                cluster: "c".into(),
                from: "b".into(),
                term: 2,
                incarnation: 1,
                message: Message::Heartbeat { sent_at },
            };
            encode(&e, None).unwrap()
        };
        let (mut to, mut bytes) = (String::from("stale"), vec![0xff; 3]);
        let mut kinds = Vec::new();
        for t in 1..4 {
            Engine::handle_message(&mut into, t, "b", &hb(t)).unwrap();
            owned.handle_message(t, "b", &hb(t)).unwrap();
            while let Some(p) = into.poll_output_into(&mut to, &mut bytes) {
                let expected = owned.poll_output().expect("as many outputs");
                kinds.push(match (&p, expected) {
                    (Polled::Send, Output::Send { to: t, bytes: b }) => {
                        assert_eq!((&to, &bytes), (&t, &b));
                        "send"
                    }
                    (Polled::Persist(s), Output::Persist(e)) => {
                        assert_eq!(s, &e);
                        "persist"
                    }
                    (Polled::Event(a), Output::Event(b)) => {
                        assert_eq!(a, &b);
                        "event"
                    }
                    (p, e) => panic!("{p:?} where poll_output gave {e:?}"),
                });
            }
            assert!(owned.poll_output().is_none());
        }
        assert_eq!(kinds, ["persist", "event", "send", "send", "send", "send"]);
    }
}
