//! The one place that names core configuration the simulator depends on (so that a core change
//! is one edit here).

use tenure::Config;

/// ρ: the bound on every clock's rate error, in parts per million (`Config::max_clock_drift_ppm`).
pub fn max_clock_drift_ppm(_config: &Config) -> u32 {
    // TODO(core): `config.max_clock_drift_ppm` once the lead's core lands on main.
    10_000
}

/// Admission of undeclared senders on first message (`Config::admit_unknown_peers`).
pub fn admit_unknown_peers(config: Config, _on: bool) -> Config {
    // TODO(core): `Config { admit_unknown_peers: on, ..config }` once it lands on main.
    config
}
