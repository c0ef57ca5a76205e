"""The tables generated from the Rust definitions (``tenure._tables``) drive this package: every
shared exception class exists with the base the table names, every code raises its class, and the
Prometheus collector describes exactly the runtime's metric families with the runtime's help."""

from __future__ import annotations

import tenure
from tenure import _tables, errors
from tenure.prometheus import TenureCollector


def test_every_shared_class_exists_with_its_base() -> None:
    for name, base in _tables.ERROR_CLASSES:
        cls = getattr(errors, name)
        assert getattr(tenure, name) is cls, f"tenure.{name} is not exported"
        if base:
            assert issubclass(cls, getattr(errors, base)), f"{name} does not derive from {base}"


def test_every_code_raises_the_class_the_table_names() -> None:
    for code, (_kind, class_name) in _tables.ERROR_CODES.items():
        e = errors.from_code("m", code)
        assert type(e).__name__ == class_name, code
        assert e.code == code and str(e) == "m"
    # Unknown codes still become a typed error.
    assert type(errors.from_code("m", "something_new")) is errors.RuntimeFailure
    # The cases that used to differ between Python and Node.js.
    assert isinstance(errors.from_code("m", "invalid_id"), errors.InvalidAddressError)
    assert isinstance(errors.from_code("m", "invalid_id"), errors.ConfigError)
    assert type(errors.from_code("m", "io")) is errors.RuntimeFailure


def test_the_collector_describes_the_runtime_families() -> None:
    described = [(m.name, m.documentation) for m in TenureCollector(_Never(), registry=None).describe()]
    assert described == [(name, doc) for name, _, doc, _ in _tables.METRIC_FAMILIES]


def test_config_defaults_are_the_cores() -> None:
    c = tenure.Config(id="a", cluster="b")
    v = c.validate()
    assert (c.heartbeat_interval, c.ghost_ttl, c.min_cluster_size) == (
        _tables.DEFAULTS["heartbeat_interval"],
        _tables.DEFAULTS["ghost_ttl"],
        _tables.DEFAULTS["min_cluster_size"],
    )
    assert (v.lease_span, v.lease_duration, v.election_timeout_min, v.election_timeout_max) == (
        _tables.DEFAULT_LEASE_SPAN,
        _tables.DEFAULT_LEASE_DURATION,
        _tables.DEFAULT_ELECTION_TIMEOUT_MIN,
        _tables.DEFAULT_ELECTION_TIMEOUT_MAX,
    )


class _Never:
    def metrics(self) -> dict[str, object]:
        raise errors.StoppedError("not started")


def test_every_core_option_is_an_elector_option_and_reaches_the_config() -> None:
    from tenure._facade import ElectorOptions, _options

    assert set(_tables.CONFIG_OPTIONS) <= set(ElectorOptions.__annotations__)
    # Each one reaches the core's configuration (not silently dropped on the way).
    given = {"max_peers": 17, "admit_unknown_peers": True, "max_clock_drift_ppm": 2000, "incarnation": 9}
    checked = _options("127.0.0.1:7101", ["127.0.0.1:7102", "127.0.0.1:7103"], {"cluster": "c", **given})  # type: ignore[typeddict-item]
    assert {k: getattr(checked.config, k) for k in given} == given
