//! `tenure-wasmtime run --id HOST:PORT --peer HOST:PORT ... --cluster NAME [...]`
//!
//! The shared tenure runtime (`tenure_runtime::cli::main`: the same command line, JSON event
//! lines, stdin control lines, state file, DNS handling and graceful stop as `tenure`, `python -m
//! tenure` and `npx tenure`) driving the node inside the WebAssembly component under wasmtime.
//!
//! The component is the one this crate was built with, or `--component PATH` /
//! `TENURE_COMPONENT` to load another build.

use std::process::ExitCode;

use tenure_component_host::{ComponentEngine, Loader, Queue};
use tenure_runtime::RuntimeError;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().collect();
    let mut component = std::env::var("TENURE_COMPONENT").ok();
    if let Some(i) = args.iter().position(|a| a == "--component") {
        if i + 1 >= args.len() {
            eprintln!("tenure-wasmtime: --component needs a value (see tenure-wasmtime --help)");
            return ExitCode::from(2);
        }
        component = Some(args.remove(i + 1));
        args.remove(i);
    }
    // Compiled only once the command line and the configuration are known to be good.
    let factory = move |init| {
        let loader = match &component {
            Some(path) => Loader::<Queue>::from_file(path),
            None => Loader::built(),
        }
        .map_err(|e| RuntimeError::Engine { message: format!("cannot load the component: {e:#}") })?;
        ComponentEngine::new(&loader, init)
    };
    let code = tenure_runtime::cli::main(args, factory);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
