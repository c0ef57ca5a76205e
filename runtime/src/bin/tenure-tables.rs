//! `tenure-tables [--check] [ROOT]`: writes the tables the Python and Node.js packages need
//! (`python/tenure/_tables.py`, `node/lib/tables.js`, `node/tables.d.ts`) from the Rust
//! definitions (`tenure_runtime::vocabulary`), under ROOT (default: the current directory).
//! `--check` writes nothing and exits 1 naming every stale file. `--json` prints the tables.

use std::path::PathBuf;
use std::process::ExitCode;

use tenure_runtime::vocabulary;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--json") {
        println!("{:#}", vocabulary::to_json());
        return ExitCode::SUCCESS;
    }
    let check = args.iter().any(|a| a == "--check");
    let root = args.iter().find(|a| !a.starts_with("--")).map_or_else(|| PathBuf::from("."), PathBuf::from);
    let mut stale = 0;
    for (path, text) in vocabulary::generated_files() {
        let path = root.join(path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == text {
            continue;
        }
        if check {
            eprintln!("tenure-tables: {} is stale (run `make tables`)", path.display());
            stale += 1;
        } else if let Err(e) = std::fs::write(&path, text) {
            eprintln!("tenure-tables: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        } else {
            println!("tenure-tables: wrote {}", path.display());
        }
    }
    if stale > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
