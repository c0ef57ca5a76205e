//! Unix: SIGTERM and SIGINT, through signal-hook's iterator (its own thread-safe self-pipe).

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// SIGTERM and SIGINT, registered.
pub(crate) struct StopSignals(Signals);

impl StopSignals {
    pub(crate) const NAMES: &'static str = "SIGTERM/SIGINT";

    pub(crate) fn new() -> std::io::Result<StopSignals> {
        Signals::new([SIGTERM, SIGINT]).map(StopSignals)
    }

    pub(crate) fn forever(&mut self) -> impl Iterator<Item = ()> + '_ {
        self.0.forever().map(drop)
    }
}
