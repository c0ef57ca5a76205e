//! The leader's watchdog (docs/protocol.md, "Death notices"): a process that outlives its node and,
//! on proof of the node's death, sends the death notices the node's core armed it with while it
//! led. And the wire-version gate check: a run that speaks only the oldest version is never
//! addressed a newer kind other than `Hello` by a node that heard from that run.

use crate::sim::{Armed, Sim};

impl Sim {
    /// After every input of node `idx`: while it leads, its watchdog holds the notices of its
    /// current leadership (checked against the gate: the core decided whom to address); when the
    /// leadership ends, the host disarms it within `disarm_lag_ms`.
    pub(crate) fn arm(&mut self, idx: usize) {
        if !self.watchdogs {
            return;
        }
        let Some(node) = self.nodes[idx].node.as_ref() else { return };
        if node.is_leader() {
            let armed = Armed { term: node.term(), disarm_at: None, notices: node.death_notices() };
            let id = self.nodes[idx].id.clone();
            for (to, _) in &armed.notices {
                self.gate(&id, to, "death_notice");
            }
            self.nodes[idx].armed = Some(armed);
        } else if self.nodes[idx].armed.as_ref().is_some_and(|a| a.disarm_at.is_none()) {
            let at = self.now + self.rng.range(0, self.disarm_lag_ms);
            if let Some(a) = self.nodes[idx].armed.as_mut() {
                a.disarm_at = Some(at);
            }
        }
    }

    /// Node `idx`'s process is dying: its watchdog, if armed (and not disarmed yet, and not
    /// killed with it), sends the notices. The node's lease ends here: no work of it runs past its
    /// death, which is what the watchdog vouches for.
    pub(crate) fn watchdog_fires(&mut self, idx: usize) {
        if !self.watchdogs {
            return;
        }
        let Some(armed) = self.nodes[idx].armed.take() else { return };
        if armed.disarm_at.is_some_and(|t| t < self.now) {
            return;
        }
        let id = self.nodes[idx].id.clone();
        if self.rng.chance(self.watchdog_dies_with_node) {
            self.logf(format_args!("{id}'s watchdog dies with it: no notice"));
            return;
        }
        self.checker.on_transfer(armed.term, self.now);
        self.send_notices(&id, armed);
    }

    /// The injected bug "the watchdog sends while its parent lives": node `idx`'s watchdog sends
    /// its armed notices although the node runs on (stalled, say) and its lease with it.
    pub fn watchdog_fires_while_alive(&mut self, idx: usize) {
        if let Some(armed) = self.nodes[idx].armed.clone() {
            let id = self.nodes[idx].id.clone();
            self.logf(format_args!("BUG: {id}'s watchdog sends while {id} lives"));
            self.send_notices(&id, armed);
        }
    }

    fn send_notices(&mut self, id: &str, armed: Armed) {
        self.logf(format_args!(
            "{id}'s WATCHDOG sends {} death notice(s) of term {}{}",
            armed.notices.len(),
            armed.term,
            if armed.disarm_at.is_some() { " (the leadership already ended)" } else { "" }
        ));
        for (to, bytes) in armed.notices {
            // It learns of the death from its process handle (pidfd) and sends at once.
            let delay = self.rng.range(0, 2);
            self.sent_notices.push((id.to_string(), to.clone(), bytes.clone()));
            self.send_after(delay, false, id, to, bytes);
        }
    }

    /// The gate: `from` addresses `to` a message of a kind newer than the oldest wire version
    /// (`kind`, not a `Hello`). A violation when the run of `to` that `from` last heard from speaks
    /// only the oldest version: `from`'s core knew, and sent it anyway.
    pub(crate) fn gate(&mut self, from: &str, to: &str, kind: &str) {
        let heard = self.heard_runs.get(&(from.to_string(), to.to_string()));
        if heard.is_some_and(|inc| self.old_runs.contains(inc)) {
            self.fail(
                "gate",
                format!("{from} sent a {kind} (wire version 4) to {to}, whose run it heard speaks only version 3"),
            );
        }
    }
}
