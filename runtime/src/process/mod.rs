//! The leader-only command of the command line (`tenure run ... -- CMD ARGS...`) as processes:
//! the runtime's side ([`command`]), the supervisor process it starts ([`supervisor`]) and its
//! watchdog. What differs between operating systems (the channel to the supervisor, the command's
//! tree, on Linux the guard that leads the command's process group) is in `crate::os::process`.
//! The rules are in `docs/command.md`.
//!
//! Layering: this tree depends on the runtime library (the [`Handle`](crate::Handle), its events
//! and clocks) and the command line depends on it; nothing in the library depends on it, so a
//! library user (Python, Node.js, Rust) who runs no command runs none of this.

pub(crate) mod command;
pub(crate) mod supervisor;
pub(crate) mod watchdog;

/// The supervisor as a program of its own (`src/bin/tenure-supervise.rs`): the supervisor and
/// nothing else, so it maps and touches a fraction of what a runtime does.
pub(crate) const HELPER: &str = "tenure-supervise";

/// The argv prefix the Rust binaries (`tenure`, `tenure-wasmtime`) start their supervisor with:
/// [`HELPER`] in the running executable's directory (cargo builds it there; a release puts it
/// there), else the running executable again. The executable is the resolved one, so a symlink
/// to `tenure` finds the helper beside the real file. Re-executing the runtime works the same but
/// keeps the whole runtime's pages (and, dynamically linked, its C library's) in a process that
/// idles for the node's lifetime: several times the helper's memory (docs/command.md).
pub(crate) fn own_supervisor() -> Vec<String> {
    let exe = std::env::current_exe().ok();
    let helper = exe
        .as_deref()
        .and_then(std::path::Path::parent)
        .map(|dir| dir.join(format!("{HELPER}{}", std::env::consts::EXE_SUFFIX)))
        .filter(|p| is_executable(p));
    let program = helper.or(exe).map_or_else(|| "tenure".into(), |p| p.to_string_lossy().into_owned());
    vec![program]
}

fn is_executable(path: &std::path::Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    #[cfg(unix)]
    return meta.is_file() && std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0;
    #[cfg(not(unix))]
    return meta.is_file();
}
