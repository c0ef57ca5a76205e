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

/// Where to send the health check: `http://HOST[:PORT][/PATH]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthUrl {
    host: String,
    port: u16,
    path: String,
    text: String,
}

/// Checks an `--app-health` value: an `http://` URL (the application beside this process; no TLS).
pub fn parse_url(url: &str) -> Result<HealthUrl, String> {
    let bad = |why: &str| format!("--app-health expects an http:// URL, got \"{url}\" ({why})");
    let rest = url.strip_prefix("http://").ok_or_else(|| bad("the scheme must be http"))?;
    let (authority, path) = rest.find(['/', '?']).map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    let path = if path.starts_with('?') { format!("/{path}") } else { path.to_string() };
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (h, after) = v6.split_once(']').ok_or_else(|| bad("an IPv6 address needs its closing ]"))?;
            (h, after.strip_prefix(':'))
        }
        None => authority.rsplit_once(':').map_or((authority, None), |(h, p)| (h, Some(p))),
    };
    if host.is_empty() || host.contains(['@', ' ']) {
        return Err(bad("no host"));
    }
    let port = match port {
        None => 80,
        Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| bad("the port must be 1-65535"))?,
    };
    if path.contains(char::is_whitespace) {
        return Err(bad("the path has whitespace"));
    }
    Ok(HealthUrl { host: host.to_string(), port, path, text: url.to_string() })
}

/// One health check: `GET PATH HTTP/1.1` and the answer's status line. A few lines of std instead
/// of an HTTP client crate: this runs in every host (the Python wheel and the npm addon include
/// the command line) and needs nothing but a status code from a server on the same host.
fn poll(url: &HealthUrl, timeout: Duration) -> Result<(), String> {
    use std::io::{Read, Write};
    use std::net::{TcpStream, ToSocketAddrs};
    let addr = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", url.host))?
        .next()
        .ok_or_else(|| format!("{} has no address", url.host))?;
    let mut stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let host = if url.host.contains(':') { format!("[{}]", url.host) } else { url.host.clone() };
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {host}:{}\r\nUser-Agent: tenure\r\nConnection: close\r\n\r\n",
        url.path, url.port
    );
    stream.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    // The status line is all we read: `HTTP/1.1 200 OK`.
    let mut head = [0u8; 64];
    let mut got = 0;
    while got < head.len() && !head[..got].contains(&b'\n') {
        match stream.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(e.to_string()),
        }
    }
    let line = String::from_utf8_lossy(&head[..got]);
    let status = line.split_whitespace().nth(1).and_then(|s| s.parse::<u16>().ok());
    match status {
        Some(code) if (200..300).contains(&code) => Ok(()),
        Some(code) => Err(format!("status {code}")),
        None => Err("no HTTP status line in the answer".to_string()),
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
    url: HealthUrl,
    interval: Duration,
    warn: impl Fn(&str, &str) + Send + 'static,
) -> std::io::Result<()> {
    let timeout = interval.clamp(Duration::from_millis(10), Duration::from_secs(2));
    std::thread::Builder::new().name("tenure-app-health".into()).spawn(move || {
        let mut health = Health::default();
        while handle.is_running() {
            let began = Instant::now();
            let answer = poll(&url, timeout);
            match health.answered(answer.is_ok()) {
                Change::BecameUnhealthy => warn(
                    "app_unhealthy",
                    &format!(
                        "the application at {} did not answer {FAILURES} health checks in a row ({}); a leader steps down until it answers",
                        url.text,
                        answer.as_ref().err().map_or("", String::as_str)
                    ),
                ),
                Change::Recovered => warn("app_recovered", &format!("the application at {} answers again", url.text)),
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
        let u = parse_url("http://127.0.0.1:8000/healthz").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.path.as_str()), ("127.0.0.1", 8000, "/healthz"));
        let u = parse_url("http://[::1]:9/ready?x=1").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.path.as_str()), ("::1", 9, "/ready?x=1"));
        let u = parse_url("http://localhost").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.path.as_str()), ("localhost", 80, "/"));
        for bad in [
            "https://127.0.0.1/healthz",
            "127.0.0.1:8000",
            "http:///x",
            "not a url",
            "http://h:0/",
            "http://h:99999/",
            "http://[::1/",
        ] {
            let e = parse_url(bad).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
    }
}
