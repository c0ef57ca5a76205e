//! [`RuntimeConfig`] and the parsing of `HOST:PORT` ids, peers and bind addresses.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{AddressProblem, RuntimeError};

/// Default period after which a peer's DNS name is resolved again (a pod that came back under a
/// new IP is found at the latest then; a send failure or a datagram from an unknown address
/// re-resolves sooner).
pub const DEFAULT_RESOLVE_INTERVAL: Duration = Duration::from_secs(10);

/// Everything [`crate::spawn`] needs: the node's configuration plus what the runtime adds.
///
/// ```
/// use tenure_runtime::RuntimeConfig;
/// let node = tenure::Config::new("127.0.0.1:7001", "demo").bootstrap(["127.0.0.1:7002", "127.0.0.1:7003"]);
/// let config = RuntimeConfig::new(node).state_file("/var/lib/tenure/7001.json");
/// assert_eq!(config.node.id, "127.0.0.1:7001");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RuntimeConfig {
    /// The node: `id` is the advertised `HOST:PORT` (an IP or a DNS name), `bootstrap` the peers
    /// (`HOST:PORT` each). `durable` must stay off unless `state_file` is set (the runtime turns it
    /// on when it is); `key` may be set directly or through `key_file`.
    pub node: tenure::Config,
    /// The local address to bind: `IP` (the id's port) or `IP:PORT`. Default: the id's address
    /// when the id is an IP; every interface (`[::]`, dual-stack, or `0.0.0.0` where IPv6 is off)
    /// on the id's port when the id is a DNS name.
    pub bind: Option<String>,
    /// Where term and vote are made durable (JSON, see the crate docs). Locked for the runtime's
    /// lifetime; written at start so that an unwritable path fails here, not at the first vote.
    pub state_file: Option<PathBuf>,
    /// A file holding the cluster key (trailing whitespace trimmed). Exclusive with `node.key`.
    pub key_file: Option<PathBuf>,
    /// How long a [`crate::Confirm::Defer`]red confirm-leader may stay unanswered before the
    /// runtime denies it. Default: the effective `election_timeout_min`.
    pub confirm_timeout: Option<Duration>,
    /// How long a graceful stop waits for another node to lead after handing leadership over.
    /// Default: the effective `election_timeout_max`.
    pub handover_timeout: Option<Duration>,
    /// How often resolved DNS names are resolved again. Default [`DEFAULT_RESOLVE_INTERVAL`].
    pub resolve_interval: Duration,
    /// What the runtime does when the application's leader-only work keeps failing. Default
    /// [`crate::FailurePolicy::default`].
    pub failure_policy: crate::FailurePolicy,
    /// Log through the `log` crate (target `tenure`): role changes at info, warnings at warn.
    /// Default on. Every warning is also delivered as [`crate::RuntimeEvent::Warning`].
    pub log: bool,
    /// Serve the HTTP sidecar (`/leader`, `/healthz`, `/readyz`, `/metrics`; see `docs/http.md`)
    /// on this `IP:PORT` (`[IPv6]:PORT`; port 0 picks a free port, see
    /// [`crate::Handle::http_addr`]). Needs the `http` cargo feature (on by default).
    pub http: Option<String>,
    /// When the sidecar's `/readyz` answers 200. Default [`ReadyWhen::Node`].
    pub ready_when: ReadyWhen,
    /// Probe a quiet leader and report its refused port as `peer_down(refused)` (see the crate
    /// docs, "A dead leader's refused port"). Default on; off only to measure or compare.
    pub failure_detection: bool,
    /// While this node leads, publish its leadership's death notices (with the peers' addresses)
    /// for a watchdog process that sends them when this process dies (see `docs/command.md`,
    /// "The watchdog"). The command line turns it on and runs the watchdog; a library host that
    /// runs none leaves it off (the default), and its crashes fail over by the lease. Refused
    /// ([`RuntimeError::InvalidOption`]) where no watchdog can be given a proof of this process's
    /// death (macOS for now: docs/platforms.md).
    pub death_notices: bool,
    /// Kubernetes: while this node leads, its own pod carries the label `KEY=true` (`false`
    /// otherwise), written through the Kubernetes API, so that a Service selecting `KEY: "true"`
    /// routes to the leader's pod (see `pod_label.rs` and docs/kubernetes.md). The API server and
    /// the pod come from the environment Kubernetes gives a container (`KUBERNETES_SERVICE_HOST`,
    /// `KUBERNETES_SERVICE_PORT`, `POD_NAME`, `POD_NAMESPACE`). Needs the `kubernetes` cargo
    /// feature. Default none.
    pub pod_label: Option<String>,
    /// The directory holding the service account's `token`, `ca.crt` (and `namespace`) for
    /// `pod_label`. Default: where Kubernetes mounts them
    /// (`/var/run/secrets/kubernetes.io/serviceaccount`).
    pub service_account: Option<PathBuf>,
}

#[cfg(feature = "kubernetes")]
fn check_pod_label(key: &str) -> Result<(), String> {
    crate::pod_label::check_key(key)
}

#[cfg(not(feature = "kubernetes"))]
fn check_pod_label(_key: &str) -> Result<(), String> {
    Err("this build of tenure-runtime cannot label pods (cargo feature `kubernetes`; the images of \
         deploy/docker are built with it)"
        .into())
}

/// When the HTTP sidecar's `GET /readyz` answers 200 (else 503).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReadyWhen {
    /// While the node runs and is not stopping (any role).
    #[default]
    Node,
    /// Only while this node leads with an unexpired lease: a Kubernetes Service whose endpoints
    /// are the ready pods then routes to the leader alone.
    Leader,
}

impl ReadyWhen {
    /// `node` or `leader`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReadyWhen::Node => "node",
            ReadyWhen::Leader => "leader",
        }
    }
}

impl std::str::FromStr for ReadyWhen {
    type Err = RuntimeError;
    /// `node` or `leader`; anything else is [`RuntimeError::InvalidOption`] naming the value.
    fn from_str(s: &str) -> Result<Self, RuntimeError> {
        match s {
            "node" => Ok(ReadyWhen::Node),
            "leader" => Ok(ReadyWhen::Leader),
            _ => Err(RuntimeError::InvalidOption {
                option: "ready_when",
                message: format!("expected \"node\" or \"leader\", got \"{s}\""),
            }),
        }
    }
}

/// Parses the HTTP sidecar's listen address: `IP:PORT` or `[IPv6]:PORT`, port 0 allowed (the OS
/// picks one). A DNS name is refused: the sidecar binds, it does not resolve.
pub fn parse_http(s: &str) -> Result<SocketAddr, RuntimeError> {
    s.parse::<SocketAddr>().map_err(|_| RuntimeError::InvalidOption {
        option: "http",
        message: format!(
            "\"{s}\" is not IP:PORT (examples: 127.0.0.1:8080, 0.0.0.0:8080, [::]:8080; port 0 picks a free port)"
        ),
    })
}

impl RuntimeConfig {
    /// A runtime configuration with every default around `node`.
    pub fn new(node: tenure::Config) -> Self {
        RuntimeConfig {
            node,
            bind: None,
            state_file: None,
            key_file: None,
            confirm_timeout: None,
            handover_timeout: None,
            resolve_interval: DEFAULT_RESOLVE_INTERVAL,
            failure_policy: crate::FailurePolicy::default(),
            log: true,
            http: None,
            ready_when: ReadyWhen::Node,
            failure_detection: true,
            death_notices: false,
            pod_label: None,
            service_account: None,
        }
    }
    /// Sets the bind address.
    pub fn bind(mut self, addr: impl Into<String>) -> Self {
        self.bind = Some(addr.into());
        self
    }
    /// Sets the state file.
    pub fn state_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.state_file = Some(path.into());
        self
    }
    /// Sets the key file.
    pub fn key_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.key_file = Some(path.into());
        self
    }
    /// Sets the confirm timeout.
    pub fn confirm_timeout(mut self, t: Duration) -> Self {
        self.confirm_timeout = Some(t);
        self
    }
    /// Sets the handover timeout of a graceful stop.
    pub fn handover_timeout(mut self, t: Duration) -> Self {
        self.handover_timeout = Some(t);
        self
    }
    /// Sets the DNS re-resolution interval.
    pub fn resolve_interval(mut self, t: Duration) -> Self {
        self.resolve_interval = t;
        self
    }
    /// Serves the HTTP sidecar on `addr` (see [`RuntimeConfig::http`]).
    pub fn http(mut self, addr: impl Into<String>) -> Self {
        self.http = Some(addr.into());
        self
    }
    /// Sets when `/readyz` is ready.
    pub fn ready_when(mut self, when: ReadyWhen) -> Self {
        self.ready_when = when;
        self
    }
    /// Turns failure detection from the transport on or off.
    pub fn failure_detection(mut self, on: bool) -> Self {
        self.failure_detection = on;
        self
    }
    /// Sets the leader-work failure policy.
    pub fn failure_policy(mut self, policy: crate::FailurePolicy) -> Self {
        self.failure_policy = policy;
        self
    }
    /// Turns logging through the `log` crate on or off.
    pub fn log(mut self, on: bool) -> Self {
        self.log = on;
        self
    }
    /// Labels this node's pod `key=true` while it leads (see [`RuntimeConfig::pod_label`]).
    pub fn pod_label(mut self, key: impl Into<String>) -> Self {
        self.pod_label = Some(key.into());
        self
    }

    /// Checks everything that can be checked without the network — the id, the peers, the bind
    /// address, the core's configuration, the options, and that the key file can be read — so
    /// that bindings fail at construction, where the bad value is known, rather than at
    /// [`crate::spawn`] (which checks the same, through this, then resolves names: see
    /// `resolve::same_node`).
    pub fn validate(&self) -> Result<tenure::ValidConfig, RuntimeError> {
        let id = parse_id(&self.node.id)?;
        if let (true, Err(why)) = (self.death_notices, crate::os::process::DEATH_PROOF) {
            return Err(RuntimeError::InvalidOption { option: "death_notices", message: why.into() });
        }
        for p in self.node.bootstrap.iter().chain(&self.node.observer_peers) {
            parse_peer(p)?;
        }
        // Alone in its view, a node waits forever for a quorum it cannot have, saying only that
        // the view is too small. Allowed when one node is a cluster, or when peers may come to it.
        let alone = self.node.bootstrap.iter().all(|p| *p == self.node.id);
        if alone && !self.node.admit_unknown_peers && self.node.min_cluster_size > 1 {
            return Err(RuntimeError::InvalidOption {
                option: "peers",
                message: format!(
                    "no peer was given: a node alone can never reach min_cluster_size {}; list its peers \
                     (HOST:PORT each), admit unknown peers, or set min_cluster_size to 1",
                    self.node.min_cluster_size
                ),
            });
        }
        if let Some(b) = &self.bind {
            parse_bind(b, id.port)?;
        }
        if self.key_file.is_some() && self.node.key.is_some() {
            return Err(RuntimeError::InvalidOption {
                option: "key_file",
                message: "both a key and a key file were given; give one".into(),
            });
        }
        if self.node.durable && self.state_file.is_none() {
            return Err(RuntimeError::InvalidOption {
                option: "durable",
                message: "durable term and vote need a state file (set state_file)".into(),
            });
        }
        if self.confirm_timeout == Some(Duration::ZERO) {
            return Err(RuntimeError::InvalidOption { option: "confirm_timeout", message: "must be above 0".into() });
        }
        if let Some(addr) = &self.http {
            parse_http(addr)?;
            if !cfg!(feature = "http") {
                return Err(RuntimeError::InvalidOption {
                    option: "http",
                    message: "this build of tenure-runtime has no HTTP sidecar (cargo feature `http`)".into(),
                });
            }
        }
        self.failure_policy.validate()?;
        self.validate_pod_label()?;
        if self.resolve_interval.is_zero() {
            return Err(RuntimeError::InvalidOption { option: "resolve_interval", message: "must be above 0".into() });
        }
        let mut node = self.node.clone();
        node.durable = self.state_file.is_some();
        // Read now (the file is small) so that a missing or empty key file is refused where it is
        // configured; `spawn` reads it again, for the key it runs with.
        if let Some(path) = &self.key_file {
            node.key = Some(read_key_file(path)?);
        }
        Ok(node.validate()?)
    }

    /// The label key (as Kubernetes checks it) and the build; the environment is read by
    /// `spawn`, where the pod runs.
    fn validate_pod_label(&self) -> Result<(), RuntimeError> {
        if self.service_account.is_some() && self.pod_label.is_none() {
            return Err(RuntimeError::InvalidOption {
                option: "service_account",
                message: "applies to pod_label; set pod_label too".into(),
            });
        }
        match &self.pod_label {
            Some(key) => {
                check_pod_label(key).map_err(|message| RuntimeError::InvalidOption { option: "pod_label", message })
            }
            None => Ok(()),
        }
    }
}

/// The key in the key file at `path` (trailing whitespace trimmed, see
/// [`crate::config::key_from_file`]).
pub(crate) fn read_key_file(path: &std::path::Path) -> Result<Vec<u8>, RuntimeError> {
    let bytes =
        std::fs::read(path).map_err(|e| RuntimeError::KeyFile { path: path.to_path_buf(), message: e.to_string() })?;
    let key = crate::config::key_from_file(&bytes);
    if key.is_empty() {
        return Err(RuntimeError::KeyFile {
            path: path.to_path_buf(),
            message: "it holds no key (it is empty)".into(),
        });
    }
    Ok(key)
}

/// The host part of a `HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// An IP address literal.
    Ip(IpAddr),
    /// A DNS name (resolved by the runtime, off the loop thread, with retry).
    Name(String),
}

/// A parsed `HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    /// The host.
    pub host: Host,
    /// The port (1 to 65535).
    pub port: u16,
}

impl Address {
    /// The socket address, when the host is an IP literal.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        match self.host {
            Host::Ip(ip) => Some(SocketAddr::new(ip, self.port)),
            Host::Name(_) => None,
        }
    }
}

fn valid_dns_name(name: &str) -> bool {
    // Lenient on purpose (underscores appear in compose names): labels of letters, digits, `-`
    // and `_`, not starting or ending with `-`, at most 63 bytes; 253 bytes in all.
    name.len() <= 253
        && name.trim_end_matches('.').split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

fn parse_port(s: &str) -> Result<u16, AddressProblem> {
    if s.is_empty() {
        return Err(AddressProblem::MissingPort);
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AddressProblem::BadPort);
    }
    match s.parse::<u64>() {
        Ok(0) => Err(AddressProblem::PortZero),
        Ok(p) if p > 65535 => Err(AddressProblem::PortOutOfRange),
        Ok(p) => Ok(p as u16),
        Err(_) => Err(AddressProblem::PortOutOfRange),
    }
}

/// Parses `HOST:PORT` (`[IPv6]:PORT` for IPv6) into an [`Address`]. Does not reject the
/// unspecified addresses (only an id must not be one: see [`parse_id`]).
pub fn parse_address(s: &str) -> Result<Address, AddressProblem> {
    if s.is_empty() {
        return Err(AddressProblem::Empty);
    }
    // `udp://h:p`, `http://h:p/`: found before the colons are read as an IPv6 address's.
    if s.split_once("://").is_some_and(|(scheme, _)| !scheme.is_empty() && !scheme.contains(['[', ':'])) {
        return Err(AddressProblem::Scheme);
    }
    if let Some(rest) = s.strip_prefix('[') {
        let (ip, after) = rest.split_once(']').ok_or(AddressProblem::BadHost)?;
        let ip: Ipv6Addr = ip.parse().map_err(|_| AddressProblem::BadHost)?;
        let port = after.strip_prefix(':').ok_or(AddressProblem::MissingPort)?;
        return Ok(Address { host: Host::Ip(IpAddr::V6(ip)), port: parse_port(port)? });
    }
    if s.parse::<Ipv6Addr>().is_ok() {
        return Err(AddressProblem::UnbracketedIpv6);
    }
    let (host, port) = s.rsplit_once(':').ok_or(AddressProblem::MissingPort)?;
    if host.contains(':') {
        return Err(AddressProblem::UnbracketedIpv6);
    }
    let port = parse_port(port)?;
    if host.is_empty() {
        return Err(AddressProblem::BadHost);
    }
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        return Ok(Address { host: Host::Ip(IpAddr::V4(ip)), port });
    }
    if !valid_dns_name(host) || host.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(AddressProblem::BadHost);
    }
    Ok(Address { host: Host::Name(host.to_string()), port })
}

/// Parses a node id: a `HOST:PORT` that peers can send to (not `0.0.0.0` or `::`).
pub fn parse_id(s: &str) -> Result<Address, RuntimeError> {
    parse_member(s).map_err(|problem| RuntimeError::InvalidId { value: s.to_string(), problem })
}

/// Parses a peer: a `HOST:PORT` (not `0.0.0.0` or `::`).
pub fn parse_peer(s: &str) -> Result<Address, RuntimeError> {
    parse_member(s).map_err(|problem| RuntimeError::InvalidPeer { value: s.to_string(), problem })
}

/// A member's address (an id or a peer): one that others can send to, so not unspecified.
fn parse_member(s: &str) -> Result<Address, AddressProblem> {
    let a = parse_address(s)?;
    if matches!(a.host, Host::Ip(ip) if ip.is_unspecified()) {
        return Err(AddressProblem::Unspecified);
    }
    Ok(a)
}

/// Parses a bind address, `IP` or `IP:PORT` (IPv6 as `::1`, `[::1]` or `[::1]:PORT`); the port
/// defaults to `default_port` (the id's).
pub fn parse_bind(s: &str, default_port: u16) -> Result<SocketAddr, RuntimeError> {
    let invalid = |problem| RuntimeError::InvalidBind { value: s.to_string(), problem };
    if s.is_empty() {
        return Err(invalid(AddressProblem::Empty));
    }
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, default_port));
    }
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let ip: Ipv6Addr = inner.parse().map_err(|_| invalid(AddressProblem::BadHost))?;
        return Ok(SocketAddr::new(IpAddr::V6(ip), default_port));
    }
    let a = parse_address(s).map_err(invalid)?;
    a.socket_addr().ok_or(invalid(AddressProblem::BadHost))
}

/// The key in a key file: its bytes with trailing whitespace (a final newline) removed.
pub fn key_from_file(contents: &[u8]) -> Vec<u8> {
    let end = contents.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
    contents.get(..end).unwrap_or_default().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_or_name_the_problem() {
        let a = parse_address("127.0.0.1:7001").unwrap();
        assert_eq!(a.socket_addr(), Some("127.0.0.1:7001".parse().unwrap()));
        assert_eq!(parse_address("[::1]:7001").unwrap().socket_addr(), Some("[::1]:7001".parse().unwrap()));
        assert_eq!(
            parse_address("node-1.tenure.default.svc:7946").unwrap().host,
            Host::Name("node-1.tenure.default.svc".into())
        );
        assert_eq!(parse_address("127.0.0.1"), Err(AddressProblem::MissingPort));
        assert_eq!(parse_address("127.0.0.1:"), Err(AddressProblem::MissingPort));
        assert_eq!(parse_address("127.0.0.1:0"), Err(AddressProblem::PortZero));
        assert_eq!(parse_address("127.0.0.1:65536"), Err(AddressProblem::PortOutOfRange));
        assert_eq!(parse_address("127.0.0.1:99999999999999999999"), Err(AddressProblem::PortOutOfRange));
        assert_eq!(parse_address("127.0.0.1:x"), Err(AddressProblem::BadPort));
        assert_eq!(parse_address("::1:7000"), Err(AddressProblem::UnbracketedIpv6));
        assert_eq!(parse_address("udp://127.0.0.1:1"), Err(AddressProblem::Scheme));
        assert_eq!(parse_address("http://node-1:80/"), Err(AddressProblem::Scheme));
        assert_eq!(parse_address(":7000"), Err(AddressProblem::BadHost));
        assert_eq!(parse_address("bad host:7000"), Err(AddressProblem::BadHost));
        assert_eq!(parse_address("300.1.1.1:7000"), Err(AddressProblem::BadHost));
        assert_eq!(parse_address(""), Err(AddressProblem::Empty));
    }

    #[test]
    fn ids_must_be_reachable_and_bind_takes_an_ip() {
        let e = parse_id("0.0.0.0:7001").unwrap_err();
        assert_eq!(e.code(), "invalid_id");
        assert!(e.to_string().contains("--bind"), "{e}");
        assert!(e.to_string().contains("0.0.0.0:7001"), "{e}");
        assert_eq!(parse_peer("[::]:7001").unwrap_err().code(), "invalid_peer");
        assert_eq!(parse_bind("0.0.0.0", 7001).unwrap(), "0.0.0.0:7001".parse().unwrap());
        assert_eq!(parse_bind("::", 7001).unwrap(), "[::]:7001".parse().unwrap());
        assert_eq!(parse_bind("[::1]", 7001).unwrap(), "[::1]:7001".parse().unwrap());
        assert_eq!(parse_bind("127.0.0.2:9000", 7001).unwrap(), "127.0.0.2:9000".parse().unwrap());
        assert_eq!(parse_bind("localhost:9000", 7001).unwrap_err().code(), "invalid_bind");
    }
}
