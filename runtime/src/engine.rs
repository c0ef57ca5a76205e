//! [`Engine`]: the part of [`tenure::Node`] the run loop drives, so that the same loop runs the
//! native core and the WebAssembly component.

use tenure::{DropReason, DurableState, Error, Inspect, Node, Output, PeerDownReason, Role};

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
    /// The peer a graceful stop hands leadership to.
    fn transfer_target(&mut self) -> Option<String>;
    /// Sends an application payload to every member.
    fn broadcast(&mut self, now: u64, payload: &[u8]) -> Result<(), Error>;
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
    /// A failure that stopped the engine as a whole (a trap), if one happened. The runtime then
    /// stops with [`RuntimeError::Engine`].
    fn failure(&mut self) -> Option<String> {
        None
    }
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
    fn transfer_target(&mut self) -> Option<String> {
        Node::transfer_target(self).map(str::to_string)
    }
    fn broadcast(&mut self, now: u64, payload: &[u8]) -> Result<(), Error> {
        Node::broadcast(self, now, payload)
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
