//! `tenure-wasmtime run --id HOST:PORT --peer HOST:PORT ... --cluster NAME [...]`
//!
//! Runs one tenure node, hosted in the WebAssembly component under wasmtime, over UDP with real
//! timers. Same command line and JSON event lines as the Python and Node.js runtimes (both come
//! from `tenure::cli`). SIGTERM or SIGINT stops it gracefully: a leader first hands leadership
//! to the core's `transfer_target()` (the peer heard from most recently, as in every runtime)
//! and waits (up to `election_timeout_max`) for a new leader to be known.
//!
//! The component is the one this crate was built with, or `--component PATH` /
//! `TENURE_COMPONENT` to load another build.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tenure::cli::{self, Command, RunOptions};
use tenure::Event;
use tenure_component_host::{
    node_config, node_error_name, role_name, Callbacks, ComponentNode, ConfirmAnswer, DurableState, Inspect, Loader,
};

const PROG: &str = "tenure-wasmtime";

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn emit(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The host side of the node: UDP out, state file, JSON lines. Nothing here calls the node.
struct Udp {
    id: String,
    socket: UdpSocket,
    addrs: BTreeMap<String, Option<SocketAddr>>,
    state_file: Option<String>,
    wakeup: Option<u64>,
}

impl Udp {
    fn addr(&mut self, peer: &str) -> Option<SocketAddr> {
        *self.addrs.entry(peer.to_string()).or_insert_with(|| peer.to_socket_addrs().ok().and_then(|mut a| a.next()))
    }

    fn event(&self, e: &Event) {
        if let Some(line) = cli::event_line(wall_ms(), &self.id, e) {
            emit(&line);
        }
    }
}

fn write_state_file(path: &str, state: &tenure::DurableState) -> std::io::Result<()> {
    let tmp = format!("{path}.tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(state.encode().as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    let dir = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty());
    if let Ok(d) = std::fs::File::open(dir.unwrap_or(std::path::Path::new("."))) {
        let _ = d.sync_all();
    }
    Ok(())
}

impl Callbacks for Udp {
    fn send(&mut self, to: &str, bytes: Vec<u8>) {
        if let Some(addr) = self.addr(to) {
            // UDP is best effort; the protocol tolerates loss.
            let _ = self.socket.send_to(&bytes, addr);
        }
    }
    fn set_wakeup(&mut self, deadline: Option<u64>) {
        self.wakeup = deadline;
    }
    fn persist(&mut self, state: &DurableState) -> Result<(), String> {
        let Some(path) = &self.state_file else { return Ok(()) };
        let s = tenure::DurableState { term: state.term, voted_for: state.voted_for.clone() };
        write_state_file(path, &s).map_err(|e| format!("cannot write state file {path}: {e}"))
    }
    fn became_leader(&mut self, term: u64) -> Result<(), String> {
        self.event(&Event::BecameLeader { term });
        Ok(())
    }
    fn became_follower(&mut self, term: u64, leader: Option<&str>) {
        self.event(&Event::BecameFollower { term, leader: leader.map(str::to_string) });
    }
    fn confirm_leader(&mut self, _term: u64) -> ConfirmAnswer {
        ConfirmAnswer::Grant
    }
    fn peer_joined(&mut self, peer: &str) {
        self.event(&Event::PeerJoined { peer: peer.to_string() });
    }
    fn peer_left(&mut self, peer: &str) {
        self.event(&Event::PeerLeft { peer: peer.to_string() });
    }
    fn message(&mut self, from: &str, payload: Vec<u8>) {
        self.event(&Event::Message { from: from.to_string(), payload });
    }
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut component = std::env::var("TENURE_COMPONENT").ok();
    if let Some(i) = args.iter().position(|a| a == "--component") {
        if i + 1 >= args.len() {
            eprintln!("{PROG}: --component needs a value");
            return ExitCode::from(2);
        }
        component = Some(args.remove(i + 1));
        args.remove(i);
    }
    let options = match cli::parse_args(&args) {
        Ok(Command::Run(o)) => o,
        Ok(Command::Help) => {
            print!("usage: {PROG} {}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{PROG}: {e}\n\nusage: {PROG} {}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    match run(options, component) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{PROG}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: RunOptions, component: Option<String>) -> Result<(), String> {
    let key = match &options.key_file {
        Some(path) => {
            Some(cli::key_from_file(&std::fs::read(path).map_err(|e| format!("cannot read key file {path}: {e}"))?))
        }
        None => None,
    };
    let restored = match &options.state_file {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => Some(
                tenure::DurableState::decode(&text)
                    .ok_or_else(|| format!("state file {path} does not hold a 'term voted_for' line"))?,
            ),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot read state file {path}: {e}")),
        },
        None => None,
    };
    let config = options.config(key);
    let id = config.id.clone();
    let socket = UdpSocket::bind(&id).map_err(|e| format!("cannot bind UDP {id}: {e}"))?;
    let loader = match &component {
        Some(path) => Loader::from_file(path),
        None => Loader::built(),
    }
    .map_err(|e| format!("cannot load the component: {e:#}"))?;
    let callbacks = Udp {
        id: id.clone(),
        socket: socket.try_clone().map_err(|e| e.to_string())?,
        addrs: BTreeMap::new(),
        state_file: options.state_file.clone(),
        wakeup: None,
    };
    let start = Instant::now();
    let now = || start.elapsed().as_millis() as u64;
    let seed = tenure::os_seed().map_err(|e| e.to_string())?;
    let wit_config = node_config(&config, seed, restored);
    let mut node = ComponentNode::new(&loader, callbacks, &wit_config, now())
        .map_err(|e| format!("{e:#}"))?
        .map_err(|e| format!("invalid configuration: {}", e.message))?;
    let trap = |e: wasmtime::Error| format!("the node stopped: {e:#}");
    for w in node.warnings().map_err(trap)? {
        emit(&cli::warning_line(wall_ms(), &id, &w.code, &w.message));
    }
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
    }
    emit(&cli::lifecycle_line(wall_ms(), &id, "started", node.term().map_err(trap)?));

    let mut names: BTreeMap<SocketAddr, String> = BTreeMap::new();
    for p in &config.bootstrap {
        if let Some(a) = p.to_socket_addrs().ok().and_then(|mut a| a.next()) {
            names.insert(a, p.clone());
        }
    }
    // The shared stdin control lines (`transfer PEER`, `inspect`, `broadcast TEXT`), read on a
    // thread and acted on in this loop, never from inside a call into the component.
    let (control_tx, control) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines().map_while(Result::ok) {
            if control_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut buf = vec![0u8; 65_536];
    let mut stopping: Option<u64> = None;
    let handover_ms = node.inspect().map_err(trap)?.election_timeout_max;
    loop {
        if STOP.load(Ordering::SeqCst) && stopping.is_none() {
            let t = now();
            stopping = Some(t + handover_ms);
            if !node.is_leader().map_err(trap)? {
                break;
            }
            let target = node.transfer_target().map_err(trap)?;
            match target {
                Some(target) => {
                    if let Err(e) = node.transfer_leadership(t, &target).map_err(trap)? {
                        eprintln!("{PROG}: leadership transfer to {target} failed: {}", e.message);
                        break;
                    }
                }
                None => break,
            }
        }
        if let Some(until) = stopping {
            let handed_over = node.leader().map_err(trap)?.is_some_and(|l| l != id);
            if handed_over || now() >= until {
                break;
            }
        }
        while let Ok(line) = control.try_recv() {
            match cli::parse_control(&line) {
                Ok(None) => {}
                Ok(Some(cli::Control::Inspect)) => {
                    let state = core_inspect(node.inspect().map_err(trap)?);
                    emit(&cli::inspect_line(wall_ms(), &id, &state));
                }
                Ok(Some(cli::Control::Transfer(peer))) => {
                    if let Err(e) = node.transfer_leadership(now(), &peer).map_err(trap)? {
                        emit(&cli::warning_line(wall_ms(), &id, node_error_name(e.code), &e.message));
                    }
                }
                Ok(Some(cli::Control::Broadcast(payload))) => {
                    if let Err(e) = node.broadcast(now(), &payload).map_err(trap)? {
                        emit(&cli::warning_line(wall_ms(), &id, node_error_name(e.code), &e.message));
                    }
                }
                Err(message) => emit(&cli::warning_line(wall_ms(), &id, "bad_control_line", &message)),
            }
        }
        let t = now();
        let wait = match node.callbacks().wakeup {
            Some(d) if d <= t => 0,
            Some(d) => (d - t).min(50),
            None => 50,
        };
        if wait > 0 {
            socket.set_read_timeout(Some(Duration::from_millis(wait))).map_err(|e| e.to_string())?;
            match socket.recv_from(&mut buf) {
                Ok((n, addr)) => {
                    let from = names.get(&addr).cloned().unwrap_or_else(|| addr.to_string());
                    let t = now();
                    // Dropped input is counted by the node (inspect().dropped_by_reason).
                    let _ = node.handle_message(t, &from, &buf[..n]).map_err(trap)?;
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
                // ICMP port unreachable from a peer that is down surfaces here on Linux: ignore.
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(format!("UDP receive failed: {e}")),
            }
        }
        let t = now();
        if node.callbacks().wakeup.is_some_and(|d| d <= t) {
            node.handle_timeout(t).map_err(trap)?;
        }
    }
    emit(&cli::lifecycle_line(wall_ms(), &id, "stopped", node.term().map_err(trap)?));
    Ok(())
}

/// The component's inspect record as the core's `Inspect`, so that the `inspect` line is
/// rendered by the same code as in every other runtime.
fn core_inspect(i: Inspect) -> tenure::Inspect {
    tenure::Inspect {
        id: i.id,
        state: role_name(i.state).to_string(),
        leader: i.leader,
        leader_id: i.leader_id,
        term: i.term,
        voted_for: i.voted_for,
        term_changed_at: i.term_changed_at,
        cluster: i.cluster,
        view_size: i.view_size,
        quorum: i.quorum,
        min_cluster_size: i.min_cluster_size,
        peers: i.peers,
        declared: i.declared,
        bootstrap: i.bootstrap,
        unreachable: i.unreachable.into_iter().collect(),
        ghost_ttl: i.ghost_ttl,
        votes_granted: i.votes_granted,
        votes_count: i.votes_count,
        election_timer_armed: i.election_timer_armed,
        heartbeat_timer_armed: i.heartbeat_timer_armed,
        heartbeat_in_last: i.heartbeat_in_last,
        heartbeat_out_last: i.heartbeat_out_last,
        election_timeout_min: i.election_timeout_min,
        election_timeout_max: i.election_timeout_max,
        heartbeat_interval: i.heartbeat_interval,
        dropped_by_reason: i.dropped_by_reason.into_iter().collect(),
        send_failing_peers: i.send_failing_peers,
        confirm_denied: i.confirm_denied,
        last_denied_at: i.last_denied_at,
        lease_deadline: i.lease_deadline,
    }
}
