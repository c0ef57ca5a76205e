//! Linux: ICMP errors queued on the node's own socket (`IP_RECVERR` / `IPV6_RECVERR`), read with
//! `recvmsg(MSG_ERRQUEUE)` with the address each refused datagram was sent to.

use std::net::{IpAddr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsFd, AsRawFd};

use nix::errno::Errno;
use nix::sys::socket::{recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags, SockaddrStorage};

/// Refusals read from the node socket's error queue.
#[derive(Debug)]
pub(crate) struct Refusals;

impl Refusals {
    /// Asks the kernel to queue ICMP errors for datagrams the node's socket sent; `None` when the
    /// option is refused.
    pub(crate) fn enable(socket: &std::net::UdpSocket, v6: bool) -> Option<Refusals> {
        enable_icmp_errors(socket, v6).then_some(Refusals)
    }

    /// The probe leaves from the node's socket (its error queue names the destination).
    pub(crate) fn probe_alone(&mut self, _registry: &mio::Registry, _dest: SocketAddr) -> bool {
        false
    }

    /// The refused destinations queued on the node's socket.
    pub(crate) fn refused(&mut self, socket: &mio::net::UdpSocket) -> Vec<SocketAddr> {
        refused_destinations(socket)
    }
}

/// Asks the kernel to queue ICMP errors for datagrams this socket sent (so that a closed port is
/// reported with the address it was sent to). Best effort: `false` when the option is refused,
/// and then failure detection is off (election timeouts only).
fn enable_icmp_errors<S: AsFd>(socket: &S, v6: bool) -> bool {
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
fn refused_destinations<S: AsRawFd>(socket: &S) -> Vec<SocketAddr> {
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
