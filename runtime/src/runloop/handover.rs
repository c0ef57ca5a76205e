//! A leadership transfer the engine decided on its own (a preemption) while the application's
//! leader-only work still runs.
//!
//! The engine steps down and emits the transfer's `TimeoutNow` in one step; the member it names
//! campaigns at once and the voters grant it inside the promise they made to this node, so it can
//! lead a round trip later. A transfer the application asks for stops its leader work first
//! (`transfer` on the command line holds the command until it is gone); a preemption cannot ask,
//! so the `TimeoutNow` waits here instead, until [`crate::Handler::leader_work_running`] and
//! [`crate::Handle::set_leader_work_running`] say the work is gone (the second also holds a
//! transfer asked for while in-process work still runs: a library's leader task is cancelled by
//! the step-down itself). Nothing else waits: while it is held this node is already a follower, and if the
//! work outlives the promise the voters made (the command is killed at that lease deadline at the
//! latest) an ordinary election elects the next leader, which the held transfer then no longer
//! serves.

use std::sync::atomic::Ordering;

use tenure::wire::{decode, Auth, Message};
use tenure::Role;

use super::Loop;
use crate::{Engine, Handler};

/// How often a held transfer looks again whether the work has gone (the handler's answer
/// changes on another thread, which does not wake the loop).
const RECHECK_MS: u64 = 2;

/// Test hook (documented in `docs/command.md`): `TENURE_TEST_NO_TRANSFER_HOLD=1` sends a
/// preemption's transfer at once, so the overlap test can show that its check catches that.
fn hold_disabled() -> bool {
    std::env::var_os("TENURE_TEST_NO_TRANSFER_HOLD").is_some_and(|v| v == "1")
}

/// A `TimeoutNow` not sent yet.
pub(crate) struct HeldTransfer {
    to: String,
    bytes: Vec<u8>,
    /// The term this node led, which the target campaigns past.
    term: u64,
    /// When it is sent or dropped at the latest.
    until: u64,
    /// When the handler is asked again.
    next: u64,
}

impl<E: Engine, H: Handler> Loop<E, H> {
    /// The handler's leader work (the command), or the application's in-process work
    /// ([`crate::Handle::set_leader_work_running`]).
    fn leader_work_running(&self) -> bool {
        self.shared.leader_work.load(Ordering::Acquire) || self.handler.leader_work_running()
    }

    /// Whether the datagram `bytes` to `to`, just drained, is a transfer that must wait for the
    /// leader work: kept, and `true`. Cold: decoded only while this node does not lead and its
    /// work still runs, which is the instant after a step-down.
    pub(super) fn hold_transfer(&mut self, to: &str, bytes: &[u8], now: u64) -> bool {
        if !self.leader_work_running() || self.engine.role() == Role::Leader || hold_disabled() {
            return false;
        }
        let auth = self.report.key.as_deref().map(|key| Auth { key, receiver: to });
        let Ok(envelope) = decode(bytes, auth) else { return false };
        if envelope.message != Message::TimeoutNow {
            return false;
        }
        if self.report.log {
            log::info!(target: "tenure", "{}: handing leadership to {to} once the leader-only work has stopped", self.report.id);
        }
        self.lead.held = Some(HeldTransfer {
            to: to.to_string(),
            bytes: bytes.to_vec(),
            term: envelope.term,
            until: now.saturating_add(self.lead.hold_limit),
            next: now.saturating_add(RECHECK_MS),
        });
        true
    }

    /// When the held transfer is looked at next.
    pub(super) fn held_transfer_deadline(&self) -> Option<u64> {
        self.lead.held.as_ref().map(|h| h.next)
    }

    /// Sends the held transfer once the work is gone, if it still serves: this node follows in
    /// the term it led and knows no leader yet. Dropped otherwise, or when the work outlives the
    /// hold limit (the promise the voters made has lapsed long before; an ordinary election
    /// takes over).
    pub(super) fn serve_held_transfer(&mut self, now: u64) {
        let Some(h) = self.lead.held.as_ref() else { return };
        if now < h.next {
            return;
        }
        let running = self.leader_work_running();
        if let Some(h) = self.lead.held.as_mut().filter(|h| running && now < h.until) {
            h.next = now.saturating_add(RECHECK_MS);
            return;
        }
        let Some(h) = self.lead.held.take() else { return };
        let serves =
            self.engine.role() == Role::Follower && self.engine.term() == h.term && self.engine.leader().is_none();
        if !running && serves {
            self.send(&h.to, &h.bytes);
        } else if running {
            let limit = self.lead.hold_limit;
            self.warn(now, "transfer_dropped", &h.to, || {
                format!(
                    "the leader-only work still ran {limit} ms after this node handed leadership to {}: the transfer is dropped, and the next leader is elected once the promise made to this node lapses",
                    h.to
                )
            });
        }
    }
}
