//! Failure detection from the transport: a follower whose leader went quiet sends it an empty
//! datagram, and the kernel's answer — ICMP port unreachable, read from the socket's error queue
//! (`IP_RECVERR` / `IPV6_RECVERR`) — becomes `peer_down(leader, refused)` for the core.
//!
//! When the leader's process died but its host lives (a crash, an OOM kill, a container restart),
//! this lets the followers stop waiting for an election timeout; they still wait out their lease
//! promise (`lease_duration`), so the report is about liveness only and a wrong one is harmless.
//! A silent death (SIGSTOP, a vanished host) gets no answer and keeps the election-timeout bound.

use std::net::{IpAddr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsFd, AsRawFd};

use nix::errno::Errno;
use nix::sys::socket::{recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags, SockaddrStorage};

/// Asks the kernel to queue ICMP errors for datagrams this socket sent (so that a closed port is
/// reported with the address it was sent to). Best effort: `false` when the option is refused,
/// and then failure detection is off (election timeouts only).
pub(crate) fn enable_icmp_errors<S: AsFd>(socket: &S, v6: bool) -> bool {
    let v4 = setsockopt(socket, sockopt::Ipv4RecvErr, &true).is_ok();
    match v6 {
        // A dual-stack socket: IPv4 peers (v4-mapped) report through IP_RECVERR, IPv6 peers
        // through IPV6_RECVERR.
        true => setsockopt(socket, sockopt::Ipv6RecvErr, &true).is_ok(),
        false => v4,
    }
}

/// Reads the socket's error queue until it is empty and returns the destinations whose port was
/// refused (ICMP port unreachable, or ICMPv6 port unreachable), in order. Other errors (host or
/// network unreachable) are not a refused port and are skipped.
pub(crate) fn refused_destinations<S: AsRawFd>(socket: &S) -> Vec<SocketAddr> {
    let mut out = Vec::new();
    let mut data = [0u8; 64];
    let mut cmsg = nix::cmsg_space!(libc::sock_extended_err, libc::sockaddr_in6);
    // Bounded: a queue that never empties (it cannot, but) does not hold the loop.
    for _ in 0..256 {
        let mut iov = [std::io::IoSliceMut::new(&mut data)];
        let msg =
            match recvmsg::<SockaddrStorage>(socket.as_raw_fd(), &mut iov, Some(&mut cmsg), MsgFlags::MSG_ERRQUEUE) {
                Ok(m) => m,
                Err(Errno::EINTR) => continue,
                Err(_) => break, // EAGAIN: the queue is empty.
            };
        let refused = match msg.cmsgs() {
            Ok(mut it) => it.any(|c| match c {
                ControlMessageOwned::Ipv4RecvErr(e, _) | ControlMessageOwned::Ipv6RecvErr(e, _) => {
                    e.ee_errno == libc::ECONNREFUSED as u32
                }
                _ => false,
            }),
            Err(_) => false,
        };
        if let (true, Some(addr)) = (refused, msg.address.as_ref().and_then(socket_addr)) {
            out.push(addr);
        }
    }
    out
}

fn socket_addr(s: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(a) = s.as_sockaddr_in() {
        return Some(SocketAddr::V4(SocketAddrV4::new(a.ip(), a.port())));
    }
    let a = s.as_sockaddr_in6()?;
    let ip = a.ip();
    Some(match ip.to_ipv4_mapped() {
        Some(v4) => SocketAddr::new(IpAddr::V4(v4), a.port()),
        None => SocketAddr::V6(SocketAddrV6::new(ip, a.port(), a.flowinfo(), a.scope_id())),
    })
}

/// When to probe the leader this follower listens to.
///
/// The first probe goes out 1.5 heartbeat intervals after the last datagram heard from the
/// leader (one heartbeat late, with half an interval of slack for jitter), then one every
/// heartbeat interval while it stays silent. Each probe is an empty datagram, which a tenure
/// runtime ignores (docs/wire.md), so a probe that reaches a live leader costs nothing.
#[derive(Debug, Default)]
pub(crate) struct Prober {
    /// The leader watched and when it was last heard from (or started being watched).
    watched: Option<(String, u64)>,
    /// When the last probe went out.
    probed_at: Option<u64>,
}

impl Prober {
    /// The leader is now `leader` (`None`: no leader, or this node leads).
    pub(crate) fn watch(&mut self, leader: Option<&str>, now: u64) {
        match (leader, &self.watched) {
            (Some(l), Some((w, _))) if l == w => {}
            (Some(l), _) => {
                self.watched = Some((l.to_string(), now));
                self.probed_at = None;
            }
            (None, _) => {
                self.watched = None;
                self.probed_at = None;
            }
        }
    }

    /// Whether `peer` is the leader watched (the one peer whose refused port matters).
    pub(crate) fn watches(&self, peer: &str) -> bool {
        self.watched.as_ref().is_some_and(|(w, _)| w == peer)
    }

    /// A datagram came from `peer`.
    pub(crate) fn heard(&mut self, peer: &str, now: u64) {
        if let Some((w, at)) = &mut self.watched {
            if w == peer {
                *at = now;
            }
        }
    }

    /// When the next probe is due, given the heartbeat interval.
    pub(crate) fn due(&self, heartbeat_interval: u64) -> Option<u64> {
        let (_, heard) = self.watched.as_ref()?;
        Some(match self.probed_at {
            Some(p) if p >= *heard => p.saturating_add(heartbeat_interval),
            _ => heard.saturating_add(heartbeat_interval.saturating_mul(3) / 2),
        })
    }

    /// The peer to probe now, if one is due (and notes the probe).
    pub(crate) fn take_due(&mut self, now: u64, heartbeat_interval: u64) -> Option<String> {
        if self.due(heartbeat_interval).is_some_and(|d| d <= now) {
            self.probed_at = Some(now);
            return self.watched.as_ref().map(|(w, _)| w.clone());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_leader_is_probed_one_and_a_half_intervals_after_it_was_last_heard_then_every_interval() {
        let mut p = Prober::default();
        assert_eq!(p.due(50), None, "no leader, no probe");
        assert!(!p.watches("L"));
        p.watch(Some("L"), 1_000);
        assert!(p.watches("L") && !p.watches("other"));
        assert_eq!(p.due(50), Some(1_075));
        p.heard("L", 1_050);
        p.heard("other", 1_060);
        assert_eq!(p.take_due(1_100, 50), None);
        assert_eq!(p.take_due(1_125, 50).as_deref(), Some("L"));
        assert_eq!(p.due(50), Some(1_175), "then every interval");
        p.heard("L", 1_130);
        assert_eq!(p.due(50), Some(1_205), "heard again: back to 1.5 intervals");
        p.watch(None, 1_200);
        assert_eq!(p.due(50), None);
    }
}
