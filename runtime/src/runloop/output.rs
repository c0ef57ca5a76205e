//! The drain after every input: the engine's outputs in order (persists, sends, events), and
//! the explanation of dropped datagrams.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;

use tenure::{DropReason, Event};

use super::Loop;
use crate::config::Host;
use crate::warn::explain_drop;
use crate::{Confirm, Engine, Handler, Polled, RuntimeEvent};

impl<E: Engine, H: Handler> Loop<E, H> {
    pub(super) fn drain(&mut self) {
        // Taken out for the drain (`send` needs the whole loop) and put back with their capacity.
        let (mut to, mut bytes) = (std::mem::take(&mut self.io.out_to), std::mem::take(&mut self.io.out_bytes));
        while !self.stop.failed() {
            let Some(output) = self.engine.poll_output_into(&mut to, &mut bytes) else { break };
            match output {
                Polled::Persist(s) => self.durable.pending = Some(s),
                Polled::Send => {
                    if self.flush_persist() {
                        let now = self.now();
                        if !self.hold_transfer(&to, &bytes, now) {
                            self.send(&to, &bytes);
                        }
                    }
                }
                Polled::Event(e) => {
                    if self.flush_persist() {
                        self.event(e);
                    }
                }
            }
        }
        (self.io.out_to, self.io.out_bytes) = (to, bytes);
        self.flush_persist();
    }

    /// Writes a pending `Persist`; `false` (and fatal) when it cannot be made durable, after which
    /// nothing else may leave.
    pub(super) fn flush_persist(&mut self) -> bool {
        if self.stop.failed() {
            return false;
        }
        let Some(s) = self.durable.pending.take() else { return true };
        let Some(file) = &mut self.durable.file else { return true };
        match file.store(&s) {
            Ok(()) => true,
            Err(e) => {
                self.fatal(e);
                false
            }
        }
    }

    pub(super) fn send(&mut self, to: &str, bytes: &[u8]) {
        let now = self.now();
        if !self.net.peers.by_id.contains_key(to) && !self.net.peers.add(to, false, now) {
            self.send_failed(to, "its id is not a HOST:PORT the runtime can send to".into(), now);
            return;
        }
        match self.net.peers.dest(to) {
            Some(addr) => match self.io.socket.send_to(bytes, addr) {
                Ok(_) => {}
                // An ICMP error of an earlier datagram, reported on this send (which did not go
                // out): read whose, then send again.
                Err(e) if e.kind() == ErrorKind::ConnectionRefused && self.net.prober.is_some() => {
                    self.icmp_errors();
                    match self.io.socket.send_to(bytes, addr) {
                        Ok(_) => {}
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(e) => self.send_failed(to, format!("sending to {addr} failed: {e}"), now),
                    }
                }
                // A full socket buffer: the datagram is lost, as UDP may lose any.
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => self.send_failed(to, format!("sending to {addr} failed: {e}"), now),
            },
            None => {
                let why = match self.net.peers.by_id.get(to) {
                    // First lookup still in flight: not a failure yet.
                    Some(p) if p.failures == 0 && p.addr.is_none() && matches!(p.address.host, Host::Name(_)) => {
                        return;
                    }
                    Some(p) => match &p.last_error {
                        Some(e) => format!("its name does not resolve ({e})"),
                        None => "no address of this socket's IP family".to_string(),
                    },
                    None => "unknown peer".to_string(),
                };
                self.send_failed(to, why, now);
            }
        }
    }

    /// Policy: a send failure is explained once (until the peer is heard from again) and the
    /// peer's name is re-resolved. It is NOT reported as `peer_down(no_connection)`: a local
    /// routing or permission error (a firewall's reject rule, a prohibit route) would then remove
    /// every peer across a partition after `ghost_ttl` and lower both sides' quorums, which the
    /// network-namespace test showed electing two leaders. Only the application removes members.
    pub(super) fn send_failed(&mut self, to: &str, why: String, now: u64) {
        let first = match self.net.peers.by_id.get_mut(to) {
            Some(p) if !p.down_reported => {
                p.down_reported = true;
                true
            }
            Some(_) => false,
            None => true,
        };
        if first {
            self.warn(now, "peer_unreachable", to, || {
                format!(
                    "cannot send to peer {to}: {why}; it stays in the view (the quorum does not change), retrying and re-resolving"
                )
            });
        }
        self.net.peers.reresolve(to, now);
    }

    pub(super) fn event(&mut self, e: Event) {
        match e {
            Event::BecameLeader { term } => {
                // Delivered once the lease holds (at once when it already does).
                self.lead.leader_pending = Some(term);
                // The handler sees the handle's snapshot agree with the event.
                self.publish();
                let now = self.now();
                self.deliver_leadership(now);
            }
            Event::BecameFollower { term, leader } => {
                if self.report.log {
                    log::info!(target: "tenure", "{}: follower in term {term} (leader: {})", self.report.id, leader.as_deref().unwrap_or("none"));
                }
                self.lead.failures.leadership_ended();
                self.lead.leader_pending = None;
                self.publish();
                // Fired again when the leader's value changes (news of the leader): the line
                // carries the value known now.
                let value = self.engine.leader_value();
                self.emit(RuntimeEvent::Follower { term, leader, value });
            }
            Event::PeerJoined { peer } => {
                let now = self.now();
                self.net.peers.add(&peer, false, now);
                if let Some(p) = self.net.peers.by_id.get_mut(&peer) {
                    p.in_view = true;
                }
                self.emit(RuntimeEvent::PeerJoined { peer });
            }
            Event::PeerLeft { peer } => {
                let keep = match self.net.peers.by_id.get_mut(&peer) {
                    Some(p) => {
                        p.in_view = false;
                        p.declared
                    }
                    None => true,
                };
                if !keep {
                    self.net.peers.remove(&peer);
                }
                self.emit(RuntimeEvent::PeerLeft { peer });
            }
            Event::Message { from, payload } => self.emit(RuntimeEvent::Message { from, payload }),
            Event::ConfirmLeader { term } => {
                let now = self.now();
                let answer = if self.stop.stopping() {
                    Confirm::Deny
                } else {
                    let handler = &mut self.handler;
                    match std::panic::catch_unwind(AssertUnwindSafe(|| handler.confirm_leader(term))) {
                        Ok(a) => a,
                        Err(p) => {
                            self.handler_panicked(p);
                            return;
                        }
                    }
                };
                match answer {
                    Confirm::Grant => {
                        let _ = self.engine.confirm_leader(now, term, true);
                    }
                    Confirm::Deny => {
                        let _ = self.engine.confirm_leader(now, term, false);
                    }
                    Confirm::Defer => {
                        self.lead.confirm_pending = Some((term, now.saturating_add(self.lead.confirm_timeout)))
                    }
                }
            }
        }
    }

    /// Counts and explains a dropped datagram (`len` bytes of the receive buffer).
    pub(super) fn dropped(&mut self, reason: DropReason, from: &str, source: SocketAddr, len: usize, now: u64) {
        self.shared.counters.dropped(reason);
        let code = format!("dropped_{}", reason.as_str());
        let id = self.report.id.clone();
        // The id the sender claimed: the core authenticated the datagram before it compared the
        // sender, so it decodes with this node's key. (Cold: a misconfigured sender only.)
        let claimed = match reason {
            DropReason::SenderMismatch => {
                let auth = self.report.key.as_deref().map(|key| tenure::wire::Auth { key, receiver: &id });
                tenure::wire::decode(self.io.buf.get(..len).unwrap_or_default(), auth).ok().map(|e| e.from)
            }
            _ => None,
        };
        self.warn(now, &code, "", || explain_drop(reason, from, source, &id, claimed.as_deref()));
    }
}
