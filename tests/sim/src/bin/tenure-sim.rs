//! The simulator's command line.
//!
//! ```text
//! tenure-sim --seeds N [--first-seed S] [--nodes K] [--rtt-ms X] [--faults LIST] [--chaos-ms MS]
//!            [--no-durable] [--no-pre-vote] [--no-drift] [--admit-unknown-peers] [--heartbeat-interval MS] [--lease-duration MS] [--observers K] [--bug NAME]
//!            [--threads T] [--seed S --verbose]
//! tenure-sim --demo
//! ```
//!
//! Prints the per-invariant counts, then `seeds=N violations=V failover_p50_ms=… failover_p99_ms=…
//! failover_max_ms=… elapsed_s=…` last, and exits 1 after a violation (printing the seed and the
//! event log of the first failing run).

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use tenure::{Bug, Config, PeerDownReason};
use tenure_sim::random::{run_seed, Fault, RunOptions, RunResult};
use tenure_sim::scenario::Input;
use tenure_sim::sim::{NetConfig, Sim};

const USAGE: &str = "usage: tenure-sim --seeds N [--first-seed S] [--nodes K] [--rtt-ms X] [--faults LIST]
                  [--chaos-ms MS] [--no-durable] [--no-pre-vote] [--no-drift]
                  [--admit-unknown-peers] [--heartbeat-interval MS] [--lease-duration MS] [--observers K]
                  [--bug NAME] [--threads T]
       tenure-sim --seed S [--verbose | --trace] [same options]   (one seed: print its log)
       tenure-sim --demo                                (a readable 5-node election timeline)

faults: crash (with crash points between outputs), amnesia, pause, partition, oneway, loss, dup,
        reorder, membership, deny (denied, unanswered or late confirmations), handler, transfer,
        broadcast, drift (clock rate changes within ±ρ), latedup (duplicates up to 10 s late),
        replay (a recorder replays any datagram at random later times, and a dead leader's last
        ones of every kind), fakeids (undeclared senders), fakevoter (a stranger grants every vote),
        hugeterm (near-maximum terms under a member's id), falsedown (false no_connection
        reports), refused, versions (mixed wire versions), notice (leaders' watchdogs send death
        notices when they die; forged and replayed notices), priority (random priorities and
        witnesses; the settled leader must have the highest priority); `default` (all but amnesia and membership, which leave the scope of
        one-leader-per-term), `all`, `none`. Comma-separated.
clocks: every host's clock drifts within ±ρ (max_clock_drift_ppm) unless --no-drift.
bugs:   double-vote, no-step-down, ignore-higher-term, quorum-off-by-one, no-prevote-stickiness,
        deposed-forgets-promise, restart-votes-at-once, any-message-is-evidence, unbounded-term,
        stale-heartbeat-refreshes, refused-releases-promise, repeated-vote-restarts-timer,
        unchecked-leadership-start, notice-to-every-member, preempt-without-transfer, observer-counted, watchdog-sends-while-alive (the
        simulated watchdog's, with `notice`)

Prints per-invariant violation counts (`invariants: S1=0 ...`) and, last,
`seeds=N violations=V failover_p50_ms=... failover_p99_ms=... failover_max_ms=... elapsed_s=...`.";

fn parse_bug(s: &str) -> Result<Bug, String> {
    Ok(match s {
        "double-vote" => Bug::DoubleVote,
        "no-step-down" => Bug::NoStepDown,
        "ignore-higher-term" => Bug::IgnoreHigherTerm,
        "quorum-off-by-one" => Bug::QuorumOffByOne,
        "no-prevote-stickiness" => Bug::NoPrevoteStickiness,
        "deposed-forgets-promise" => Bug::DeposedForgetsPromise,
        "restart-votes-at-once" => Bug::RestartVotesAtOnce,
        "any-message-is-evidence" => Bug::AnyMessageIsEvidence,
        "unbounded-term" => Bug::UnboundedTerm,
        "stale-heartbeat-refreshes" => Bug::StaleHeartbeatRefreshes,
        "refused-releases-promise" => Bug::RefusedReleasesPromise,
        "repeated-vote-restarts-timer" => Bug::RepeatedVoteRestartsTimer,
        "unchecked-leadership-start" => Bug::UncheckedLeadershipStart,
        "notice-to-every-member" => Bug::NoticeToEveryMember,
        "preempt-without-transfer" => Bug::PreemptWithoutTransfer,
        "observer-counted" => Bug::ObserverCounted,
        _ => return Err(format!("unknown bug {s:?}")),
    })
}

struct Args {
    seeds: u64,
    first: u64,
    one: Option<u64>,
    verbose: bool,
    threads: usize,
    demo: bool,
    opts: RunOptions,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        seeds: 1000,
        first: 0,
        one: None,
        verbose: false,
        threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
        demo: false,
        opts: RunOptions { verbose_log: false, ..RunOptions::default() },
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    let num = |flag: &str, v: Option<&String>| -> Result<u64, String> {
        v.ok_or_else(|| format!("{flag} needs a value"))?.parse().map_err(|_| format!("{flag} expects a number"))
    };
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--seeds" => a.seeds = num(flag, it.next())?,
            "--first-seed" => a.first = num(flag, it.next())?,
            "--seed" => a.one = Some(num(flag, it.next())?),
            "--nodes" => a.opts.nodes = num(flag, it.next())? as usize,
            "--rtt-ms" => a.opts.rtt_ms = num(flag, it.next())?,
            "--chaos-ms" => a.opts.chaos_ms = num(flag, it.next())?,
            "--threads" => a.threads = num(flag, it.next())?.max(1) as usize,
            "--faults" => a.opts.faults = Fault::parse_list(it.next().ok_or("--faults needs a value")?)?,
            "--bug" => match it.next().map(String::as_str) {
                Some("watchdog-sends-while-alive") => a.opts.watchdog_sends_while_alive = true,
                Some(name) => a.opts.bugs.push(parse_bug(name)?),
                None => return Err("--bug needs a value".into()),
            },
            "--no-durable" => a.opts.durable = false,
            "--no-pre-vote" => a.opts.pre_vote = false,
            "--no-drift" => a.opts.drift = false,
            "--admit-unknown-peers" => a.opts.admit_unknown_peers = true,
            "--observers" => a.opts.observers = num(flag, it.next())? as usize,
            "--heartbeat-interval" => a.opts.heartbeat_interval = Some(num(flag, it.next())?),
            "--lease-duration" => a.opts.lease_duration = Some(num(flag, it.next())?),
            "--verbose" => a.verbose = true,
            "--trace" => a.opts.echo = true,
            "--demo" => a.demo = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if a.opts.nodes == 0 || a.opts.nodes > 50 {
        return Err("--nodes must be 1..=50".into());
    }
    if a.opts.rtt_ms == 0 {
        return Err("--rtt-ms must be at least 1".into());
    }
    Ok(a)
}

fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied()
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("tenure-sim: {e}");
            }
            eprintln!("{USAGE}");
            return if e.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) };
        }
    };
    if args.demo {
        demo();
        return ExitCode::SUCCESS;
    }
    if let Some(seed) = args.one {
        let opts = RunOptions { verbose_log: true, ..args.opts.clone() };
        let r = run_seed(seed, &opts);
        match &r.violation {
            Some(v) => {
                println!("{v}");
                println!("seeds=1 violations=1 failover_p50_ms=- failover_p99_ms=-");
                return ExitCode::from(1);
            }
            None => {
                if args.verbose {
                    for l in &r.log {
                        println!("{l}");
                    }
                    println!("seed {seed}: ok (failover {:?} ms, S1 in scope: {})", r.failover_ms, r.s1_in_scope);
                }
                let f = r.failover_ms.map_or("-".to_string(), |x| x.to_string());
                println!("seeds=1 violations=0 failover_p50_ms={f} failover_p99_ms={f}");
                return ExitCode::SUCCESS;
            }
        }
    }

    let next = AtomicU64::new(0);
    let results: Mutex<Vec<RunResult>> = Mutex::new(Vec::new());
    let start = std::time::Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..args.threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= args.seeds {
                    break;
                }
                let mut r = run_seed(args.first + i, &args.opts);
                if r.violation.is_some() {
                    // Re-run with the full log for the report (same seed, same schedule).
                    let opts = RunOptions { verbose_log: true, ..args.opts.clone() };
                    r = run_seed(args.first + i, &opts);
                }
                results.lock().expect("no panics while holding the lock").push(r);
            });
        }
    });
    let mut results = results.into_inner().expect("threads joined");
    results.sort_by_key(|r| r.seed);
    let violations: Vec<&RunResult> = results.iter().filter(|r| r.violation.is_some()).collect();
    if let Some(first) = violations.first() {
        println!("{}", first.violation.as_ref().expect("filtered"));
        let seeds: Vec<String> = violations.iter().take(20).map(|r| r.seed.to_string()).collect();
        println!("failing seeds: {}{}", seeds.join(", "), if violations.len() > 20 { ", ..." } else { "" });
        println!("reproduce: cargo run --release -p tenure-sim -- --seed {} (same options)", first.seed);
    }
    let mut failovers: Vec<u64> = results.iter().filter_map(|r| r.failover_ms).collect();
    failovers.sort_unstable();
    let p = |q| percentile(&failovers, q).map_or("-".to_string(), |x| x.to_string());
    eprintln!(
        "ran {} seeds in {:.1} s ({} nodes, rtt {} ms, faults {:?}); failover max {} ms over {} probes",
        results.len(),
        start.elapsed().as_secs_f64(),
        args.opts.nodes,
        args.opts.rtt_ms,
        args.opts.faults.iter().map(|f| Fault::ALL.iter().find(|x| x.0 == *f).map_or("?", |x| x.1)).collect::<Vec<_>>(),
        failovers.last().map_or("-".to_string(), |x| x.to_string()),
        failovers.len()
    );
    // Per-invariant counts: every checked invariant is listed, with 0 when it held.
    let mut by_invariant: std::collections::BTreeMap<&str, usize> =
        tenure_sim::check::INVARIANTS.iter().map(|i| (*i, 0)).collect();
    for v in violations.iter().filter_map(|r| r.violation.as_ref()) {
        *by_invariant.entry(v.invariant).or_default() += 1;
    }
    let s1_out = results.iter().filter(|r| !r.s1_in_scope).count();
    println!(
        "invariants: {} (runs that left S1's scope: {s1_out}; failover probes: {})",
        by_invariant.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
        failovers.len()
    );
    println!(
        "seeds={} violations={} failover_p50_ms={} failover_p99_ms={} failover_max_ms={} elapsed_s={:.1}",
        results.len(),
        violations.len(),
        p(0.5),
        p(0.99),
        failovers.last().map_or("-".to_string(), |x| x.to_string()),
        start.elapsed().as_secs_f64()
    );
    if violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A readable election timeline: five nodes, 2 ms round trips, crashes, a partition, a transfer.
fn demo() {
    println!("tenure-sim demo: five nodes n1..n5, 2 ms round trips, election timeout 150-300 ms,");
    println!("heartbeat 50 ms, pre-vote and durable term/vote on. Times are simulated milliseconds.\n");
    let mut sim = Sim::cluster(2026, 5, NetConfig::rtt(2), |c: Config| c.durable(true));
    sim.verbose_log = false;
    sim.echo = true;
    let say = |sim: &mut Sim, text: &str| {
        println!();
        sim.logf(format_args!("=== {text} ==="));
    };
    let elect = |sim: &mut Sim| -> String {
        let deadline = sim.now + 3000;
        sim.run_until_cond(deadline, |s| s.converged()).expect("no violation");
        sim.leader().expect("a leader")
    };
    say(&mut sim, "start: everyone is a follower and waits a random election timeout");
    let l1 = elect(&mut sim);
    sim.run_for(200).expect("ok");

    say(&mut sim, &format!("{l1} crashes silently"));
    let t = sim.now;
    sim.crash(&l1);
    let l2 = elect(&mut sim);
    println!("           -> failover took {} ms", sim.now - t);
    sim.run_for(200).expect("ok");

    say(&mut sim, &format!("{l1} restarts with its durable term and vote, and rejoins as a follower"));
    sim.restart(&l1, true);
    sim.run_for(300).expect("ok");

    let minority: Vec<String> = vec![l2.clone(), sim.nodes.iter().map(|n| n.id.clone()).find(|x| *x != l2).expect("x")];
    let majority: Vec<String> = sim.nodes.iter().map(|n| n.id.clone()).filter(|x| !minority.contains(x)).collect();
    say(&mut sim, &format!("partition: leader {l2} is cut off with one follower {minority:?} | {majority:?}"));
    sim.partition(&[minority, majority]);
    sim.run_for(800).expect("ok");
    say(&mut sim, "heal: the old leader sees the newer term and follows");
    sim.heal();
    let l3 = elect(&mut sim);
    sim.run_for(200).expect("ok");

    let target = sim.nodes.iter().map(|n| n.id.clone()).find(|x| *x != l3).expect("another node");
    say(&mut sim, &format!("{l3} transfers leadership to {target} (graceful shutdown)"));
    let t = sim.now;
    sim.call(&l3, Input::Transfer(target.clone())).expect("leader transfers");
    let l4 = elect(&mut sim);
    println!("           -> {l4} leads after {} ms", sim.now - t);
    sim.run_for(200).expect("ok");

    say(&mut sim, &format!("{l4} dies and every host reports it terminated: fast failover"));
    let t = sim.now;
    sim.crash(&l4);
    sim.report_down(&l4, PeerDownReason::Terminated);
    let l5 = elect(&mut sim);
    println!("           -> {l5} leads after {} ms", sim.now - t);
    sim.run_for(100).expect("ok");
    println!();
    println!("leaders in order: {l1}, {l2}, {l3}, {l4}, {l5}; invariants held at every step.");
}
