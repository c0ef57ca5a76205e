//! Windows: no supervisor yet. Its protocol passes descriptors over a Unix socket and signals a
//! process group; the Windows design (the command in a Job Object with
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, held by a supervisor process that enforces the lease
//! deadline) is not built, so `-- CMD` is refused rather than run unsupervised, and so is the
//! death notice (its watchdog is the supervisor).

pub(crate) const LEADER_COMMAND: Result<(), &str> = Err(
    "not supported on Windows yet: nothing here would end the command at the lease deadline if the runtime paused or died",
);
pub(crate) const DEATH_PROOF: Result<(), &str> =
    Err("this OS has no watchdog yet (it is the leader-only command's supervisor): a crash fails over by the lease");
