//! `--app-health URL`: the sidecar polls the application it runs beside, and a leader whose
//! application does not answer steps down, so leadership never stays with a pod that cannot serve.
//!
//! The application is unhealthy after [`FAILURES`] polls in a row that got no 2xx answer (refused,
//! timed out, or another status); one 2xx answer makes it healthy again. While it is unhealthy and
//! this node leads, the leadership is reported failed ([`Handle::leadership_failed`]) once per
//! term: the runtime's failure policy steps the node down and backs off before it campaigns again,
//! so a peer whose application answers takes over. The policy is the runtime's (the same one
//! leader-work failures go through); this module only observes and reports.

use std::time::{Duration, Instant};

use crate::Handle;

/// Polls in a row without a 2xx answer before the application counts as unhealthy (as a
/// Kubernetes probe's default `failureThreshold`).
pub const FAILURES: u32 = 3;
/// The default time between polls (`--app-health-interval`).
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// Checks an `--app-health` value: an `http://` URL (the application beside this process; no TLS).
pub fn parse_url(url: &str) -> Result<String, String> {
    let bad = |why: &str| format!("--app-health expects an http:// URL, got \"{url}\" ({why})");
    let uri: ureq::http::Uri = url.parse().map_err(|_| bad("not a URL"))?;
    if uri.scheme_str() != Some("http") {
        return Err(bad("the scheme must be http"));
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    Ok(url.to_string())
}

/// The outcome of one poll: `Err` says why it failed.
fn poll(agent: &ureq::Agent, url: &str) -> Result<(), String> {
    match agent.get(url).call() {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(format!("status {}", r.status().as_u16())),
        Err(e) => Err(e.to_string()),
    }
}

/// Tracks the answers and decides when to report (pure: the thread feeds it polls).
#[derive(Debug, Default)]
pub(crate) struct Health {
    failures: u32,
    unhealthy: bool,
    failed_term: Option<u64>,
}

/// What a poll changed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Change {
    None,
    BecameUnhealthy,
    Recovered,
}

impl Health {
    pub(crate) fn answered(&mut self, ok: bool) -> Change {
        if ok {
            self.failures = 0;
            return if std::mem::take(&mut self.unhealthy) { Change::Recovered } else { Change::None };
        }
        self.failures = self.failures.saturating_add(1);
        if self.failures >= FAILURES && !self.unhealthy {
            self.unhealthy = true;
            return Change::BecameUnhealthy;
        }
        Change::None
    }

    /// The term whose leadership to report failed now, if any (once per term).
    pub(crate) fn step_down(&mut self, leading_term: Option<u64>) -> Option<u64> {
        let term = leading_term.filter(|_| self.unhealthy)?;
        if self.failed_term == Some(term) {
            return None;
        }
        self.failed_term = Some(term);
        Some(term)
    }
}

/// Starts the polling thread; it ends with the runtime. `warn(code, message)` reports changes.
pub(crate) fn start(
    handle: Handle,
    url: String,
    interval: Duration,
    warn: impl Fn(&str, &str) + Send + 'static,
) -> std::io::Result<()> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(interval.min(Duration::from_secs(2))))
        .proxy(None)
        .http_status_as_error(false)
        .build()
        .into();
    std::thread::Builder::new().name("tenure-app-health".into()).spawn(move || {
        let mut health = Health::default();
        while handle.is_running() {
            let began = Instant::now();
            let answer = poll(&agent, &url);
            match health.answered(answer.is_ok()) {
                Change::BecameUnhealthy => warn(
                    "app_unhealthy",
                    &format!(
                        "the application at {url} did not answer {FAILURES} health checks in a row ({}); a leader steps down until it answers",
                        answer.as_ref().err().map_or("", String::as_str)
                    ),
                ),
                Change::Recovered => warn("app_recovered", &format!("the application at {url} answers again")),
                Change::None => {}
            }
            let leading = handle.is_leader().then(|| handle.term());
            if let Some(term) = health.step_down(leading) {
                if let Err(e) = handle.leadership_failed(term) {
                    warn(e.code(), &e.to_string());
                }
            }
            std::thread::sleep(interval.saturating_sub(began.elapsed()));
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unhealthy_after_failures_in_a_row_and_a_leader_is_reported_once_per_term() {
        let mut h = Health::default();
        assert_eq!(h.answered(false), Change::None);
        assert_eq!(h.answered(false), Change::None);
        assert_eq!(h.step_down(Some(4)), None, "not unhealthy yet");
        assert_eq!(h.answered(true), Change::None, "a success resets the count");
        for _ in 1..FAILURES {
            assert_eq!(h.answered(false), Change::None);
        }
        assert_eq!(h.answered(false), Change::BecameUnhealthy);
        assert_eq!(h.answered(false), Change::None);
        assert_eq!(h.step_down(None), None, "a follower has nothing to hand over");
        assert_eq!(h.step_down(Some(4)), Some(4));
        assert_eq!(h.step_down(Some(4)), None, "once per term");
        assert_eq!(h.step_down(Some(6)), Some(6), "elected again while unhealthy: steps down again");
        assert_eq!(h.answered(true), Change::Recovered);
        assert_eq!(h.step_down(Some(7)), None);
    }

    #[test]
    fn only_http_urls_with_a_host() {
        assert!(parse_url("http://127.0.0.1:8000/healthz").is_ok());
        for bad in ["https://127.0.0.1/healthz", "127.0.0.1:8000", "http:///x", "not a url"] {
            let e = parse_url(bad).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
    }
}
