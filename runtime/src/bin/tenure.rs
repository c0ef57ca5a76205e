//! `tenure run --id HOST:PORT --peer HOST:PORT ... --cluster NAME [...]`: one node of the native
//! core over UDP. See `tenure --help` and the `tenure_runtime::cli` docs.

fn main() -> std::process::ExitCode {
    // Lossily: an argument that is not UTF-8 becomes a usage error (status 2), not a panic.
    let args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
    let code = tenure_runtime::cli::main(args, tenure_runtime::native);
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}
