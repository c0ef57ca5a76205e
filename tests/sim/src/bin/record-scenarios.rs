//! Regenerates `tests/scenarios/*.json` from the scripted simulations in `tenure_sim::record`.
//!
//! `cargo run -p tenure-sim --bin record-scenarios [DIR]` (default: the repository's
//! `tests/scenarios`). Stale `*.json` files in the directory are removed.

use std::path::PathBuf;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios"));
    let scenarios = tenure_sim::record::all();
    let names: Vec<String> = scenarios.iter().map(|s| format!("{}.json", s.name)).collect();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".json") && !names.contains(&name) {
                let _ = std::fs::remove_file(e.path());
                println!("removed stale {name}");
            }
        }
    }
    for s in &scenarios {
        tenure_sim::scenario::replay(s).unwrap_or_else(|e| panic!("recorded scenario does not replay: {e}"));
        let path = dir.join(format!("{}.json", s.name));
        std::fs::write(&path, tenure_sim::scenario::to_file_text(s))
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        println!("{:<40} {:>4} steps", s.name, s.steps.len());
    }
    println!("wrote {} scenarios to {}", scenarios.len(), dir.display());
}
