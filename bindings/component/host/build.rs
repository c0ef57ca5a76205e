//! Builds the tenure component that the tests, the bench and `tenure-wasmtime` load, so that a
//! plain `cargo test` works from a fresh clone (after `make setup`, which installs the
//! `wasm32-unknown-unknown` target, `wasm-tools` and wasm-opt).
//!
//! It runs `bindings/component/build.sh`, the pipeline `make component` runs too: a nested cargo
//! compiles the guest into its own target directory (`<target>/component-guest`, shared with
//! `make component`) so that it does not wait on the lock of the outer build, then wasm-opt shrinks
//! it and `wasm-tools` makes, strips, labels and validates the component.
//! Set `TENURE_COMPONENT_WASM=/path/to/tenure.wasm` to use a prebuilt component instead.

use std::env;
use std::path::PathBuf;
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
    for input in [
        "wit",
        "core/src",
        "core/Cargo.toml",
        "bindings/component/src",
        "bindings/component/Cargo.toml",
        "bindings/component/build.sh",
        "bindings/component/js/package-lock.json",
        "Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    let target_dir = env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let target_dir = if target_dir.is_absolute() { target_dir } else { root.join(target_dir) };
    let guest_dir = target_dir.join("component-guest");

    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("tenure.wasm");
    let mut build = Command::new("bash");
    build
        .current_dir(&root)
        .arg(root.join("bindings/component/build.sh"))
        .arg(&out)
        .env("TENURE_GUEST_TARGET_DIR", &guest_dir);
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
    run(&mut build, "bindings/component/build.sh (`make setup` installs the wasm32 target, wasm-tools and wasm-opt)");
    println!("cargo:rustc-env=TENURE_COMPONENT_WASM={}", out.display());
}

fn run(cmd: &mut Command, what: &str) {
    match cmd.status() {
        Ok(status) if status.success() => {}
        Ok(status) => panic!("{what} failed ({status}): {cmd:?}"),
        Err(e) => panic!("{what}: cannot run {cmd:?}: {e} (run `make setup`)"),
    }
}
