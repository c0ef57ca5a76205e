//! The receive step: datagrams, goodbyes and probes from peers, and the ICMP errors the socket
//! reports for datagrams this node sent.

use std::io::ErrorKind;

use tenure::PeerDownReason;

use super::Loop;
use crate::resolve::Family;
use crate::{Engine, Handler};

/// What a stopping runtime sends every peer (docs/wire.md, "Goodbyes"): one zero byte, shorter
/// than any message. From a known peer it is reported to the engine as `peer_down(refused)`: the
/// peer is no handover target until heard from again (a rolling stop must not hand leadership
/// to the node stopped a moment before), and a follower of it stops waiting for it. As
/// unauthenticated as the ICMP answer it stands in for, and as harmless: liveness only.
pub(crate) const GOODBYE: [u8; 1] = [0];
/// Datagrams handled per wake-up before timers and commands get their turn (a flood cannot
/// starve the heartbeat timer); the rest are read on the next turn.
const RECV_BATCH: usize = 256;

impl<E: Engine, H: Handler> Loop<E, H> {
    /// Reads datagrams until the socket is empty (`false`) or a batch is done (`true`: more may
    /// be waiting, and the edge-triggered poll will not say so again).
    pub(super) fn receive(&mut self) -> bool {
        for _ in 0..RECV_BATCH {
            match self.io.socket.recv_from(&mut self.io.buf) {
                Ok((n, source)) => {
                    let source = Family::source(source);
                    let now = self.now();
                    let from = match self.net.peers.id_of(source) {
                        Some(id) => id.to_string(),
                        None => {
                            self.net.peers.unknown_source(now);
                            source.to_string()
                        }
                    };
                    // A declared peer whose ghost expired is back: declare it again (its own input,
                    // drained before the datagram's).
                    if let Some(p) = self.net.peers.by_id.get_mut(&from) {
                        if p.declared && !p.in_view {
                            p.in_view = true;
                            let _ = self.engine.join(now, &from);
                            self.drain();
                        }
                    }
                    if let Some(p) = &mut self.net.prober {
                        p.heard(&from, now);
                    }
                    if n == 0 {
                        // A probe from a follower whose leader went quiet (docs/wire.md): its
                        // arrival is the answer; nothing to handle.
                        continue;
                    }
                    if self.io.buf.get(..n) == Some(&GOODBYE[..]) {
                        self.goodbye(&from, now);
                        continue;
                    }
                    let len = n.min(self.io.buf.len());
                    let result = self.engine.handle_message(now, &from, self.io.buf.get(..len).unwrap_or_default());
                    match result {
                        Ok(()) => {
                            if let Some(p) = self.net.peers.by_id.get_mut(&from) {
                                p.down_reported = false;
                                p.refused_reported = false;
                                p.heard_at = Some(now);
                            }
                        }
                        Err(reason) => self.dropped(reason, &from, source, len, now),
                    }
                    self.settle();
                    if self.stop.ended() {
                        return false;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // ICMP errors reported on the socket (a peer's port closed): not a socket failure;
                // the error queue says whose.
                Err(e) if matches!(e.kind(), ErrorKind::ConnectionRefused | ErrorKind::ConnectionReset) => {
                    self.icmp_errors();
                    if self.stop.ended() {
                        return false;
                    }
                }
                Err(e) => {
                    let now = self.now();
                    self.warn(now, "socket_error", "", || format!("receiving on the UDP socket failed: {e}"));
                    return false;
                }
            }
        }
        true
    }

    /// A known peer said it is stopping: `peer_down(refused)` (see [`GOODBYE`]).
    fn goodbye(&mut self, from: &str, now: u64) {
        let Some(p) = self.net.peers.by_id.get_mut(from) else { return };
        p.refused_reported = true;
        if self.report.log {
            log::info!(target: "tenure", "{}: peer {from} is stopping", self.report.id);
        }
        let _ = self.engine.peer_down(now, from, PeerDownReason::Refused);
        self.settle();
    }

    /// Sends [`GOODBYE`] to every peer with an address (best effort: a lost one costs what it
    /// did before, a handover to a stopped peer that its election timeout repairs).
    pub(super) fn say_goodbye(&mut self) {
        let peers = &self.net.peers;
        let dests: Vec<std::net::SocketAddr> = peers.by_id.keys().filter_map(|id| peers.dest(id)).collect();
        for addr in dests {
            let _ = self.io.socket.send_to(&GOODBYE, addr);
        }
    }

    /// Reads the queued ICMP errors and reports a refused port to the engine: for the peer the
    /// prober watches (the leader this follower listens to) every time, for any other peer once
    /// until it is heard from again (the core then hands leadership to it no more; a leader whose
    /// follower died would otherwise pass it one refusal per heartbeat).
    pub(super) fn icmp_errors(&mut self) {
        let (Some(prober), Some(refusals)) = (&self.net.prober, &mut self.net.refusals) else { return };
        let refused = refusals.refused(&self.io.socket);
        let mut watched: Vec<String> = Vec::new();
        for addr in refused {
            let Some(peer) = self.net.peers.id_of(Family::source(addr)).map(str::to_string) else { continue };
            let first =
                self.net.peers.by_id.get_mut(&peer).is_some_and(|p| !std::mem::replace(&mut p.refused_reported, true));
            if (prober.watches(&peer) || first) && !watched.contains(&peer) {
                watched.push(peer);
            }
        }
        for peer in watched {
            let now = self.now();
            if self.report.log {
                if let Some(m) = self.report.warner.note(now, "peer_refused", &peer, || {
                    format!("{peer}'s port refused a datagram: its process is gone (it stays a member)")
                }) {
                    log::info!(target: "tenure", "{}: {m}", self.report.id);
                }
            }
            let _ = self.engine.peer_down(now, &peer, PeerDownReason::Refused);
            self.settle();
        }
    }
}
