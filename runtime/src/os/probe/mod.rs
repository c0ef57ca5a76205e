//! The refused-port probe's OS half (the when is `crate::probe::Prober`'s): how a follower
//! learns that the port of the leader it probed is closed.
//!
//! One interface, [`Refusals`]:
//!
//! - `Refusals::enable(&node_socket, v6) -> Option<Refusals>`: arms the node's socket (or
//!   prepares a socket of its own); `None` when the OS refuses, and failure detection is off
//!   (election timeouts only);
//! - `refusals.probe_alone(&registry, dest) -> bool`: sends the probe to `dest` on a socket of its
//!   own and says so (`true`), or leaves it to the node's socket (`false`: the run loop sends the
//!   empty datagram as any other);
//! - `refusals.refused(&node_socket) -> Vec<SocketAddr>`: the destinations whose port refused a
//!   datagram since the last call, read when the node's socket or the probe's ([`PROBE`]) reports
//!   an error.
//!
//! Linux reports an ICMP port unreachable on an unconnected socket, with the address it was sent
//! to, in the socket's error queue: the probe leaves from the node's own address. macOS reports it
//! only on a connected socket, and Windows on an unconnected one without the address; both report
//! it on a connected socket as the error of its next receive or send, so the probe leaves from a
//! socket connected to the leader.

use mio::Token;

/// The connected probe socket's token in the run loop's poll (the platforms that use one).
pub(crate) const PROBE: Token = Token(2);

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::Refusals;

// Compiled into Linux's tests too: a connected socket reports a refusal there as well, so the
// mechanism of macOS and Windows is tested on every host.
#[cfg(any(not(target_os = "linux"), test))]
mod connected;
#[cfg(not(target_os = "linux"))]
pub(crate) use connected::Refusals;
