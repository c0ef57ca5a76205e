//! The one place that names the core settings the simulator's clocks and adversaries depend on.

use tenure::Config;

/// ρ: the bound on every clock's rate error, in parts per million (`Config::max_clock_drift_ppm`).
pub fn max_clock_drift_ppm(config: &Config) -> u32 {
    config.max_clock_drift_ppm
}

/// Admission of undeclared senders on first message (`Config::admit_unknown_peers`).
pub fn admit_unknown_peers(config: Config, on: bool) -> Config {
    config.admit_unknown_peers(on)
}

/// The heartbeat interval and the lease promise (`Config::heartbeat_interval`,
/// `Config::lease_duration`), when set.
pub fn timing(config: Config, heartbeat_interval: Option<u64>, lease_duration: Option<u64>) -> Config {
    let config = match heartbeat_interval {
        Some(ms) => config.heartbeat_interval(ms),
        None => config,
    };
    match lease_duration {
        Some(ms) => config.lease_duration(ms),
        None => config,
    }
}

/// The observers a member keeps informed (`Config::observer_peers`); none leaves it unchanged.
pub fn observer_peers(config: Config, observers: &[String]) -> Config {
    if observers.is_empty() {
        config
    } else {
        config.observer_peers(observers.iter().cloned())
    }
}
