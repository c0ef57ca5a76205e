//! macOS and Windows: the probe leaves from a UDP socket of its own, connected to the leader, and
//! the ICMP port unreachable it draws is that socket's error on its next receive or send
//! (`ECONNREFUSED` on macOS, `WSAECONNRESET` on Windows; both read as a refused or reset
//! connection). The node's own socket is unconnected: macOS reports nothing on it, and Windows
//! reports a reset without saying which destination refused, so neither names the peer.
//!
//! The probe therefore comes from another port than the node's: the leader counts it as a datagram
//! from an unknown source, and ignores it as it ignores every empty datagram (docs/wire.md).

use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use mio::net::UdpSocket;
use mio::{Interest, Registry};

use super::PROBE;

/// How many pending errors or stray datagrams one read of the probe socket takes at most.
const READS: usize = 16;

/// The probe socket and the refusals it reported.
#[derive(Debug, Default)]
pub(crate) struct Refusals {
    /// The destination as the run loop names it, and the socket connected to it.
    probe: Option<(SocketAddr, UdpSocket)>,
    refused: Vec<SocketAddr>,
    /// The probe socket reported a refusal: the next probe goes out on a new one, so that an
    /// error an OS keeps reporting (Wine's `SO_ERROR` is not cleared by reading it) is never
    /// taken for the next probe's answer.
    spent: bool,
}

impl Refusals {
    /// Nothing to arm on the node's socket: the probe socket is made at the first probe.
    pub(crate) fn enable(_socket: &std::net::UdpSocket, _v6: bool) -> Option<Refusals> {
        Some(Refusals::default())
    }

    /// Sends the probe to `dest` on the socket connected to it (made, and registered with the
    /// run loop's poll as [`PROBE`], when `dest` is new); `false` when that socket cannot be
    /// made, and the probe leaves from the node's socket (it then detects nothing, and costs
    /// nothing).
    pub(crate) fn probe_alone(&mut self, registry: &Registry, dest: SocketAddr) -> bool {
        self.read();
        if self.spent || self.probe.as_ref().is_none_or(|(d, _)| *d != dest) {
            if let Some((_, mut old)) = self.probe.take() {
                let _ = registry.deregister(&mut old);
            }
            self.spent = false;
            match connect(registry, dest) {
                Ok(socket) => self.probe = Some((dest, socket)),
                Err(_) => return false,
            }
        }
        let Some((dest, socket)) = &self.probe else { return false };
        match socket.send(&[]) {
            // The refusal of the previous probe, reported on this send (which did not go out).
            Err(e) if refusal(e.kind()) => {
                if !self.refused.contains(dest) {
                    self.refused.push(*dest);
                }
                self.spent = true;
            }
            // Lost as any datagram may be.
            Ok(_) | Err(_) => {}
        }
        true
    }

    /// The destinations refused since the last call (the probe socket's pending errors read).
    pub(crate) fn refused(&mut self, _socket: &UdpSocket) -> Vec<SocketAddr> {
        self.read();
        std::mem::take(&mut self.refused)
    }

    /// Reads the probe socket's pending error (`SO_ERROR`: where Wine reports it, its non-blocking
    /// receive says only "would block") and receives until it would block. A spent socket's
    /// refusal was reported already.
    fn read(&mut self) {
        let Some((dest, socket)) = self.probe.as_ref().filter(|_| !self.spent) else { return };
        let mut refused = matches!(socket.take_error(), Ok(Some(e)) if refusal(e.kind()));
        let mut buf = [0u8; 1];
        for _ in 0..READS {
            match socket.recv(&mut buf) {
                // A stray datagram (nothing answers a probe): dropped.
                Ok(_) => {}
                Err(e) if refusal(e.kind()) => refused = true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        if refused {
            if !self.refused.contains(dest) {
                self.refused.push(*dest);
            }
            self.spent = true;
        }
    }
}

/// A refused port as the connected socket reports it: `ECONNREFUSED` (macOS) or `WSAECONNRESET`
/// (Windows).
fn refusal(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::ConnectionRefused | ErrorKind::ConnectionReset)
}

/// A non-blocking socket of `dest`'s family on an ephemeral port, connected to `dest`, registered
/// for its errors. A v4-mapped destination (the node's socket is dual-stack) is connected to as
/// IPv4: Windows makes IPv6 sockets IPv6-only by default.
fn connect(registry: &Registry, dest: SocketAddr) -> std::io::Result<UdpSocket> {
    let to = SocketAddr::new(dest.ip().to_canonical(), dest.port());
    let any = match to.ip() {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    let mut socket = UdpSocket::bind(SocketAddr::new(any, 0))?;
    socket.connect(to)?;
    registry.register(&mut socket, PROBE, Interest::READABLE)?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mechanism on the host it is compiled for: a probe to a closed port is reported
    /// refused, a probe to an open one is not.
    #[test]
    fn a_closed_port_is_reported_refused_and_an_open_one_is_not() {
        let poll = mio::Poll::new().unwrap();
        let node = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let mio_node = UdpSocket::from_std(node.try_clone().unwrap());
        let mut r = Refusals::enable(&node, false).unwrap();
        let open = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let open_addr = open.local_addr().unwrap();
        assert!(r.probe_alone(poll.registry(), open_addr));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(r.refused(&mio_node), vec![]);
        let closed_addr = {
            let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            s.local_addr().unwrap()
        };
        assert!(r.probe_alone(poll.registry(), closed_addr));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(r.refused(&mio_node), vec![closed_addr]);
        assert_eq!(r.refused(&mio_node), vec![], "reported once");
        // The leader is back on the same port: its next probe is not refused.
        let back = std::net::UdpSocket::bind(closed_addr).unwrap();
        assert!(r.probe_alone(poll.registry(), closed_addr));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(r.refused(&mio_node), vec![], "a new probe socket, no stale error");
        drop(back);
    }
}
