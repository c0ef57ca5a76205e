//! Randomised runs outside S1's scope (membership changes, restarts without durable state): each
//! side elects only with a majority of its own view (S1-view, checked at every step) and after
//! healing the cluster converges to one leader (L1). The bulk of the seeds run in `make test`
//! through the release CLI; this keeps a few in `cargo test`, and pins a known core issue.

use tenure_sim::random::{run_seed, Fault, RunOptions};

fn all_faults(durable: bool) -> RunOptions {
    RunOptions { faults: Fault::parse_list("all").unwrap(), durable, verbose_log: false, ..RunOptions::default() }
}

#[test]
fn out_of_scope_runs_keep_s1_view_and_converge() {
    for seed in 1_000_000..1_000_100 {
        if let Some(v) = run_seed(seed, &all_faults(true)).violation {
            panic!("{v}");
        }
    }
}

/// KNOWN CORE ISSUE (reported to the lead in issue 4's report): after members are removed
/// (`peer_down(terminated)`) and come back, or a node restarts without durable state, two nodes
/// can lead the same term (allowed out of scope). They never resolve it: a leader ignores a
/// heartbeat of its own term from another leader ("never let them demote each other"), both keep
/// quorum evidence because followers acknowledge both, and followers flip between them every
/// heartbeat forever, so L1's "converges to one leader after healing" fails.
/// `cargo run --release -p tenure-sim -- --seed 1001316 --faults all` (n3 and n4 lead term 3) and
/// `--seed 3002534 --faults all --no-durable` (n2 and n5). Remove the `ignore` once fixed.
#[test]
#[ignore = "core: same-term leaders never resolve (seeds 1001316, 3002534 --no-durable); see the comment"]
fn same_term_leaders_after_member_removal_converge() {
    for (seed, durable) in [(1_001_316, true), (3_002_534, false)] {
        if let Some(v) = run_seed(seed, &all_faults(durable)).violation {
            panic!("{v}");
        }
    }
}
