//! The leader-only command where it cannot be supervised (`crate::os::process::LEADER_COMMAND`
//! is `Err`): the names the command line uses, standing for no command. The command line refuses
//! `-- CMD` and has no watchdog there, so a [`Runner`] is never made; the `__supervise`
//! subcommand says why it cannot run.

use crate::{Handle, Handler, RuntimeEvent};

/// The default `--kill-grace`: milliseconds between the stop request and the kill on an ordered
/// stop.
pub const DEFAULT_KILL_GRACE: u64 = 1000;

/// The hidden subcommand that runs the supervisor.
pub(crate) const SUBCOMMAND: &str = "__supervise";

/// The leader-only command: what to run and how to re-invoke this command line as its
/// supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// `CMD ARGS...`.
    pub argv: Vec<String>,
    /// Milliseconds between the stop request and the kill on an ordered stop.
    pub kill_grace: u64,
    /// The argv prefix that runs this command line again.
    pub reexec: Vec<String>,
}

/// No runner exists here: the type has no value.
#[derive(Clone)]
pub(crate) enum Runner {}

impl Runner {
    /// Never called: the command line refuses `-- CMD` and turns the death notice off where the
    /// command cannot be supervised (`crate::cli::check_platform`), which are the only reasons to
    /// make a runner.
    pub(crate) fn new(_spec: CommandSpec, _id: String, _emit: impl Fn(String) + Send + Sync + 'static) -> Self {
        unreachable!("a runner is made only for -- CMD or the death notice, both refused on this OS")
    }
    pub(crate) fn start(&self, _handle: Handle) {
        match *self {}
    }
    pub(crate) fn hold(&self) {
        match *self {}
    }
    pub(crate) fn shutdown(&self) {
        match *self {}
    }
}

/// The command line's handler: the event printer alone.
pub(crate) struct WithCommand<F> {
    pub(crate) runner: Option<Runner>,
    pub(crate) on_event: F,
}

impl<F: FnMut(RuntimeEvent) + Send + 'static> Handler for WithCommand<F> {
    fn on_event(&mut self, event: RuntimeEvent) {
        if let Some(r) = &self.runner {
            match *r {}
        }
        (self.on_event)(event);
    }
}

/// A voluntary handover: `transfer` alone (no command to stop first).
pub(crate) fn handover<T>(_runner: Option<&Runner>, transfer: impl FnOnce() -> T) -> T {
    transfer()
}

/// The supervisor cannot run here: says why.
pub(crate) fn main(_args: &[String]) -> i32 {
    let why = crate::os::process::LEADER_COMMAND.err().unwrap_or_default();
    eprintln!("{SUBCOMMAND}: the leader-only command's supervisor is {why}");
    2
}
