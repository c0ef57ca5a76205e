//! What the command line runs beside the node when it is a deployment's sidecar:
//! `--app-health URL` (a leader whose application stops answering steps down) and, with the
//! `kubernetes` feature, `--pod-label KEY` (the leader's pod carries `KEY=true`, for a leader
//! Service). Both only observe the runtime and report through [`crate::Handle`]: what to do about a
//! failed leadership stays the runtime's policy.

pub mod app_health;
#[cfg(feature = "kubernetes")]
pub mod pod_label;

use std::sync::Arc;
use std::time::Duration;

use crate::cli::RunOptions;
use crate::{Handle, RuntimeEvent};

type Warn = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// The helpers a `run` command line asked for.
pub(crate) struct Sidecar {
    app_health: Option<(app_health::HealthUrl, Duration)>,
    #[cfg(feature = "kubernetes")]
    label: Option<Arc<pod_label::PodLabel>>,
    warn: Warn,
}

impl Sidecar {
    /// Checks the options against the environment and starts the pod-label thread (it clears the
    /// label at once). `Err`: a usage error (exit status 2).
    pub(crate) fn new(o: &RunOptions, warn: impl Fn(&str, &str) + Send + Sync + 'static) -> Result<Sidecar, String> {
        let warn: Warn = Arc::new(warn);
        let app_health = match &o.app_health {
            Some(url) => {
                let interval = o.app_health_interval.map_or(app_health::DEFAULT_INTERVAL, Duration::from_millis);
                Some((app_health::parse_url(url)?, interval))
            }
            None => None,
        };
        #[cfg(feature = "kubernetes")]
        let label = match &o.pod_label {
            Some(key) => {
                let config =
                    pod_label::PodLabelConfig::from_env(key, o.service_account.as_deref(), |k| std::env::var(k).ok())?;
                let w = warn.clone();
                Some(pod_label::PodLabel::start(config, move |c, m| w(c, m)).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        #[cfg(not(feature = "kubernetes"))]
        if o.pod_label.is_some() {
            return Err("--pod-label needs a tenure built with the kubernetes feature \
                        (cargo build -p tenure-runtime --features kubernetes)"
                .into());
        }
        Ok(Sidecar {
            app_health,
            #[cfg(feature = "kubernetes")]
            label,
            warn,
        })
    }

    /// Every runtime event, as the command line prints it.
    pub(crate) fn on_event(&self, _event: &RuntimeEvent) {
        #[cfg(feature = "kubernetes")]
        if let Some(l) = &self.label {
            l.on_event(_event);
        }
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

    /// After the runtime stopped: the pod label is cleared before the process exits.
    pub(crate) fn finish(&self) {
        #[cfg(feature = "kubernetes")]
        if let Some(l) = &self.label {
            l.finish();
        }
    }
}
