//! The scopes of `make model-check`: bounded regions of the state space, each a fault budget per
//! path, the starts and clock patterns, and the depth of the CI bound (docs/model.md, "Scopes and
//! bounds").

use crate::{Budget, Opts, Start};

/// One bounded region of the state space: a fault budget, the starts, and the depth `make
/// model-check` explores it to.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Its name (`--scope`).
    pub name: &'static str,
    /// The model's options.
    pub opts: Opts,
    /// The depth of the CI bound.
    pub depth: usize,
}

/// The scopes of `make model-check`, each sized to explore about a million distinct states.
pub fn scopes() -> Vec<Scope> {
    let rho = tenure::DEFAULT_MAX_CLOCK_DRIFT_PPM as i32;
    let base = Opts {
        nodes: 3,
        bugs: Vec::new(),
        budget: Budget::NONE,
        starts: vec![Start::Led],
        // Exact clocks, and the first two nodes at opposite extremes of ±ρ.
        rates: vec![vec![0, 0, 0, 0], vec![-rho, rho, 0, 0]],
        max_in_flight: 8,
        probe_every: 16,
        membership: false,
        advance: true,
        notice: false,
        old: None,
        ranks: [(0, false); 4],
        preempt_after: None,
        observer: None,
    };
    let with = |budget: Budget, starts: Vec<Start>| Opts { budget, starts, ..base.clone() };
    let quiet = |budget: Budget| Opts { budget, starts: vec![Start::Led], advance: false, ..base.clone() };
    vec![
        Scope {
            name: "election",
            opts: with(Budget { drop: 1, dup: 1, ..Budget::NONE }, vec![Start::Fresh]),
            depth: 10,
        },
        Scope {
            name: "partition",
            opts: with(Budget { partition: 1, crash: 1, ..Budget::NONE }, vec![Start::Led]),
            depth: 9,
        },
        Scope {
            name: "host",
            opts: with(Budget { host: 1, report: 1, crash: 1, ..Budget::NONE }, vec![Start::Led]),
            depth: 6,
        },
        Scope {
            name: "adversary",
            opts: with(Budget { adversary: 2, drop: 1, ..Budget::NONE }, vec![Start::Led]),
            depth: 6,
        },
        Scope { name: "failover", opts: quiet(Budget { partition: 1, crash: 1, run: 2, ..Budget::NONE }), depth: 11 },
        Scope { name: "refused", opts: quiet(Budget { partition: 1, report: 1, run: 2, ..Budget::NONE }), depth: 11 },
        Scope { name: "forged", opts: quiet(Budget { partition: 1, huge_term: 2, run: 2, ..Budget::NONE }), depth: 10 },
        Scope { name: "slow-confirm", opts: with(Budget { run: 3, ..Budget::NONE }, vec![Start::Fresh]), depth: 10 },
        Scope {
            name: "notice",
            opts: Opts { notice: true, ..quiet(Budget { partition: 1, crash: 1, run: 2, ..Budget::NONE }) },
            depth: 11,
        },
        Scope {
            name: "notice-mixed",
            opts: Opts {
                notice: true,
                old: Some(2),
                ..quiet(Budget { partition: 1, crash: 1, run: 2, ..Budget::NONE })
            },
            depth: 11,
        },
        Scope {
            name: "priority",
            opts: Opts {
                ranks: PRIORITY_RANKS,
                preempt_after: Some(PRIORITY_PREEMPT_AFTER),
                ..quiet(Budget { crash: 1, drop: 1, dup: 1, run: 3, ..Budget::NONE })
            },
            depth: 10,
        },
        Scope {
            name: "observer",
            opts: Opts {
                nodes: 4,
                observer: Some(3),
                ..quiet(Budget { partition: 1, crash: 1, drop: 1, run: 2, ..Budget::NONE })
            },
            depth: 11,
        },
    ]
}

/// The ranks of scope `priority`: `(priority, never_lead)` of `n1`, `n2`, `n3`.
pub const PRIORITY_RANKS: [(u32, bool); 4] = [(0, true), (1, false), (2, false), (0, false)];

/// `preempt_after` of scope `priority`: one election timeout, so that a preemption falls within a
/// quiet stretch of the start.
pub const PRIORITY_PREEMPT_AFTER: u64 = 150;
