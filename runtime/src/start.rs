//! [`spawn`]: every check before anything runs, then the runtime thread.

use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::Duration;

use mio::net::UdpSocket;
use mio::{Interest, Poll, Waker};

use crate::config::{parse_bind, parse_id, Host};
use crate::handle::{EndGuard, Shared, Snapshot};
use crate::policy::FailureCounter;
use crate::probe::Prober;
use crate::resolve::{Family, Peers, Resolver};
use crate::runloop::{Durable, Io, Lead, Loop, Net, QuorumWatch, Report, Stop, SOCKET, WAKER};
use crate::state::StateFile;
use crate::warn::Warner;
use crate::{Clock, Confirm, Engine, EngineInit, Handle, Handler, RuntimeConfig, RuntimeError, RuntimeEvent};

fn io_err(context: &str) -> impl Fn(std::io::Error) -> RuntimeError + '_ {
    move |e| RuntimeError::Io { context: context.to_string(), message: e.to_string() }
}

/// How long a bind waits for a port in use to be released: a previous run of this node that
/// crashed while leading leaves its socket with its watchdog until the leader-only command has
/// ended and the death notices are sent (at most the lease, see `docs/command.md`), and a node
/// restarted at once must not fail for that.
const ADDR_IN_USE_WAIT: Duration = Duration::from_secs(1);

fn bind_socket(candidates: &[SocketAddr]) -> Result<std::net::UdpSocket, RuntimeError> {
    let mut last = None;
    for addr in candidates {
        let until = std::time::Instant::now() + ADDR_IN_USE_WAIT;
        let bound = loop {
            match std::net::UdpSocket::bind(addr) {
                Err(e) if e.kind() == ErrorKind::AddrInUse && std::time::Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => break other,
            }
        };
        match bound {
            Ok(s) => return Ok(s),
            Err(e) if e.kind() == ErrorKind::AddrInUse => {
                return Err(RuntimeError::AddressInUse { addr: addr.to_string() });
            }
            Err(e) => last = Some(RuntimeError::Bind { addr: addr.to_string(), message: e.to_string() }),
        }
    }
    Err(last.unwrap_or(RuntimeError::Bind { addr: String::new(), message: "no address to bind".into() }))
}

/// Starts a runtime: checks everything, binds the socket, opens and locks the state file, builds
/// the engine with `engine_factory` (on the calling thread), then starts the runtime thread,
/// which delivers [`RuntimeEvent::Started`](crate::RuntimeEvent::Started) first. Returns an error, with nothing left running,
/// when any of that fails.
pub fn spawn<E, F, H>(config: RuntimeConfig, engine_factory: F, handler: H) -> Result<Handle, RuntimeError>
where
    E: Engine,
    F: FnOnce(EngineInit) -> Result<E, RuntimeError>,
    H: Handler,
{
    config.validate()?;
    let RuntimeConfig {
        mut node,
        bind,
        state_file,
        key_file,
        confirm_timeout,
        handover_timeout,
        resolve_interval,
        failure_policy,
        log,
        http,
        ready_when,
        failure_detection,
        death_notices,
        pod_label,
        service_account,
    } = config;
    let id_addr = parse_id(&node.id)?;
    if let Some(path) = &key_file {
        node.key = Some(crate::config::read_key_file(path)?);
    }
    node.durable = state_file.is_some();
    // The leadership gate is the runtime's, in every host: it asks the handler (which may defer
    // to the application's confirm_leader) and denies on its own while stopping, so a stopping
    // node cannot take leadership back.
    node.confirm_leader = true;
    let valid = node.validate()?;
    let repeated = crate::resolve::same_node(&node.id, &node.bootstrap)?;
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let confirm_timeout = confirm_timeout.map_or(valid.election_timeout_min, ms);
    let handover_timeout = handover_timeout.map_or(valid.election_timeout_max, ms);

    let candidates = match (&bind, &id_addr.host) {
        (Some(b), _) => vec![parse_bind(b, id_addr.port)?],
        (None, Host::Ip(ip)) => vec![SocketAddr::new(*ip, id_addr.port)],
        (None, Host::Name(_)) => vec![
            SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), id_addr.port),
            SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), id_addr.port),
        ],
    };
    let (state, restored) = match &state_file {
        Some(path) => {
            let (f, r) = StateFile::open(path)?;
            (Some(f), r)
        }
        None => (None, None),
    };
    // The pod and the API server are read from the environment before anything runs.
    #[cfg(feature = "kubernetes")]
    let pod_label = pod_label
        .map(|key| {
            crate::pod_label::PodLabelConfig::from_env(&key, service_account.as_deref(), |k| std::env::var(k).ok())
                .map_err(|message| RuntimeError::InvalidOption { option: "pod_label", message })
        })
        .transpose()?;
    #[cfg(not(feature = "kubernetes"))]
    let _ = (pod_label, service_account); // refused by `validate` in this build
    let std_socket = bind_socket(&candidates)?;
    let bound = std_socket.local_addr().map_err(io_err("reading the bound address"))?;
    std_socket.set_nonblocking(true).map_err(io_err("making the socket non-blocking"))?;
    let refusals =
        if failure_detection { crate::os::probe::Refusals::enable(&std_socket, bound.is_ipv6()) } else { None };
    let icmp = refusals.is_some();

    // The sidecar's port, like the UDP one, is taken before anything runs.
    #[cfg(feature = "http")]
    let sidecar = http.as_deref().map(crate::config::parse_http).transpose()?.map(crate::http::bind).transpose()?;
    #[cfg(feature = "http")]
    let http_addr = sidecar.as_ref().map(|(_, a)| *a);
    #[cfg(not(feature = "http"))]
    let http_addr = {
        let _ = (&http, ready_when);
        None
    };

    let clock = Clock::new();
    let start_term = restored.as_ref().map_or(0, |s| s.term);
    let id = node.id.clone();
    let bootstrap = node.bootstrap.clone();
    let seed = tenure::os_seed()
        .map_err(|e| RuntimeError::Io { context: "seeding the election timers".into(), message: e.to_string() })?;
    // Wall-clock milliseconds: incarnations grow across restarts (the core's freshness rule).
    node.incarnation = node.incarnation.or(Some(crate::clock::wall_ms()));
    let key = node.key.clone();
    let engine = engine_factory(EngineInit { config: node, seed, restored, now: clock.now() })?;
    let engine_lacks_notices = death_notices && !engine.has_death_notices();
    let death_notices = death_notices && !engine_lacks_notices;

    let poll = Poll::new().map_err(io_err("creating the event loop"))?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(io_err("creating the event loop"))?);
    // Death notices leave from this node's own address (peers name senders by it): the watchdog
    // sends them on a duplicate of this socket.
    let socket_dup = if death_notices {
        Some(crate::notice::duplicate(&std_socket).map_err(io_err("duplicating the socket"))?)
    } else {
        None
    };
    let mut socket = UdpSocket::from_std(std_socket);
    poll.registry().register(&mut socket, SOCKET, Interest::READABLE).map_err(io_err("registering the socket"))?;
    let (tx, rx) = mpsc::channel();
    let resolver = Resolver::start(tx.clone(), waker.clone()).map_err(io_err("starting the resolver thread"))?;
    let mut peers = Peers::new(Family { v6: bound.is_ipv6() }, resolver, ms(resolve_interval));
    for p in bootstrap.iter().filter(|p| **p != id) {
        peers.add(p, true, clock.now());
        if let Some(entry) = peers.by_id.get_mut(p) {
            entry.in_view = true;
        }
    }

    let shared = Arc::new(Shared {
        id: id.clone(),
        bound,
        clock,
        tx,
        waker,
        snapshot: Snapshot::new(start_term),
        running: std::sync::atomic::AtomicBool::new(true),
        ended: Default::default(),
        thread: Mutex::new(None),
        thread_id: OnceLock::new(),
        fatal: Mutex::new(None),
        counters: Default::default(),
        http_addr,
        on_end: Mutex::new(Vec::new()),
        notices: Default::default(),
        leader_work: std::sync::atomic::AtomicBool::new(false),
    });
    shared.notices.set_socket(socket_dup);
    let config_warnings = valid
        .warnings
        .iter()
        .map(|w| (w.code().to_string(), w.to_string()))
        .chain(repeated.iter().map(|p| {
            let m = format!("peer {p} is listed more than once: it counts once");
            ("duplicate_peer".to_string(), m)
        }))
        .chain(engine_lacks_notices.then(|| {
            let m = "this engine cannot produce death notices: a crash of this node fails over by the lease";
            ("death_notice_off".to_string(), m.to_string())
        }))
        .chain((failure_detection && !icmp).then(|| {
            let m = "the socket cannot report ICMP errors (IP_RECVERR refused): a dead leader is detected by election timeout only";
            ("failure_detection_off".to_string(), m.to_string())
        }))
        .collect();
    #[cfg(feature = "kubernetes")]
    let label = match pod_label {
        Some(config) => {
            // Its warnings reach the handler through the loop, like every warning.
            let (tx, waker) = (shared.tx.clone(), shared.waker.clone());
            let warn = move |code: &str, message: &str| {
                let warning = crate::handle::Command::Warning { code: code.into(), message: message.into() };
                let _ = tx.send(warning);
                let _ = waker.wake();
            };
            let label =
                crate::pod_label::PodLabel::start(config, warn).map_err(io_err("starting the pod-label thread"))?;
            // Cleared once the runtime has stopped, before `Handle::wait` returns.
            let finish = label.clone();
            shared.on_end.lock().unwrap_or_else(|p| p.into_inner()).push(Box::new(move || finish.finish()));
            Some(label)
        }
        None => None,
    };
    let handler = Observed {
        inner: handler,
        #[cfg(feature = "kubernetes")]
        label,
    };
    let mut runner = Loop {
        engine,
        handler,
        shared: shared.clone(),
        io: Io::new(poll, socket, rx),
        durable: Durable { file: state, pending: None },
        net: Net { peers, prober: icmp.then(Prober::default), refusals, heartbeat_interval: valid.heartbeat_interval },
        lead: Lead {
            confirm_timeout,
            confirm_pending: None,
            leader_pending: None,
            notices: death_notices.then_some(crate::runloop::NoticeRefresh { next: 0, term: 0 }),
            failures: FailureCounter::new(failure_policy, Duration::from_millis(valid.election_timeout_max)),
            held: None,
            hold_limit: valid.election_timeout_max,
        },
        stop: Stop::new(handover_timeout),
        report: Report {
            id,
            log,
            warner: Warner::default(),
            key,
            start_term,
            config_warnings,
            quorum: QuorumWatch {
                next: 0,
                every: valid.heartbeat_interval,
                leaderless_since: None,
                leading_since: None,
                silent_after: crate::quorum::silent_after(valid.election_timeout_max),
            },
        },
    };
    #[cfg(feature = "http")]
    if let Some((server, _)) = sidecar {
        crate::http::serve(server, Handle { shared: shared.clone() }, ready_when)
            .map_err(io_err("starting the HTTP sidecar thread"))?;
    }
    let thread = std::thread::Builder::new()
        .name("tenure-runtime".into())
        .spawn(move || {
            let _ended = EndGuard(runner.shared.clone());
            runner.run();
            drop(runner);
        })
        .map_err(io_err("starting the runtime thread"));
    let thread = match thread {
        Ok(t) => t,
        Err(e) => {
            // Nothing runs: stop the sidecar too.
            drop(EndGuard(shared));
            return Err(e);
        }
    };
    let _ = shared.thread_id.set(thread.thread().id());
    *shared.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(thread);
    Ok(Handle { shared })
}

/// The application's handler, and what the runtime itself follows by events: the pod label
/// (`leader` sets it, `follower` and `stopped` clear it).
struct Observed<H> {
    inner: H,
    #[cfg(feature = "kubernetes")]
    label: Option<Arc<crate::pod_label::PodLabel>>,
}

impl<H: Handler> Handler for Observed<H> {
    fn on_event(&mut self, event: RuntimeEvent) {
        #[cfg(feature = "kubernetes")]
        if let Some(l) = &self.label {
            l.on_event(&event);
        }
        self.inner.on_event(event)
    }
    fn confirm_leader(&mut self, term: u64) -> Confirm {
        self.inner.confirm_leader(term)
    }
    fn leader_work_running(&self) -> bool {
        self.inner.leader_work_running()
    }
}
