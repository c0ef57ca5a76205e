//! Peer addresses: the table from peer ids to socket addresses (and back), and the resolver
//! thread that looks DNS names up off the loop thread.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{mpsc, Arc};

use crate::config::{parse_address, Address, Host};
use crate::handle::Command;

/// First retry after a failed lookup; doubles up to [`RETRY_MAX_MS`].
const RETRY_MIN_MS: u64 = 100;
const RETRY_MAX_MS: u64 = 5_000;
/// A datagram from an unknown address re-resolves every name at most this often.
pub(crate) const UNKNOWN_SOURCE_RERESOLVE_MS: u64 = 1_000;

/// Looks names up on its own thread; answers arrive as [`Command::Resolved`] on the loop's
/// command channel (and wake the loop).
pub(crate) struct Resolver {
    tx: mpsc::Sender<(String, u16)>,
}

impl Resolver {
    pub(crate) fn start(commands: mpsc::Sender<Command>, waker: Arc<mio::Waker>) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<(String, u16)>();
        std::thread::Builder::new().name("tenure-resolver".into()).spawn(move || {
            // Ends when the loop drops its `Resolver` (the channel closes).
            for (name, port) in rx {
                let result = (name.as_str(), port)
                    .to_socket_addrs()
                    .map(|a| a.collect::<Vec<_>>())
                    .map_err(|e| e.to_string())
                    .and_then(|a| if a.is_empty() { Err("no address".to_string()) } else { Ok(a) });
                if commands.send(Command::Resolved { name, result }).is_err() {
                    break;
                }
                let _ = waker.wake();
            }
        })?;
        Ok(Resolver { tx })
    }

    fn request(&self, name: &str, port: u16) {
        let _ = self.tx.send((name.to_string(), port));
    }
}

/// How long `same_node` waits for DNS answers at start; names not answered by then are checked
/// by nobody (the resolver thread retries them as usual).
const START_LOOKUP_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Refuses one node under two spellings among `id` and `peers` (after resolving DNS names, in
/// parallel, for at most [`START_LOOKUP_LIMIT`]), and returns the peers listed more than once
/// under the same spelling (deduplicated by the core; the caller warns). A peer spelled exactly as
/// `id` is this node listed among its peers, which every node's shared list does: allowed.
pub(crate) fn same_node(id: &str, peers: &[String]) -> Result<Vec<String>, crate::RuntimeError> {
    let mut seen: Vec<&str> = vec![id];
    let mut repeated = Vec::new();
    for p in peers {
        if p == id {
            continue;
        }
        if seen.contains(&p.as_str()) {
            if !repeated.contains(p) {
                repeated.push(p.clone());
            }
            continue;
        }
        seen.push(p);
    }
    let (tx, rx) = mpsc::channel();
    let mut addrs: Vec<Vec<SocketAddr>> = Vec::with_capacity(seen.len());
    let mut pending = 0;
    for (i, spelling) in seen.iter().enumerate() {
        let Ok(a) = parse_address(spelling) else {
            addrs.push(Vec::new());
            continue;
        };
        match (&a.host, a.socket_addr()) {
            (_, Some(sa)) => addrs.push(vec![Family::source(sa)]),
            (Host::Name(name), None) => {
                addrs.push(Vec::new());
                pending += 1;
                let (tx, name, port) = (tx.clone(), name.clone(), a.port);
                // Detached: a lookup that outlives the limit ends on its own.
                let _ = std::thread::Builder::new().name("tenure-resolve-start".into()).spawn(move || {
                    let found: Vec<SocketAddr> = (name.as_str(), port)
                        .to_socket_addrs()
                        .map(|a| a.map(Family::source).collect())
                        .unwrap_or_default();
                    let _ = tx.send((i, found));
                });
            }
            (Host::Ip(_), None) => addrs.push(Vec::new()),
        }
    }
    drop(tx);
    let deadline = std::time::Instant::now() + START_LOOKUP_LIMIT;
    while pending > 0 {
        match rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
            Ok((i, found)) => {
                if let Some(slot) = addrs.get_mut(i) {
                    *slot = found;
                }
                pending -= 1;
            }
            Err(_) => break,
        }
    }
    for (i, a) in addrs.iter().enumerate() {
        for (j, b) in addrs.iter().enumerate().skip(i + 1) {
            if let Some(shared) = a.iter().find(|x| b.contains(x)) {
                return Err(crate::RuntimeError::SameNode {
                    first: seen.get(i).map(|s| s.to_string()).unwrap_or_default(),
                    second: seen.get(j).map(|s| s.to_string()).unwrap_or_default(),
                    addr: shared.to_string(),
                    is_self: i == 0,
                });
            }
        }
    }
    Ok(repeated)
}

/// One peer the runtime sends to.
#[derive(Debug)]
pub(crate) struct Peer {
    pub(crate) address: Address,
    /// Where datagrams go (`None`: not resolved yet, or the last lookup failed).
    pub(crate) addr: Option<SocketAddr>,
    /// Every address the name resolved to (datagrams from any of them are this peer's).
    pub(crate) all: Vec<SocketAddr>,
    /// Declared by the application (bootstrap or `join`), as opposed to met on the wire.
    pub(crate) declared: bool,
    /// In the node's view (tracked from `PeerJoined` / `PeerLeft`).
    pub(crate) in_view: bool,
    /// `peer_down(no_connection)` reported and the peer not heard from since.
    pub(crate) down_reported: bool,
    /// `peer_down(refused)` reported (its port refused, or it said goodbye) and the peer not
    /// heard from since.
    pub(crate) refused_reported: bool,
    /// When the engine last accepted a message from it (runtime clock), whatever the engine: the
    /// core's own `peer_heard_at` is not in the component's inspect record.
    pub(crate) heard_at: Option<u64>,
    /// A lookup is in flight.
    pub(crate) resolving: bool,
    /// Consecutive failed lookups (0: never failed, or succeeded last).
    pub(crate) failures: u32,
    /// The last lookup error.
    pub(crate) last_error: Option<String>,
    /// When to look the name up next (names only).
    pub(crate) next_lookup: Option<u64>,
}

/// Whether the socket is IPv6 (then IPv4 destinations go as v4-mapped addresses).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Family {
    pub(crate) v6: bool,
}

impl Family {
    /// The address to pass to `send_to` on this socket, if this socket can reach `a`.
    pub(crate) fn dest(self, a: SocketAddr) -> Option<SocketAddr> {
        match (self.v6, a.ip()) {
            (true, IpAddr::V4(ip)) => Some(SocketAddr::new(IpAddr::V6(ip.to_ipv6_mapped()), a.port())),
            (false, IpAddr::V6(ip)) => ip.to_ipv4_mapped().map(|v4| SocketAddr::new(IpAddr::V4(v4), a.port())),
            _ => Some(a),
        }
    }
    /// A received source address, v4-mapped addresses shown as IPv4.
    pub(crate) fn source(a: SocketAddr) -> SocketAddr {
        match a.ip() {
            IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
                Some(v4) => SocketAddr::new(IpAddr::V4(v4), a.port()),
                None => a,
            },
            IpAddr::V4(_) => a,
        }
    }
}

/// The peers' addresses.
pub(crate) struct Peers {
    pub(crate) by_id: HashMap<String, Peer>,
    by_addr: HashMap<SocketAddr, String>,
    family: Family,
    resolver: Resolver,
    interval_ms: u64,
    last_unknown_reresolve: Option<u64>,
}

/// What a lookup answer changed.
pub(crate) enum Update {
    /// Nothing worth acting on.
    None,
    /// The peer now has an address (new or changed): `rejoin` when the application declared it and
    /// it is no longer in the view.
    Resolved { rejoin: bool },
    /// The lookup failed: the error.
    Failed { error: String },
}

impl Peers {
    pub(crate) fn new(family: Family, resolver: Resolver, interval_ms: u64) -> Self {
        Peers {
            by_id: HashMap::new(),
            by_addr: HashMap::new(),
            family,
            resolver,
            interval_ms,
            last_unknown_reresolve: None,
        }
    }

    /// Adds a peer (declared by the application, or met on the wire); starts resolving a name.
    /// `false` when `id` is not a `HOST:PORT`.
    pub(crate) fn add(&mut self, id: &str, declared: bool, now: u64) -> bool {
        if let Some(p) = self.by_id.get_mut(id) {
            p.declared |= declared;
            return true;
        }
        let Ok(address) = parse_address(id) else { return false };
        let mut peer = Peer {
            addr: None,
            all: Vec::new(),
            declared,
            in_view: false,
            down_reported: false,
            refused_reported: false,
            heard_at: None,
            resolving: false,
            failures: 0,
            last_error: None,
            next_lookup: None,
            address,
        };
        match peer.address.socket_addr() {
            Some(a) => {
                peer.addr = Some(a);
                peer.all = vec![a];
                self.by_addr.insert(a, id.to_string());
            }
            None => peer.next_lookup = Some(now),
        }
        self.by_id.insert(id.to_string(), peer);
        self.lookup_due(now);
        true
    }

    pub(crate) fn remove(&mut self, id: &str) {
        if let Some(p) = self.by_id.remove(id) {
            for a in p.all {
                if self.by_addr.get(&a).is_some_and(|x| x == id) {
                    self.by_addr.remove(&a);
                }
            }
        }
    }

    /// The peer id a datagram from `source` belongs to.
    pub(crate) fn id_of(&self, source: SocketAddr) -> Option<&str> {
        self.by_addr.get(&source).map(String::as_str)
    }

    /// Where to send to `id` on this socket.
    pub(crate) fn dest(&self, id: &str) -> Option<SocketAddr> {
        self.by_id.get(id).and_then(|p| p.addr).and_then(|a| self.family.dest(a))
    }

    /// Whether any peer is known by a DNS name.
    fn has_names(&self) -> bool {
        self.by_id.values().any(|p| matches!(p.address.host, Host::Name(_)))
    }

    /// Looks `id`'s name up again soon (after a send failure).
    pub(crate) fn reresolve(&mut self, id: &str, now: u64) {
        if let Some(p) = self.by_id.get_mut(id) {
            if matches!(p.address.host, Host::Name(_)) && !p.resolving {
                p.next_lookup = Some(now);
            }
        }
        self.lookup_due(now);
    }

    /// A datagram came from an address no peer resolves to: a peer may have a new address.
    pub(crate) fn unknown_source(&mut self, now: u64) {
        if !self.has_names() {
            return;
        }
        if self.last_unknown_reresolve.is_some_and(|t| now.saturating_sub(t) < UNKNOWN_SOURCE_RERESOLVE_MS) {
            return;
        }
        self.last_unknown_reresolve = Some(now);
        for p in self.by_id.values_mut() {
            if matches!(p.address.host, Host::Name(_)) && !p.resolving {
                p.next_lookup = Some(now);
            }
        }
        self.lookup_due(now);
    }

    /// Sends the lookups that are due to the resolver.
    pub(crate) fn lookup_due(&mut self, now: u64) {
        for p in self.by_id.values_mut() {
            if let (Host::Name(name), Some(at)) = (&p.address.host, p.next_lookup) {
                if at <= now && !p.resolving {
                    p.resolving = true;
                    p.next_lookup = None;
                    self.resolver.request(name, p.address.port);
                }
            }
        }
    }

    /// The earliest lookup due.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        self.by_id.values().filter(|p| !p.resolving).filter_map(|p| p.next_lookup).min()
    }

    /// A lookup answer for `name` (every peer with that host name is updated; returns the updates
    /// by peer id).
    pub(crate) fn resolved(
        &mut self,
        name: &str,
        result: Result<Vec<SocketAddr>, String>,
        now: u64,
    ) -> Vec<(String, Update)> {
        let mut out = Vec::new();
        let ids: Vec<String> = self
            .by_id
            .iter()
            .filter(|(_, p)| matches!(&p.address.host, Host::Name(n) if n == name))
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            let Some(p) = self.by_id.get_mut(&id) else { continue };
            p.resolving = false;
            match &result {
                Ok(addrs) => {
                    let addrs: Vec<SocketAddr> =
                        addrs.iter().map(|a| SocketAddr::new(a.ip(), p.address.port)).map(Family::source).collect();
                    // Prefer an address of the socket's own family.
                    let family = self.family;
                    let pick = addrs
                        .iter()
                        .copied()
                        .find(|a| a.is_ipv6() == family.v6)
                        .or_else(|| addrs.iter().copied().find(|a| family.dest(*a).is_some()));
                    let changed = pick != p.addr || p.failures > 0;
                    for old in std::mem::take(&mut p.all) {
                        if self.by_addr.get(&old).is_some_and(|x| *x == id) {
                            self.by_addr.remove(&old);
                        }
                    }
                    for a in &addrs {
                        self.by_addr.insert(*a, id.clone());
                    }
                    p.all = addrs;
                    p.addr = pick;
                    p.failures = 0;
                    p.last_error = None;
                    p.next_lookup = Some(now.saturating_add(self.interval_ms));
                    if changed {
                        p.down_reported = false;
                        out.push((id.clone(), Update::Resolved { rejoin: p.declared && !p.in_view }));
                    } else {
                        out.push((id.clone(), Update::None));
                    }
                }
                Err(e) => {
                    p.failures = p.failures.saturating_add(1);
                    let backoff = RETRY_MIN_MS.saturating_mul(1 << (p.failures - 1).min(10)).min(RETRY_MAX_MS);
                    p.next_lookup = Some(now.saturating_add(backoff));
                    p.last_error = Some(e.clone());
                    // Keep the last good address: a DNS outage does not make a live peer unreachable.
                    out.push((id.clone(), Update::Failed { error: e.clone() }));
                }
            }
        }
        out
    }
}
