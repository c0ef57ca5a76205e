"""deploy/kubernetes/python-app/app.py: its settings come from the StatefulSet's environment."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest
from manifests import KUBERNETES, Pod, one, render

pytest.importorskip("tenure._native", reason="the tenure extension is not built (make python-dev)")


def load_app() -> ModuleType:
    spec = importlib.util.spec_from_file_location("k8s_app", KUBERNETES / "python-app" / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["k8s_app"] = module
    spec.loader.exec_module(module)
    return module


def test_settings_from_the_manifests_environment() -> None:
    app = load_app()
    sts = one(render(KUBERNETES / "python-app"), "StatefulSet")
    assert sts is not None
    pod = Pod(sts, 1, "shop")
    s = app.settings_from_env(pod.env)
    # Relative names: the pod's DNS search path adds the namespace and the cluster's domain.
    assert s.id == "tenure-py-1.tenure-py:7946"
    assert s.peers == [f"tenure-py-{i}.tenure-py:7946" for i in range(3)]
    assert (s.cluster, s.state_file, s.http) == ("tenure-py", "/var/lib/tenure/state.json", "0.0.0.0:8080")
    assert s.pod_label == "tenure/leader"
    elector = app.make_elector(s)  # every value accepted (not started: nothing is bound)
    assert elector.id == s.id and not elector.running


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TENURE_PEERS": "a:1", "TENURE_CLUSTER": "c"}, "TENURE_ID is not set"),
        ({"TENURE_ID": "a:1", "TENURE_CLUSTER": "c"}, "TENURE_PEERS is not set"),
        ({"TENURE_ID": "a:1", "TENURE_PEERS": "b:1"}, "TENURE_CLUSTER is not set"),
    ],
)
def test_a_missing_or_bad_variable_is_named(env: dict[str, str], message: str) -> None:
    app = load_app()
    with pytest.raises(ValueError, match=message):
        app.settings_from_env(env)


@pytest.mark.parametrize("http", ["0.0.0.0:http", "0.0.0.0:70000", "localhost"])
def test_a_bad_http_address_is_a_typed_error_naming_it(http: str) -> None:
    import tenure

    app = load_app()
    env = {"TENURE_ID": "a.test:7946", "TENURE_PEERS": "b.test:7946,c.test:7946", "TENURE_CLUSTER": "c"}
    settings = app.settings_from_env({**env, "TENURE_HTTP": http})
    with pytest.raises(tenure.TenureError, match=http):
        app.make_elector(settings)
