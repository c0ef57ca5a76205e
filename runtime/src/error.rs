//! [`RuntimeError`]: every way starting or driving a runtime can fail, each with a stable code.

use std::fmt;
use std::path::PathBuf;

/// What is wrong with a `HOST:PORT` (or, for `bind`, `IP[:PORT]`) value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressProblem {
    /// Nothing given.
    Empty,
    /// No `:PORT` part.
    MissingPort,
    /// A port that is not a whole number.
    BadPort,
    /// Port 0 (the OS would pick one: peers could never reach it by this id).
    PortZero,
    /// A port above 65535.
    PortOutOfRange,
    /// An empty host, or one that is neither an IP address nor a DNS name.
    BadHost,
    /// An IPv6 address without brackets (`::1:7000` is ambiguous: write `[::1]:7000`).
    UnbracketedIpv6,
    /// A URL scheme before the address (`udp://127.0.0.1:7000`): the value is a bare `HOST:PORT`.
    Scheme,
    /// `0.0.0.0` or `::` as an id: peers cannot send to it. Bind to it with `--bind` and give a
    /// reachable address (or name) as the id.
    Unspecified,
}

impl AddressProblem {
    fn explain(&self) -> &'static str {
        match self {
            AddressProblem::Empty => "it is empty",
            AddressProblem::MissingPort => "it has no port (expected HOST:PORT)",
            AddressProblem::BadPort => "its port is not a number",
            AddressProblem::PortZero => "port 0 is not a reachable port",
            AddressProblem::PortOutOfRange => "its port is above 65535",
            AddressProblem::BadHost => "its host is neither an IP address nor a DNS name",
            AddressProblem::UnbracketedIpv6 => "IPv6 addresses need brackets, as in [::1]:7000",
            AddressProblem::Scheme => {
                "it starts with a URL scheme (SCHEME://); give the address alone, HOST:PORT (the transport is always UDP)"
            }
            AddressProblem::Unspecified => {
                "0.0.0.0 and :: cannot be an id (peers could not send to it): give the address or DNS \
                 name peers reach this node at as the id, and use --bind 0.0.0.0 (or [::]) to listen on \
                 every interface"
            }
        }
    }
}

/// Everything that can go wrong in the runtime. [`RuntimeError::code`] is a stable snake_case
/// string that the Python and Node.js bindings map to their own typed exceptions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The node id is not a usable `HOST:PORT`.
    InvalidId {
        /// The id given.
        value: String,
        /// What is wrong with it.
        problem: AddressProblem,
    },
    /// A peer is not a usable `HOST:PORT`.
    InvalidPeer {
        /// The peer given.
        value: String,
        /// What is wrong with it.
        problem: AddressProblem,
    },
    /// The bind address is not a usable `IP` or `IP:PORT`.
    InvalidBind {
        /// The value given.
        value: String,
        /// What is wrong with it.
        problem: AddressProblem,
    },
    /// The core refused the configuration.
    Config(tenure::ConfigError),
    /// A runtime option out of range (`confirm_timeout` of zero, both a key and a key file, ...).
    InvalidOption {
        /// The option.
        option: &'static str,
        /// Why.
        message: String,
    },
    /// The UDP address is already in use by another socket.
    AddressInUse {
        /// The address.
        addr: String,
    },
    /// The HTTP sidecar's TCP address ([`crate::RuntimeConfig::http`]) cannot be bound. Code
    /// `address_in_use` when another socket holds it, else `bind_failed`; kind `bind`.
    HttpBind {
        /// The address.
        addr: String,
        /// Whether another socket holds it.
        in_use: bool,
        /// The OS error.
        message: String,
    },
    /// Binding the UDP socket failed for another reason.
    Bind {
        /// The address.
        addr: String,
        /// The OS error.
        message: String,
    },
    /// The state file's directory does not exist.
    StateDirMissing {
        /// The state file.
        path: PathBuf,
    },
    /// The state file (or its directory) cannot be written.
    StateUnwritable {
        /// The state file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// The state file is not UTF-8 text.
    StateNotUtf8 {
        /// The state file.
        path: PathBuf,
    },
    /// The state file holds neither the JSON format nor the old `term voted_for` line.
    StateCorrupt {
        /// The state file.
        path: PathBuf,
        /// What was found.
        message: String,
    },
    /// Another process holds the state file's lock (two nodes must never share one file).
    StateLocked {
        /// The state file.
        path: PathBuf,
    },
    /// The state file could not be read.
    StateRead {
        /// The state file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// The key file could not be read.
    KeyFile {
        /// The key file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// Two spellings of one node among the id and the peers (`127.0.0.1:7002` and
    /// `localhost:7002`, or this node's own address as a peer under another name): the second
    /// would be a member that never answers, so the cluster could not elect.
    SameNode {
        /// The first spelling (the id, when `is_self`).
        first: String,
        /// The second spelling (a peer).
        second: String,
        /// The address both resolve to.
        addr: String,
        /// `first` is this node's own id.
        is_self: bool,
    },
    /// The node refused an operation (not leader, unknown peer, payload too large, ...).
    Node(tenure::Error),
    /// The engine failed (the WebAssembly component trapped or could not be loaded).
    Engine {
        /// What the engine reported.
        message: String,
    },
    /// The application's leader-only work kept failing: the failure policy stopped the runtime
    /// after this many consecutive leaderships ended by failing work (see
    /// [`crate::FailurePolicy`]).
    LeaderWorkFailed {
        /// Consecutive failed leaderships.
        leaderships: u32,
        /// The last one's term.
        term: u64,
    },
    /// The application's handler panicked on the runtime thread.
    HandlerPanicked {
        /// The panic message, when it was a string.
        message: String,
    },
    /// The runtime has stopped: the operation cannot run.
    Stopped,
    /// The operating system's random source failed: no seed for the election timers (never a
    /// fixed fallback: two nodes must not draw identical timeouts).
    NoRandomness,
    /// A graceful transfer found no peer to hand leadership to (none has answered yet, or every
    /// one is reported unreachable).
    NoTransferTarget,
    /// A [`crate::Handle`] method that must wait for the runtime thread was called on it (from a
    /// handler).
    OnRuntimeThread {
        /// The method.
        method: &'static str,
    },
    /// An I/O failure that is not one of the above (the socket failed while running).
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        message: String,
    },
}

impl RuntimeError {
    /// A stable snake_case code, identical in every binding. For [`RuntimeError::Config`] and
    /// [`RuntimeError::Node`] it is the core's own code (`min_above_max`, `not_leader`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            RuntimeError::InvalidId { .. } => "invalid_id",
            RuntimeError::InvalidPeer { .. } => "invalid_peer",
            RuntimeError::InvalidBind { .. } => "invalid_bind",
            RuntimeError::SameNode { is_self: true, .. } => "peer_is_self",
            RuntimeError::SameNode { is_self: false, .. } => "same_peer_twice",
            RuntimeError::Config(e) => e.code(),
            RuntimeError::InvalidOption { .. } => "invalid_option",
            RuntimeError::AddressInUse { .. } | RuntimeError::HttpBind { in_use: true, .. } => "address_in_use",
            RuntimeError::HttpBind { .. } => "bind_failed",
            RuntimeError::Bind { .. } => "bind_failed",
            RuntimeError::StateDirMissing { .. } => "state_dir_missing",
            RuntimeError::StateUnwritable { .. } => "state_unwritable",
            RuntimeError::StateNotUtf8 { .. } => "state_not_utf8",
            RuntimeError::StateCorrupt { .. } => "state_corrupt",
            RuntimeError::StateLocked { .. } => "state_locked",
            RuntimeError::StateRead { .. } => "state_read_failed",
            RuntimeError::KeyFile { .. } => "key_file",
            RuntimeError::Node(e) => e.code(),
            RuntimeError::Engine { .. } => "engine_failed",
            RuntimeError::HandlerPanicked { .. } => "handler_panicked",
            RuntimeError::LeaderWorkFailed { .. } => "leader_work_failed",
            RuntimeError::Stopped => "stopped",
            RuntimeError::NoTransferTarget => "no_transfer_target",
            RuntimeError::OnRuntimeThread { .. } => "on_runtime_thread",
            RuntimeError::Io { .. } => "io",
            RuntimeError::NoRandomness => "no_randomness",
        }
    }

    /// The broad family of the error, for bindings that map families to exception classes:
    /// `address` (id, peer, bind), `config`, `bind`, `state_file`, `key_file`, `node`, `engine`, `misuse`,
    /// `stopped` or `io`.
    pub fn kind(&self) -> &'static str {
        match self {
            RuntimeError::InvalidId { .. }
            | RuntimeError::InvalidPeer { .. }
            | RuntimeError::InvalidBind { .. }
            | RuntimeError::SameNode { .. } => "address",
            RuntimeError::Config(_) | RuntimeError::InvalidOption { .. } => "config",
            RuntimeError::AddressInUse { .. } | RuntimeError::Bind { .. } | RuntimeError::HttpBind { .. } => "bind",
            RuntimeError::StateDirMissing { .. }
            | RuntimeError::StateUnwritable { .. }
            | RuntimeError::StateNotUtf8 { .. }
            | RuntimeError::StateCorrupt { .. }
            | RuntimeError::StateLocked { .. }
            | RuntimeError::StateRead { .. } => "state_file",
            RuntimeError::KeyFile { .. } => "key_file",
            RuntimeError::Node(_) | RuntimeError::NoTransferTarget => "node",
            RuntimeError::Engine { .. } => "engine",
            RuntimeError::Stopped => "stopped",
            RuntimeError::OnRuntimeThread { .. } | RuntimeError::HandlerPanicked { .. } => "misuse",
            RuntimeError::LeaderWorkFailed { .. } => "leader_work",
            RuntimeError::Io { .. } => "io",
            RuntimeError::NoRandomness => "no_randomness",
        }
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::InvalidId { value, problem } => {
                write!(f, "invalid id \"{value}\": {}", problem.explain())
            }
            RuntimeError::InvalidPeer { value, problem } => {
                write!(f, "invalid peer \"{value}\": {}", problem.explain())
            }
            RuntimeError::InvalidBind { value, problem } => {
                write!(f, "invalid bind address \"{value}\": {} (expected IP or IP:PORT)", problem.explain())
            }
            RuntimeError::SameNode { first, second, addr, is_self: true } => write!(
                f,
                "peer \"{second}\" is this node (\"{first}\") under another name: both are {addr}; remove it from the peers"
            ),
            RuntimeError::SameNode { first, second, addr, is_self: false } => write!(
                f,
                "peers \"{first}\" and \"{second}\" are one node under two names: both are {addr}; list it once, under the name it uses as its own id"
            ),
            RuntimeError::Config(e) => write!(f, "invalid configuration: {e}"),
            RuntimeError::InvalidOption { option, message } => write!(f, "invalid {option}: {message}"),
            RuntimeError::AddressInUse { addr } => write!(
                f,
                "cannot bind UDP {addr}: the address is already in use (another node or program listens there)"
            ),
            RuntimeError::Bind { addr, message } => write!(f, "cannot bind UDP {addr}: {message}"),
            RuntimeError::HttpBind { addr, message, .. } => {
                write!(f, "cannot bind the HTTP sidecar to TCP {addr}: {message}")
            }
            RuntimeError::StateDirMissing { path } => {
                write!(f, "state file {}: its directory does not exist", path.display())
            }
            RuntimeError::StateUnwritable { path, message } => {
                write!(f, "state file {} cannot be written: {message}", path.display())
            }
            RuntimeError::StateNotUtf8 { path } => {
                write!(f, "state file {} is not UTF-8 text (not a tenure state file?)", path.display())
            }
            RuntimeError::StateCorrupt { path, message } => {
                write!(f, "state file {} is corrupt: {message}", path.display())
            }
            RuntimeError::StateLocked { path } => write!(
                f,
                "state file {} is locked by another process: every node needs its own state file",
                path.display()
            ),
            RuntimeError::StateRead { path, message } => {
                write!(f, "state file {} cannot be read: {message}", path.display())
            }
            RuntimeError::KeyFile { path, message } => {
                write!(f, "cannot read key file {}: {message}", path.display())
            }
            RuntimeError::Node(e) => e.fmt(f),
            RuntimeError::Engine { message } => write!(f, "the engine failed: {message}"),
            RuntimeError::HandlerPanicked { message } => write!(f, "the event handler panicked: {message}"),
            RuntimeError::LeaderWorkFailed { leaderships, term } => write!(
                f,
                "leader-only work failed in {leaderships} consecutive leaderships (last term {term}): the node \
                 stopped instead of churning terms"
            ),
            RuntimeError::Stopped => write!(f, "the runtime has stopped"),
            RuntimeError::NoRandomness => {
                write!(f, "the operating system's random source failed; no seed for the election timers")
            }
            RuntimeError::NoTransferTarget => {
                write!(f, "no peer to hand leadership to: none has answered yet, or every one is unreachable")
            }
            RuntimeError::OnRuntimeThread { method } => write!(
                f,
                "Handle::{method} cannot be called from the runtime thread (inside a handler): call it from another thread"
            ),
            RuntimeError::Io { context, message } => write!(f, "{context}: {message}"),
        }
    }
}

impl std::error::Error for RuntimeError {}

impl From<tenure::ConfigError> for RuntimeError {
    fn from(e: tenure::ConfigError) -> Self {
        RuntimeError::Config(e)
    }
}

impl From<tenure::Error> for RuntimeError {
    fn from(e: tenure::Error) -> Self {
        RuntimeError::Node(e)
    }
}
