//! What the command line runs beside the node when it is a deployment's sidecar:
//! `--app-health URL` (a leader whose application stops answering steps down). It only observes
//! the runtime and reports through [`crate::Handle`]: what to do about a failed leadership stays
//! the runtime's policy. (`--pod-label KEY` is the runtime's own `pod_label`, for every host.)

pub mod app_health;

use std::sync::Arc;
use std::time::Duration;

use crate::cli::RunOptions;
use crate::Handle;

type Warn = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// The helpers a `run` command line asked for.
pub(crate) struct Sidecar {
    app_health: Option<(app_health::HealthUrl, Duration)>,
    warn: Warn,
}

impl Sidecar {
    /// Checks the options. `Err`: a usage error (exit status 2).
    pub(crate) fn new(o: &RunOptions, warn: impl Fn(&str, &str) + Send + Sync + 'static) -> Result<Sidecar, String> {
        let warn: Warn = Arc::new(warn);
        let app_health = match &o.app_health {
            Some(url) => {
                let interval = o.app_health_interval.map_or(app_health::DEFAULT_INTERVAL, Duration::from_millis);
                Some((app_health::parse_url(url)?, interval))
            }
            None => None,
        };
        Ok(Sidecar { app_health, warn })
    }

    /// Starts what needs the running node.
    pub(crate) fn start(&self, handle: &Handle) {
        if let Some((url, interval)) = &self.app_health {
            let w = self.warn.clone();
            if let Err(e) = app_health::start(handle.clone(), url.clone(), *interval, move |c, m| w(c, m)) {
                (self.warn)("app_health_failed", &format!("cannot start the health checks: {e}"));
            }
        }
    }
}
