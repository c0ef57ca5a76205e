//! `tenure-supervise __supervise GRACE_MS -- CMD ARGS...`: the leader-only command's supervisor and
//! nothing else. The Python wheel and the npm platform packages ship it so that `python -m tenure
//! run ... -- CMD` and `npx tenure run ... -- CMD` supervise with a small native process rather
//! than by starting their interpreter a second time (docs/command.md, "The supervisor").

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = tenure_runtime::supervise_main(&args);
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}
