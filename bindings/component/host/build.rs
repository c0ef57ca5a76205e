//! Builds the tenure component that the tests, the bench and `tenure-wasmtime` load, so that a
//! plain `cargo test` works from a fresh clone (after `make setup`, which installs the
//! `wasm32-unknown-unknown` target and `wasm-tools`).
//!
//! The guest is compiled by a nested cargo into its own target directory
//! (`<target>/component-guest`, shared with `make component`) so that it does not wait on the
//! lock of the outer build, then turned into a component with `wasm-tools component new` and
//! validated. Set `TENURE_COMPONENT_WASM=/path/to/tenure.wasm` to use a prebuilt component instead.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=TENURE_COMPONENT_WASM");
    if let Some(path) = env::var_os("TENURE_COMPONENT_WASM") {
        println!("cargo:rustc-env=TENURE_COMPONENT_WASM={}", PathBuf::from(path).display());
        return;
    }
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest_dir.join("../../..");
    let root = root.canonicalize().unwrap_or(root);
    for input in ["wit", "core/src", "core/Cargo.toml", "bindings/component/src", "bindings/component/Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    let target_dir = env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let target_dir = if target_dir.is_absolute() { target_dir } else { root.join(target_dir) };
    let guest_dir = target_dir.join("component-guest");

    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&root)
        .args(["build", "-p", "tenure-component", "--target", "wasm32-unknown-unknown", "--profile", "wasm-release"])
        .arg("--target-dir")
        .arg(&guest_dir);
    // Flags meant for this build (clippy's wrapper, host RUSTFLAGS) must not leak into the guest.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        build.env_remove(var);
    }
    run(&mut build, "building the guest (is `rustup target add wasm32-unknown-unknown` done? `make setup` does it)");

    let core_wasm = guest_dir.join("wasm32-unknown-unknown/wasm-release/tenure_component.wasm");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("tenure.wasm");
    let wasm_tools = find_wasm_tools(&root);
    let bare = out.with_extension("bare.wasm");
    run(
        Command::new(&wasm_tools).args(["component", "new"]).arg(&core_wasm).arg("-o").arg(&bare),
        "wasm-tools component new",
    );
    // Name and version in the component's custom sections (`wasm-tools metadata show`), the same
    // as `make component` writes: this crate's version is the workspace's.
    run(
        Command::new(&wasm_tools)
            .args(["metadata", "add", "--name", "tenure", "--version", env!("CARGO_PKG_VERSION")])
            .args(["--licenses", env!("CARGO_PKG_LICENSE"), "--description", COMPONENT_DESCRIPTION])
            .arg(&bare)
            .arg("-o")
            .arg(&out),
        "wasm-tools metadata add",
    );
    run(Command::new(&wasm_tools).arg("validate").arg(&out), "wasm-tools validate");
    println!("cargo:rustc-env=TENURE_COMPONENT_WASM={}", out.display());
}

/// The description `make component` and `make dist` (scripts/dist/build.py) write too.
const COMPONENT_DESCRIPTION: &str = "tenure: leader election (the tenure:election WIT world)";

fn find_wasm_tools(root: &Path) -> PathBuf {
    let venv = root.join(".venv/bin/wasm-tools");
    if venv.exists() {
        return venv;
    }
    PathBuf::from("wasm-tools")
}

fn run(cmd: &mut Command, what: &str) {
    match cmd.status() {
        Ok(status) if status.success() => {}
        Ok(status) => panic!("{what} failed ({status}): {cmd:?}"),
        Err(e) => panic!("{what}: cannot run {cmd:?}: {e} (run `make setup` to install wasm-tools)"),
    }
}
