//! [`crate::RuntimeConfig::pod_label`] (`--pod-label KEY`, `pod_label=` in Python): while this
//! node leads, its own pod carries the label `KEY=true` (`false` otherwise), set through the
//! Kubernetes API, so that a Service selecting `KEY: "true"` routes to the leader's pod: the
//! leader Service of deploy/kubernetes (docs/kubernetes.md). Started by `spawn` for every host, it
//! follows the runtime's events and reports through its warnings.
//!
//! One request kind only: a JSON merge patch of the pod's own labels
//! (`PATCH /api/v1/namespaces/NS/pods/POD_NAME`), with the service-account token and CA from a
//! directory (`service_account`, `--service-account DIR`; by default where Kubernetes mounts
//! them). The token is read
//! again for every request, because the kubelet rotates projected tokens. The label is written
//! `false` at start (a restarted container clears what its predecessor left) and on every loss of
//! leadership, and `false` once more before the process exits after a graceful stop. A failed
//! request is retried (backing off to [`MAX_RETRY`]) until the latest wanted value is written;
//! only the latest value is ever sent. Routing follows leadership with the API's latency: fencing
//! stays the term's job, never the label's.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::RuntimeEvent;

/// Where Kubernetes mounts a service account's `token`, `ca.crt` and `namespace`.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The longest wait between retries of a failed request.
pub const MAX_RETRY: Duration = Duration::from_secs(5);
const FIRST_RETRY: Duration = Duration::from_millis(200);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Everything the requests need, checked at start.
#[derive(Debug, Clone)]
pub struct PodLabelConfig {
    key: String,
    api: String,
    namespace: String,
    pod: String,
    dir: PathBuf,
}

/// Checks a label key as Kubernetes does: an optional DNS-subdomain prefix and `/`, then a name
/// of at most 63 characters, alphanumeric at both ends, with `-`, `_` and `.` inside.
pub fn check_key(key: &str) -> Result<(), String> {
    let bad = |why: &str| format!("expects a Kubernetes label key, got \"{key}\" ({why})");
    let (prefix, name) = key.rsplit_once('/').map_or((None, key), |(p, n)| (Some(p), n));
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(alnum)
        && name.ends_with(alnum)
        && name.chars().all(|c| alnum(c) || matches!(c, '-' | '_' | '.'));
    if !name_ok {
        return Err(bad("the name must be 1-63 characters [A-Za-z0-9-_.], alphanumeric at both ends"));
    }
    if let Some(p) = prefix {
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && l.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && l.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        };
        if p.len() > 253 || !p.split('.').all(label_ok) {
            return Err(bad("the prefix must be a lower-case DNS subdomain"));
        }
    }
    Ok(())
}

impl PodLabelConfig {
    /// From the environment a pod gives its containers: `KUBERNETES_SERVICE_HOST` and
    /// `KUBERNETES_SERVICE_PORT` (the API server), `POD_NAME` and `POD_NAMESPACE` (the downward
    /// API; the namespace may come from `DIR/namespace` instead). The token and CA must be readable.
    pub fn from_env(
        key: &str,
        dir: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<PodLabelConfig, String> {
        check_key(key)?;
        let dir = dir.map_or_else(|| PathBuf::from(DEFAULT_SERVICE_ACCOUNT), Path::to_path_buf);
        let need = |name: &str, why: &str| {
            env(name).filter(|v| !v.trim().is_empty()).ok_or_else(|| format!("needs {name} ({why})"))
        };
        let host = need("KUBERNETES_SERVICE_HOST", "set by Kubernetes in every container")?;
        let port = need("KUBERNETES_SERVICE_PORT", "set by Kubernetes in every container")?;
        let pod = need("POD_NAME", "the downward API's metadata.name")?;
        let namespace = match env("POD_NAMESPACE").filter(|v| !v.trim().is_empty()) {
            Some(ns) => ns,
            None => std::fs::read_to_string(dir.join("namespace"))
                .map(|s| s.trim().to_string())
                .map_err(|e| format!("needs POD_NAMESPACE or {}: {e}", dir.join("namespace").display()))?,
        };
        let host = if host.contains(':') { format!("[{host}]") } else { host };
        for f in ["token", "ca.crt"] {
            std::fs::metadata(dir.join(f)).map_err(|e| format!("cannot read {}: {e}", dir.join(f).display()))?;
        }
        Ok(PodLabelConfig { key: key.to_string(), api: format!("https://{host}:{port}"), namespace, pod, dir })
    }

    fn url(&self) -> String {
        format!("{}/api/v1/namespaces/{}/pods/{}", self.api, self.namespace, self.pod)
    }
}

fn read(dir: &Path, file: &str) -> Result<Vec<u8>, String> {
    std::fs::read(dir.join(file)).map_err(|e| format!("cannot read {}: {e}", dir.join(file).display()))
}

/// One merge patch of the pod's label to `value`.
fn patch(c: &PodLabelConfig, value: bool) -> Result<(), String> {
    let pem = read(&c.dir, "ca.crt")?;
    let roots: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(cert)) => Some(cert),
            _ => None,
        })
        .collect();
    if roots.is_empty() {
        return Err(format!("no certificate in {}", c.dir.join("ca.crt").display()));
    }
    let token = String::from_utf8(read(&c.dir, "token")?).map_err(|_| "the token is not UTF-8".to_string())?;
    let tls = ureq::tls::TlsConfig::builder().root_certs(ureq::tls::RootCerts::new_with_certs(&roots)).build();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .tls_config(tls)
        .https_only(true)
        .proxy(None)
        .timeout_global(Some(REQUEST_TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into();
    let body = serde_json::json!({"metadata": {"labels": {c.key.as_str(): if value { "true" } else { "false" }}}});
    let mut response = agent
        .patch(c.url())
        .header("Authorization", format!("Bearer {}", token.trim()))
        .header("Content-Type", "application/merge-patch+json")
        .header("Accept", "application/json")
        .send(body.to_string())
        .map_err(|e| format!("PATCH {}: {e}", c.url()))?;
    if response.status().is_success() {
        return Ok(());
    }
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    let reason = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_string))
        .unwrap_or_else(|| text.chars().take(200).collect());
    Err(format!("PATCH {}: status {status}: {reason}", c.url()))
}

enum Msg {
    Leading(bool),
    Finish,
}

/// What the thread has been asked for: the latest value, and whether (until when) to finish.
struct Wish {
    wanted: bool,
    finish_by: Option<Instant>,
}

impl Wish {
    fn take(&mut self, msg: Option<Msg>) {
        match msg {
            Some(Msg::Leading(l)) => self.wanted = l,
            // Finishing, or every sender gone: clear the label, then end.
            Some(Msg::Finish) | None => {
                self.wanted = false;
                self.finish_by.get_or_insert_with(|| Instant::now() + MAX_RETRY);
            }
        }
    }
}

/// The labelling thread and its queue.
pub(crate) struct PodLabel {
    tx: mpsc::Sender<Msg>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl PodLabel {
    /// Starts the thread; the first request writes `false`. `warn(code, message)` reports a failed
    /// request once per run of failures, and the first success after them.
    pub(crate) fn start(
        config: PodLabelConfig,
        warn: impl Fn(&str, &str) + Send + 'static,
    ) -> std::io::Result<Arc<PodLabel>> {
        let (tx, rx) = mpsc::channel::<Msg>();
        let thread = std::thread::Builder::new().name("tenure-pod-label".into()).spawn(move || {
            let mut wish = Wish { wanted: false, finish_by: None };
            let mut written = None::<bool>;
            let (mut retry, mut failing) = (FIRST_RETRY, false);
            loop {
                if written == Some(wish.wanted) {
                    if wish.finish_by.is_some() {
                        return;
                    }
                    wish.take(rx.recv().ok());
                }
                while let Ok(m) = rx.try_recv() {
                    wish.take(Some(m)); // only the latest wish is written
                }
                if written == Some(wish.wanted) {
                    continue;
                }
                let value = wish.wanted;
                match patch(&config, value) {
                    Ok(()) => {
                        written = Some(value);
                        retry = FIRST_RETRY;
                        if std::mem::take(&mut failing) {
                            warn(
                                "pod_label_recovered",
                                &format!("{}={value} written on pod {}", config.key, config.pod),
                            );
                        }
                    }
                    Err(e) => {
                        if !std::mem::replace(&mut failing, true) {
                            warn(
                                "pod_label_failed",
                                &format!("cannot set {}={value} on pod {}: {e}", config.key, config.pod),
                            );
                        }
                        if wish.finish_by.is_some_and(|deadline| Instant::now() >= deadline) {
                            return;
                        }
                        match rx.recv_timeout(retry) {
                            Ok(m) => wish.take(Some(m)),
                            Err(RecvTimeoutError::Disconnected) => {
                                wish.take(None);
                                std::thread::sleep(retry);
                            }
                            Err(RecvTimeoutError::Timeout) => {}
                        }
                        retry = (retry * 2).min(MAX_RETRY);
                    }
                }
            }
        })?;
        Ok(Arc::new(PodLabel { tx, thread: Mutex::new(Some(thread)) }))
    }

    /// Follows the runtime's events: `leader` sets the label, `follower` and `stopped` clear it.
    pub(crate) fn on_event(&self, event: &RuntimeEvent) {
        let leading = match event {
            RuntimeEvent::Leader { .. } => true,
            RuntimeEvent::Follower { .. } | RuntimeEvent::Stopped { .. } => false,
            _ => return,
        };
        let _ = self.tx.send(Msg::Leading(leading));
    }

    /// Clears the label and waits for that request (at most [`MAX_RETRY`] of retries).
    pub(crate) fn finish(&self) {
        let _ = self.tx.send(Msg::Finish);
        if let Some(t) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_keys_as_kubernetes_checks_them() {
        for good in ["tenure/leader", "leader", "example.com/is-leader", "a.b-c/x_y.z"] {
            assert_eq!(check_key(good), Ok(()), "{good}");
        }
        for bad in ["", "/leader", "Tenure/leader", "tenure/", "tenure/-x", "a/b/c", "x y", &"n".repeat(64)] {
            let e = check_key(bad).unwrap_err();
            assert!(e.contains(&format!("\"{bad}\"")), "{e}");
        }
    }

    #[test]
    fn the_environment_must_name_the_api_and_the_pod() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "t").unwrap();
        std::fs::write(dir.path().join("ca.crt"), "c").unwrap();
        std::fs::write(dir.path().join("namespace"), "ns1\n").unwrap();
        let d = Some(dir.path());
        let env = |missing: &'static str| {
            move |name: &str| {
                (name != missing).then(|| match name {
                    "KUBERNETES_SERVICE_HOST" => "fd00::1".to_string(),
                    "KUBERNETES_SERVICE_PORT" => "443".into(),
                    "POD_NAME" => "tenure-1".into(),
                    _ => String::new(),
                })
            }
        };
        let c = PodLabelConfig::from_env("tenure/leader", d, env("")).unwrap();
        assert_eq!(c.url(), "https://[fd00::1]:443/api/v1/namespaces/ns1/pods/tenure-1");
        for missing in ["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAME"] {
            let e = PodLabelConfig::from_env("tenure/leader", d, env(missing)).unwrap_err();
            assert!(e.contains(missing), "{e}");
        }
        std::fs::remove_file(dir.path().join("token")).unwrap();
        let e = PodLabelConfig::from_env("tenure/leader", d, env("")).unwrap_err();
        assert!(e.contains("token"), "{e}");
    }
}
