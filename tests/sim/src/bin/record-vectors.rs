//! Regenerates `tests/vectors/messages.json` and `tests/vectors/invalid.json`.
//!
//! `cargo run -p tenure-sim --bin record-vectors [DIR]` (default: the repository's `tests/vectors`).

use std::path::PathBuf;
use tenure_sim::vectors;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vectors"));
    let messages = vectors::messages();
    let invalid = vectors::invalid();
    vectors::check(&messages, &invalid).unwrap_or_else(|e| panic!("vectors do not check: {e}"));
    for (name, text) in
        [("messages.json", vectors::to_file_text(&messages)), ("invalid.json", vectors::to_file_text(&invalid))]
    {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
    println!("wrote {} message vectors and {} invalid vectors to {}", messages.len(), invalid.len(), dir.display());
}
