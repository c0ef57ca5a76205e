//! A counterexample, made readable and replayable: the path's actions re-run with a recorder, one
//! line per action, and one scenario file (`tests/scenarios` format) per node run, which the
//! simulator's replayer and [`replay`] check step by step.

use std::fmt::Write as _;
use std::path::Path;

use tenure::{DurableState, Node};
use tenure_sim::scenario::{
    apply_input, output_json, to_file_text, ConfigJson, FinalJson, Input, RestoredJson, Scenario, Step,
};

use crate::model::{initial_recorded, Action, TenureModel};
use crate::step::{name, Rec};
use crate::{bugs, Opts, State, IDS};

/// The readable trace of `actions` from initial state `init` (an index into the model's initial
/// states), the recording of every input, and the final state.
pub fn rerun(model: &TenureModel, init: usize, actions: &[Action]) -> (String, Rec, State) {
    let mut rec = Rec::default();
    let (start, rates) = init_params(&model.opts, init);
    let mut s = initial_recorded(&model.opts, start, &rates, Some(&mut rec));
    let mut out = String::new();
    let _ = writeln!(out, "start: {start:?}, clock rates (ppm) {rates:?}; {} after the start", describe(&s));
    for a in actions {
        let before = s.now;
        let next = model.apply(&s, a, Some(&mut rec)).expect("the path's actions replay");
        let _ = writeln!(out, "{:>6} ms  {:<44} {}", before, action_text(&s, a), describe(&next));
        s = next;
    }
    if let Some(b) = &s.broken {
        let _ = writeln!(out, "VIOLATED {}: {}", b.name, b.why);
    }
    (out, rec, s)
}

/// The start and clock rates of initial state `k`.
pub fn init_params(opts: &Opts, k: usize) -> (crate::Start, Vec<i32>) {
    let start = opts.starts[k / opts.rates.len()];
    (start, opts.rates[k % opts.rates.len()].clone())
}

/// One action in words.
pub fn action_text(s: &State, a: &Action) -> String {
    let dg = |d: &crate::Dgram| {
        let kind = tenure::wire::decode(&d.bytes, None)
            .map(|e| format!("{} term {}", e.message.kind(), e.term))
            .unwrap_or_else(|_| "undecodable".into());
        format!("{} -> {}: {kind}", name(d.from), name(d.to))
    };
    match a {
        Action::Deliver(k) => format!("deliver {}", dg(&s.net[*k])),
        Action::Drop(k) => format!("drop {}", dg(&s.net[*k])),
        Action::Dup(k) => format!("duplicate {}", dg(&s.net[*k])),
        Action::Fire(i) => format!("{} timer fires", name(*i)),
        Action::Advance(t) => format!("time -> {t} ms"),
        Action::Confirm(i, g) => format!("{} host {} leadership", name(*i), if *g { "confirms" } else { "denies" }),
        Action::LeaderFailed(i) => format!("{} leader work fails", name(*i)),
        Action::Transfer(i, j) => format!("{} transfers leadership to {}", name(*i), name(*j)),
        Action::Crash(i) => format!("{} crashes", name(*i)),
        Action::Restart(i) => format!("{} restarts from durable state", name(*i)),
        Action::Report(i, p, r) => format!("{} host reports {} down ({})", name(*i), name(*p), r.as_str()),
        Action::Stranger(i) => format!("stranger asks {} for a vote", name(*i)),
        Action::HugeTerm(i) => format!("forged max-term heartbeat to {}", name(*i)),
        Action::Replay(k) => format!("replay {}", dg(&s.seen[*k])),
        Action::Cut(i) => format!("partition cuts {} off", name(*i)),
        Action::Heal => "partition heals".to_string(),
        Action::Run => "quiet network: deliveries on time, leaders heartbeat".to_string(),
        Action::Notice(i) => format!("{}'s watchdog sends its death notices", name(*i)),
    }
}

/// The nodes' roles, terms and leaders, and the datagrams in flight.
pub fn describe(s: &State) -> String {
    let mut out = String::new();
    for (i, h) in s.hosts.iter().enumerate() {
        match &h.node {
            Some(r) => {
                let n = &r.node;
                let _ = write!(out, "{}={}/t{}", IDS[i], n.role().as_str(), n.term());
                if let Some(l) = n.leader() {
                    let _ = write!(out, "/{l}");
                }
                if let Some(d) = n.lease_deadline() {
                    let _ = write!(out, "/lease<={d}");
                }
                out.push(' ');
            }
            None => {
                let _ = write!(out, "{}=down ", IDS[i]);
            }
        }
    }
    let _ = write!(out, "[{} in flight]", s.net.len());
    out
}

/// One scenario per node run of the recording: the inputs, the outputs the core produced, and the
/// state it ended in. `label` names the files (`{label}-n1-run0`, …).
pub fn scenarios(opts: &Opts, rec: &Rec, label: &str) -> Vec<Scenario> {
    let mut out = Vec::new();
    for &(i, run, start_ms, ref restored) in &rec.starts {
        let steps: Vec<Step> =
            rec.steps.iter().filter(|(n, r, _)| *n == i && *r == run).map(|(_, _, s)| s.clone()).collect();
        let config = ConfigJson::from_config(&opts.config(usize::from(i)));
        let mut node = opts.new_node(usize::from(i), run, restored.clone(), start_ms);
        for step in &steps {
            if let Ok(input) = Input::from_json(&step.input) {
                let _ = apply_input(&mut node, step.at, &input);
                while node.poll_output().is_some() {}
            }
        }
        let bug_names: Vec<&str> = opts.bugs.iter().map(|b| bugs::name(*b)).collect();
        out.push(Scenario {
            name: format!("{label}-{}-run{run}", IDS[usize::from(i)]),
            description: format!(
                "model-check counterexample: {}'s run {run} (bugs injected: {})",
                IDS[usize::from(i)],
                if bug_names.is_empty() { "none".to_string() } else { bug_names.join(", ") }
            ),
            config,
            seed: opts.seed(usize::from(i), run),
            restored: restored
                .as_ref()
                .map(|d: &DurableState| RestoredJson { term: d.term, voted_for: d.voted_for.clone() }),
            start_ms,
            steps,
            final_state: FinalJson::of(&node),
        });
    }
    out
}

/// Writes the scenarios into `dir`; returns the paths.
pub fn write(dir: &Path, scenarios: &[Scenario]) -> std::io::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut paths = Vec::new();
    for s in scenarios {
        let p = dir.join(format!("{}.json", s.name));
        std::fs::write(&p, to_file_text(s))?;
        paths.push(p);
    }
    Ok(paths)
}

/// Replays a scenario against a node with `bugs` injected (none: exactly the simulator's
/// [`tenure_sim::scenario::replay`]); the first difference is the error.
pub fn replay(s: &Scenario, bugs: &[tenure::Bug]) -> Result<(), String> {
    if bugs.is_empty() {
        return tenure_sim::scenario::replay(s);
    }
    replay_versioned(s, bugs, tenure::wire::MIN_VERSION)
}

/// [`replay`] of a scenario a run of `opts` wrote: its node speaks the wire version it spoke in
/// the model (the scenario format does not record it; see `Opts::new_node`).
pub fn replay_in(opts: &Opts, s: &Scenario, bugs: &[tenure::Bug]) -> Result<(), String> {
    let i = crate::index_of(&s.config.id);
    replay_versioned(s, bugs, opts.version(usize::from(i)))
}

fn replay_versioned(s: &Scenario, bugs: &[tenure::Bug], version: u8) -> Result<(), String> {
    let restored = s.restored.as_ref().map(|r| DurableState { term: r.term, voted_for: r.voted_for.clone() });
    let mut node = Node::new(s.config.to_config()?, s.seed, restored, s.start_ms).map_err(|e| e.to_string())?;
    node.limit_wire_version(version);
    for &b in bugs {
        node.inject_bug(b);
    }
    for (k, step) in s.steps.iter().enumerate() {
        let input = Input::from_json(&step.input)?;
        let result = apply_input(&mut node, step.at, &input).map_or_else(|e| e.to_string(), |()| "ok".to_string());
        let mut outputs = Vec::new();
        while let Some(o) = node.poll_output() {
            outputs.push(output_json(&o));
        }
        if result != step.result || outputs != step.outputs || node.poll_timeout() != step.next_deadline {
            return Err(format!("{} step {k} (at {}): differs", s.name, step.at));
        }
    }
    if FinalJson::of(&node) != s.final_state {
        return Err(format!("{}: final state differs", s.name));
    }
    Ok(())
}
