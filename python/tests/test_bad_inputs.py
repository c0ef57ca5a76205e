"""The table of bad inputs (``tests/bad_inputs.json``, shared with the Rust and Node.js tests):
``Elector`` refuses each 'config' row at construction and each 'start' row at ``start()``, with
the row's code and a message naming the value; ``python -m tenure`` exits with the row's status
for each 'cli' row, a one-line usage error, no traceback."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

import tenure
from tenure import Elector

TABLE = json.loads((Path(__file__).resolve().parents[2] / "tests" / "bad_inputs.json").read_text())
CASES: List[Dict[str, Any]] = TABLE["cases"]
DEFAULTS: Dict[str, Any] = TABLE["defaults"]


def elector(case: Dict[str, Any]) -> Elector:
    c = dict(case["config"])
    node_id = c.pop("id", DEFAULTS["id"])
    peers = c.pop("peers", DEFAULTS["peers"])
    cluster = c.pop("cluster", DEFAULTS["cluster"])
    return Elector(node_id, peers, cluster=cluster, **c)


@pytest.mark.parametrize("case", [c for c in CASES if c["surface"] == "config"], ids=lambda c: c["name"])
def test_a_bad_value_is_refused_at_construction(case: Dict[str, Any]) -> None:
    with pytest.raises(tenure.TenureError) as e:
        elector(case)
    assert e.value.code == case["code"], e.value
    assert case["message"] in str(e.value)


@pytest.mark.parametrize("case", [c for c in CASES if c["surface"] == "start"], ids=lambda c: c["name"])
def test_one_node_under_two_names_is_refused_at_start(case: Dict[str, Any]) -> None:
    e = elector(case)
    with pytest.raises(tenure.InvalidAddressError) as err:
        asyncio.run(e.start())
    assert err.value.code == case["code"]
    assert case["message"] in str(err.value)


HOST_ERRORS = {"type": TypeError, "range": ValueError}


@pytest.mark.parametrize("case", [c for c in CASES if c["surface"] == "host"], ids=lambda c: c["name"])
def test_a_duration_of_the_wrong_type_or_sign_is_refused_as_nodejs_refuses_it(case: Dict[str, Any]) -> None:
    option, value = case["option"], case["value"]
    with pytest.raises(HOST_ERRORS[case["error"]]) as e:
        if option.startswith("failure_policy."):
            tenure.FailurePolicy(**{option.split(".", 1)[1]: value})
        else:
            elector({"config": {option: value}})
    assert not isinstance(e.value, tenure.TenureError)  # a conversion error, as in Node.js
    assert option.rsplit(".", 1)[-1] in str(e.value), e.value


def arg(s: str) -> bytes:
    return s.replace("<0xff>", "\udcff").encode("utf-8", "surrogateescape")


@pytest.mark.parametrize("case", [c for c in CASES if c["surface"] == "cli"], ids=lambda c: c["name"])
def test_the_command_line_exits_with_the_status(case: Dict[str, Any]) -> None:
    argv = [os.fsencode(sys.executable), b"-m", b"tenure", *map(arg, case["args"])]
    out = subprocess.run(argv, capture_output=True, timeout=30)
    stderr = out.stderr.decode("utf-8", "replace")
    assert out.returncode == case["status"], stderr
    assert case["message"] in stderr
    assert "Traceback" not in stderr and "panicked" not in stderr, stderr
