//! Windows: the console control events (Ctrl-C, Ctrl-Break, the console closing, log-off,
//! shutdown), through the `ctrlc` crate's `SetConsoleCtrlHandler` handler, which runs on a thread
//! of its own and hands each event here.
//!
//! Windows ends the process as soon as the handler of a close, log-off or shutdown event
//! returns, so those start a graceful stop that may not finish; Ctrl-C and Ctrl-Break (what a
//! service wrapper sends to stop a console program) wait for it.

use std::sync::mpsc;

/// The console control events, registered.
pub(crate) struct StopSignals(mpsc::Receiver<()>);

impl StopSignals {
    pub(crate) const NAMES: &'static str = "Ctrl-C/Ctrl-Break";

    pub(crate) fn new() -> std::io::Result<StopSignals> {
        let (tx, rx) = mpsc::channel();
        ctrlc::try_set_handler(move || {
            let _ = tx.send(());
        })
        .map_err(std::io::Error::other)?;
        Ok(StopSignals(rx))
    }

    pub(crate) fn forever(&mut self) -> impl Iterator<Item = ()> + '_ {
        std::iter::from_fn(|| self.0.recv().ok())
    }
}
