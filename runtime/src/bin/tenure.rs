//! `tenure run --id HOST:PORT --peer HOST:PORT ... --cluster NAME [...]`: one node of the native
//! core over UDP. See `tenure --help` and the `tenure_runtime::cli` docs.

fn main() -> std::process::ExitCode {
    let code = tenure_runtime::cli::main(std::env::args(), tenure_runtime::native);
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}
