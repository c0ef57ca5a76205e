//! The model checker's command line.
//!
//! ```text
//! model-check [--scope NAME|all] [--depth N] [--threads T] [--bfs] [--bug NAME|all] [--probe-every K] [--timeout-s S] [--max-generated N] [--out DIR]
//! ```
//!
//! Explores every interleaving of the real core up to depth N (default: each scope's CI depth)
//! and prints `model-check: scope=… bugs=… states=S distinct_generated=N generated=G depth=D
//! elapsed_s=… states_per_s=… violations=V` (S: states checked).
//! A counterexample is printed as a trace and written as scenario files under DIR (default
//! `target/model-check`); the exit status is 1. With `--bug all`, each injected bug is checked in
//! turn and must be caught (exit 1 if one is not).

use std::path::PathBuf;
use std::process::ExitCode;

use tenure_model::{bugs, check_for, scopes, Opts};

/// mimalloc: the checker allocates and frees a state's nodes, datagrams and history for every
/// action it explores, and glibc's allocator took a third of the run's time doing it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: model-check [--scope NAME|all] [--depth N] [--threads T] [--bfs] [--bug NAME|all] [--probe-every K] [--timeout-s S] [--max-generated N] [--out DIR]";

fn main() -> ExitCode {
    let mut depth: Option<usize> = None;
    let mut scope = "all".to_string();
    let mut threads = 2usize;
    let mut bfs = false;
    let mut limit = None;
    let mut max_generated = None;
    let mut bug: Option<String> = None;
    let mut out = PathBuf::from("target/model-check");
    let mut probe_every: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |what: &str| args.next().unwrap_or_else(|| panic!("{what} needs a value\n{USAGE}"));
        match a.as_str() {
            "--depth" => depth = Some(value("--depth").parse().expect("--depth N")),
            "--scope" => scope = value("--scope"),
            "--threads" => threads = value("--threads").parse().expect("--threads T"),
            "--bfs" => bfs = true,
            "--timeout-s" => {
                limit = Some(std::time::Duration::from_secs(value("--timeout-s").parse().expect("--timeout-s S")))
            }
            "--max-generated" => max_generated = Some(value("--max-generated").parse().expect("--max-generated N")),
            "--bug" => bug = Some(value("--bug")),
            "--probe-every" => probe_every = Some(value("--probe-every").parse().expect("--probe-every K")),
            "--out" => out = PathBuf::from(value("--out")),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let runs: Vec<Vec<tenure::Bug>> = match bug.as_deref() {
        None | Some("none") => vec![Vec::new()],
        Some("all") => bugs::ALL.iter().map(|b| vec![*b]).collect(),
        Some(name) => match bugs::parse(name) {
            Some(b) => vec![vec![b]],
            None => {
                eprintln!("unknown bug {name:?}; known: {:?}", bugs::ALL.map(bugs::name));
                return ExitCode::from(2);
            }
        },
    };
    let expect_violation = bug.as_deref().is_some_and(|b| b != "none");
    let mut failed = false;
    let scopes: Vec<_> = scopes().into_iter().filter(|s| scope == "all" || s.name == scope).collect();
    if scopes.is_empty() {
        eprintln!("unknown scope {scope:?}\n{USAGE}");
        return ExitCode::from(2);
    }
    let (mut total_states, mut total_generated, mut total_s) = (0usize, 0usize, 0f64);
    for run in runs {
        let mut caught = false;
        // The scope whose faults reach the bug first, then the others.
        let mut order: Vec<&tenure_model::Scope> = scopes.iter().collect();
        if let Some(first) = run.first().map(|b| bugs::first_scope(*b)) {
            order.sort_by_key(|sc| sc.name != first);
        }
        for sc in order {
            let names: Vec<&str> = run.iter().map(|b| bugs::name(*b)).collect();
            let label = if names.is_empty() {
                format!("model-check-{}", sc.name)
            } else {
                format!("model-check-{}-{}", sc.name, names.join("+"))
            };
            let opts =
                Opts { bugs: run.clone(), probe_every: probe_every.unwrap_or(sc.opts.probe_every), ..sc.opts.clone() };
            let depth = depth.unwrap_or(sc.depth);
            // An injected bug is looked for breadth-first within the scope's CI bound: the
            // counterexample comes from the shallowest block of states that holds one (a short,
            // readable trace; stateright checks 1500 states per block and keeps the last violation
            // it saw in the block, so not always a shortest one).
            let r = check_for(opts.clone(), depth, threads, bfs || !run.is_empty(), &label, limit, max_generated);
            total_states += r.checked;
            total_generated += r.generated;
            total_s += r.seconds;
            let bugs_text = if names.is_empty() { "none".to_string() } else { names.join(",") };
            println!(
            "model-check: scope={} bugs={bugs_text} states={} distinct_generated={} generated={} depth={} elapsed_s={:.1} states_per_s={:.0} violations={}{}",
            sc.name,
            r.checked,
            r.states,
            r.generated,
            r.depth,
            r.seconds,
            r.checked as f64 / r.seconds.max(1e-9),
            usize::from(r.violation.is_some()),
            r.violation.as_ref().map(|v| format!(" caught_by={}", v.0)).unwrap_or_default(),
        );
            if !r.elected {
                println!("model-check: warning: no state with a leader was reached (the bound is too small to be meaningful)");
            }
            if opts.ranked() && !r.preempted && r.violation.is_none() {
                println!("model-check: warning: no preemption was reached (the bound checks `preempt` on nothing)");
            }
            if let Some((name, trace, scenarios)) = &r.violation {
                caught = true;
                println!("counterexample for {name}:\n{trace}");
                match tenure_model::trace::write(&out, scenarios) {
                    Ok(paths) => {
                        for p in paths {
                            println!("  scenario: {}", p.display());
                        }
                    }
                    Err(e) => eprintln!("cannot write scenarios into {}: {e}", out.display()),
                }
                // The scenario files must reproduce the counterexample step by step (with the
                // injected bugs switched on), or they would not be evidence of anything.
                let replayed: Result<Vec<()>, String> =
                    scenarios.iter().map(|s| tenure_model::trace::replay_in(&opts, s, &run)).collect();
                match replayed {
                    Ok(_) => println!("  the scenarios replay against the core step by step"),
                    Err(e) => {
                        println!("model-check: a counterexample's scenario does not replay: {e}");
                        failed = true;
                    }
                }
                if !expect_violation {
                    failed = true;
                }
            }
            if caught {
                break;
            }
        }
        if expect_violation && !caught {
            let names: Vec<&str> = run.iter().map(|b| bugs::name(*b)).collect();
            println!("model-check: bug {} NOT caught in any scope's bound", names.join(","));
            failed = true;
        }
    }
    println!(
        "model-check: total states={total_states} generated={total_generated} elapsed_s={total_s:.1} violations={}",
        usize::from(failed && !expect_violation)
    );
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
