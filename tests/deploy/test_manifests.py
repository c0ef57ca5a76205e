"""deploy/kubernetes validates (schemas and tenure's needs), and the checks catch broken manifests."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from manifests import (
    KUBERNETES,
    VARIANTS,
    check,
    kind_name,
    kubectl,
    render,
    schema_errors,
    tenure_problems,
)

Doc = dict[str, Any]


@pytest.fixture(scope="module", params=VARIANTS)
def rendered(request: pytest.FixtureRequest) -> list[Doc]:
    return render(KUBERNETES / request.param)


def test_every_variant_validates_and_fits_tenure(rendered: list[Doc]) -> None:
    kinds = sorted(d["kind"] for d in rendered)
    assert kinds in (
        ["NetworkPolicy", "PodDisruptionBudget", "Service", "Service", "StatefulSet"],
        ["NetworkPolicy", "PodDisruptionBudget", "Role", "RoleBinding", "Service", "Service", "Service",
         "ServiceAccount", "StatefulSet"],
    ), kinds
    for d in rendered:
        assert schema_errors(d) == [], kind_name(d)
    assert tenure_problems(rendered) == []


def test_the_kustomizations_list_every_manifest() -> None:
    """A manifest file that no kustomization.yaml names would never be applied."""
    for v in VARIANTS:
        listed = (KUBERNETES / v / "kustomization.yaml").read_text()
        for f in (KUBERNETES / v).glob("*.yaml"):
            assert f.name == "kustomization.yaml" or f"- {f.name}" in listed, f"{v}/{f.name}"


def sts(docs: list[Doc]) -> Doc:
    return next(d for d in docs if d["kind"] == "StatefulSet")


def headless(docs: list[Doc]) -> Doc:
    return next(d for d in docs if d["kind"] == "Service" and d["spec"].get("clusterIP") == "None")


def tenure_container(docs: list[Doc]) -> Doc:
    spec = sts(docs)["spec"]["template"]["spec"]
    return next(c for c in [*spec.get("initContainers", []), *spec["containers"]] if c["ports"][0]["name"] == "election")


def set_in(d: Doc, path: str, value: Any) -> None:
    keys = path.split(".")
    for k in keys[:-1]:
        d = d[k]
    d[keys[-1]] = value


def drop_in(d: Doc, path: str) -> None:
    keys = path.split(".")
    for k in keys[:-1]:
        d = d[k]
    del d[keys[-1]]


SCHEMA_BREAKS: dict[str, Callable[[list[Doc]], None]] = {
    "replicas as a word": lambda docs: set_in(sts(docs), "spec.replicas", "three"),
    "misspelt field": lambda docs: headless(docs)["spec"].update(publishNotReadyAdresses=True),
    "selector missing": lambda docs: drop_in(sts(docs), "spec.selector"),
    "container port as text": lambda docs: tenure_container(docs)["ports"][0].update(containerPort="7946/udp"),
    "probe period as text": lambda docs: tenure_container(docs)["readinessProbe"].update(periodSeconds="1s"),
    "env var without a name": lambda docs: tenure_container(docs)["env"][0].pop("name"),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", list(SCHEMA_BREAKS))
def test_the_schema_check_fails_on_a_broken_manifest(variant: str, name: str) -> None:
    docs = copy.deepcopy(render(KUBERNETES / variant))
    SCHEMA_BREAKS[name](docs)
    errors = [e for d in docs for e in schema_errors(d)]
    assert errors, f"{name}: the schema check passed a broken manifest"


def rm_publish(docs: list[Doc]) -> None:
    headless(docs)["spec"].pop("publishNotReadyAddresses")


def ordered(docs: list[Doc]) -> None:
    sts(docs)["spec"]["podManagementPolicy"] = "OrderedReady"


def on_delete(docs: list[Doc]) -> None:
    sts(docs)["spec"]["updateStrategy"] = {"type": "OnDelete"}


def wrong_service_name(docs: list[Doc]) -> None:
    sts(docs)["spec"]["serviceName"] = "elsewhere"


def two_peers(docs: list[Doc]) -> None:
    c = tenure_container(docs)
    if "args" in c:
        c["args"] = [a for a in c["args"] if not a.startswith("--peer=") or "-2." not in a]
    else:
        e = next(e for e in c["env"] if e["name"] == "TENURE_PEERS")
        e["value"] = ",".join(p for p in e["value"].split(",") if "-2." not in p)


def four_replicas(docs: list[Doc]) -> None:
    sts(docs)["spec"]["replicas"] = 4


def state_off_volume(docs: list[Doc]) -> None:
    c = tenure_container(docs)
    if "args" in c:
        c["args"] = [("--state-file=/tmp/state.json" if a.startswith("--state-file") else a) for a in c["args"]]
    else:
        next(e for e in c["env"] if e["name"] == "TENURE_STATE_FILE")["value"] = "/tmp/state.json"


def liveness_on_readyz(docs: list[Doc]) -> None:
    tenure_container(docs)["livenessProbe"]["httpGet"]["path"] = "/readyz"


def ready_when_leader(docs: list[Doc]) -> None:
    c = tenure_container(docs)
    c["args"] = [("--ready-when=leader" if a.startswith("--ready-when") else a) for a in c["args"]]


def full_cluster_domain(docs: list[Doc]) -> None:
    c = tenure_container(docs)
    if "args" in c:
        c["args"] = [(a.replace(".tenure:", ".tenure.$(POD_NAMESPACE).svc.cluster.local:")) for a in c["args"]]
    else:
        for e in c["env"]:
            if e["name"] in ("TENURE_ID", "TENURE_PEERS"):
                e["value"] = e["value"].replace(".tenure-py:", ".tenure-py.$(POD_NAMESPACE).svc.cluster.local:")


def automount(docs: list[Doc]) -> None:
    sts(docs)["spec"]["template"]["spec"].pop("automountServiceAccountToken")


def no_scrape_annotations(docs: list[Doc]) -> None:
    sts(docs)["spec"]["template"]["metadata"].pop("annotations")


def budget_of_two(docs: list[Doc]) -> None:
    next(d for d in docs if d["kind"] == "PodDisruptionBudget")["spec"]["maxUnavailable"] = 2


def app(docs: list[Doc]) -> Doc:
    return next(c for c in sts(docs)["spec"]["template"]["spec"]["containers"] if c["name"] == "app")


def token_in_the_app(docs: list[Doc]) -> None:
    app(docs).setdefault("volumeMounts", []).append(
        {"name": "kube-api", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}
    )


def wider_rbac(docs: list[Doc]) -> None:
    role = next(d for d in docs if d["kind"] == "Role")
    role["rules"][0]["verbs"] = ["get", "list", "patch"]


def any_pod_rbac(docs: list[Doc]) -> None:
    next(d for d in docs if d["kind"] == "Role")["rules"][0].pop("resourceNames")


def leader_service_without_label(docs: list[Doc]) -> None:
    svc = next(d for d in docs if d["kind"] == "Service" and "tenure/leader" in d["spec"].get("selector", {}))
    svc["spec"]["selector"].pop("tenure/leader")


def no_pod_label(docs: list[Doc]) -> None:
    c = tenure_container(docs)
    if "args" in c:
        c["args"] = [a for a in c["args"] if not a.startswith("--pod-label")]
    else:
        c["env"] = [e for e in c["env"] if e["name"] != "TENURE_POD_LABEL"]


def leader_service_to_the_election_port(docs: list[Doc]) -> None:
    svc = next(d for d in docs if d["kind"] == "Service" and "tenure/leader" in d["spec"].get("selector", {}))
    svc["spec"]["ports"][0]["targetPort"] = "election"


def no_app_health(docs: list[Doc]) -> None:
    c = tenure_container(docs)
    c["args"] = [a for a in c["args"] if not a.startswith("--app-health")]


def sidecar_as_a_container(docs: list[Doc]) -> None:
    spec = sts(docs)["spec"]["template"]["spec"]
    c = spec.pop("initContainers")[0]
    c.pop("restartPolicy")
    spec["containers"].append(c)


def id_without_service(docs: list[Doc]) -> None:
    """`$(POD_NAME):7946`: a pod's bare name resolves to nothing (the Service's subdomain is missing)."""
    c = tenure_container(docs)
    if "args" in c:
        c["args"] = [(a.replace("$(POD_NAME).tenure:", "$(POD_NAME):") if a.startswith("--id") else a) for a in c["args"]]
    else:
        e = next(e for e in c["env"] if e["name"] == "TENURE_ID")
        e["value"] = e["value"].replace("$(POD_NAME).tenure-py:", "$(POD_NAME):")


def policy_tcp_only(docs: list[Doc]) -> None:
    policy = next(d for d in docs if d["kind"] == "NetworkPolicy")
    policy["spec"]["ingress"][0]["ports"][0]["protocol"] = "TCP"


TENURE_BREAKS: dict[str, Callable[[list[Doc]], None]] = {
    "NetworkPolicy": policy_tcp_only,
    "publishNotReadyAddresses": rm_publish,
    "podManagementPolicy": ordered,
    "updateStrategy": on_delete,
    "serviceName": wrong_service_name,
    "peers": two_peers,
    "members": four_replicas,
    "volumeClaimTemplates": state_off_volume,
    "livenessProbe": liveness_on_readyz,
    "serving": ready_when_leader,
    "cluster domain": full_cluster_domain,
    "automountServiceAccountToken": automount,
    "Prometheus": no_scrape_annotations,
    "PodDisruptionBudget": budget_of_two,
    "stable DNS name": id_without_service,
}


# Both variants' leader Service: the runtime labels the leader's pod (--pod-label, or pod_label in
# app.py), with a least-privilege token.
LEADER_BREAKS: dict[str, Callable[[list[Doc]], None]] = {
    "RBAC (verbs)": wider_rbac,
    "RBAC (any pod)": any_pod_rbac,
    "leader Service": leader_service_without_label,
    "leader Service (port)": leader_service_to_the_election_port,
    "pod label": no_pod_label,
}
TENURE_BREAKS.update(LEADER_BREAKS)

# Only the sidecar variant has these (python-app: app.py's readiness is in its code; one container).
SIDECAR_BREAKS: dict[str, Callable[[list[Doc]], None]] = {
    "token only in the tenure container": token_in_the_app,
    "--app-health": no_app_health,
    "native sidecar": sidecar_as_a_container,
}
TENURE_BREAKS.update(SIDECAR_BREAKS)
TENURE_CASES = [
    (v, n) for v in VARIANTS for n in TENURE_BREAKS if v == "sidecar" or n not in (*SIDECAR_BREAKS, "serving")
]


@pytest.mark.parametrize(("variant", "name"), TENURE_CASES)
def test_the_tenure_checks_fail_on_a_schema_valid_mistake(variant: str, name: str) -> None:
    docs = copy.deepcopy(render(KUBERNETES / variant))
    TENURE_BREAKS[name](docs)
    assert [e for d in docs for e in schema_errors(d)] == [], "the mistake should be schema-valid"
    problems = tenure_problems(docs)
    assert problems, f"{name}: the tenure checks passed a broken manifest"
    words = (name.split(" (")[0], "id ", "peers", "state file", "readiness", "RBAC", "token", "Service")
    assert any(word in p for p in problems for word in words), problems


def test_the_command_line_fails_on_a_broken_file(tmp_path: Any) -> None:
    """`python tests/deploy/manifests.py DIR` (what `make test-deploy` prints) exits 1."""
    broken = tmp_path / "sidecar"
    shutil.copytree(KUBERNETES / "sidecar", broken)
    f = broken / "statefulset.yaml"
    f.write_text(f.read_text().replace("replicas: 3", "replicas: three"))
    script = str(KUBERNETES.parents[1] / "tests" / "deploy" / "manifests.py")
    r = subprocess.run([sys.executable, script, str(broken)], capture_output=True, text=True, check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "spec.replicas" in r.stdout
    r = subprocess.run([sys.executable, script, str(KUBERNETES / "sidecar")], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare -n")
def test_validation_needs_no_network() -> None:
    """Rendering and validation in a network namespace with no interface up: nothing is fetched."""
    script = str(KUBERNETES.parents[1] / "tests" / "deploy" / "manifests.py")
    env = {**os.environ, "PATH": f"{os.path.dirname(kubectl())}:{os.environ.get('PATH', '')}"}
    r = subprocess.run(["unshare", "-n", sys.executable, script], capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("checks ok") == len(VARIANTS), r.stdout


def test_check_reports_schema_and_tenure_problems_together() -> None:
    docs, problems = check(KUBERNETES / "sidecar")
    assert problems == [] and len(docs) == 9


def test_the_podmonitor_scrapes_every_variants_metrics_port() -> None:
    """deploy/kubernetes/monitoring (Prometheus Operator; its CRD has no bundled schema): the
    PodMonitor selects each variant's pods and names a port those pods serve /metrics on."""
    [monitor] = render(KUBERNETES / "monitoring")
    assert (monitor["apiVersion"], monitor["kind"]) == ("monitoring.coreos.com/v1", "PodMonitor")
    [expr] = monitor["spec"]["selector"]["matchExpressions"]
    endpoints = {e["port"]: e["path"] for e in monitor["spec"]["podMetricsEndpoints"]}
    for v in VARIANTS:
        template = sts(render(KUBERNETES / v))["spec"]["template"]
        assert expr["operator"] == "In" and template["metadata"]["labels"][expr["key"]] in expr["values"], v
        containers = [*template["spec"].get("initContainers", []), *template["spec"]["containers"]]
        served = [p["name"] for c in containers for p in c.get("ports", []) if p["name"] in endpoints]
        assert served and all(endpoints[p] == "/metrics" for p in served), (v, served)
