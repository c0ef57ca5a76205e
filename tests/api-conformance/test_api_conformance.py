"""API conformance across hosts: one library-level story (story.md) driven through the Python
``Elector`` and ``SyncElector``, the Node.js ``Elector`` and the runtime's Rust API driving the
WebAssembly component engine. Each driver prints the story's normalised records (events, lease
states, error codes, defaults); every host's list must equal every other's, and a host that
renames one code or changes one default is exactly one difference."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
RUST_STORY = TARGET / "debug" / "examples" / "api_story"

Records = list[Any]

HOSTS: dict[str, list[str]] = {
    "rust+component": [str(RUST_STORY)],
    "python Elector": [sys.executable, str(HERE / "story_python.py"), "async"],
    "python SyncElector": [sys.executable, str(HERE / "story_python.py"), "sync"],
    "node Elector": ["node", str(HERE / "story_node.js")],
}

# Records whose outcome is the leader-work failure policy: the hosts used to decide it each in
# their own way; they must agree once the policy is the runtime's alone (see `test_leader_work`).
POLICY_RECORDS = ("work", "warned", "always_fails")


@cache
def run(host: str) -> str:
    cmd = HOSTS[host]
    if host == "rust+component" and not RUST_STORY.exists():
        pytest.skip(f"{RUST_STORY} not built (cargo build -p tenure-component-host --example api_story)")
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert p.returncode == 0, f"{host}: exit {p.returncode}\n{p.stderr[-4000:]}"
    return p.stdout.strip().splitlines()[-1]


def records(host: str) -> Records:
    return list(json.loads(run(host)))


def differences(a: Records, b: Records) -> list[str]:
    """Record-by-record differences (a record is compared as a whole; a missing or extra record
    is one difference)."""
    out = []
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            out.append(f"record {i}: {json.dumps(x)} != {json.dumps(y)}")
    return out


def split(rs: Records) -> tuple[Records, Records]:
    return [r for r in rs if r[0] not in POLICY_RECORDS], [r for r in rs if r[0] in POLICY_RECORDS]


REFERENCE = "rust+component"


@pytest.mark.parametrize("host", [h for h in HOSTS if h != REFERENCE])
def test_host_tells_the_story_as_the_runtime_does(host: str) -> None:
    want, _ = split(records(REFERENCE))
    got, _ = split(records(host))
    assert differences(want, got) == [], f"{host} differs from {REFERENCE}"


@pytest.mark.parametrize("host", [h for h in HOSTS if h != REFERENCE])
def test_leader_work(host: str) -> None:
    _, want = split(records(REFERENCE))
    _, got = split(records(host))
    assert differences(want, got) == []


def test_the_story_covers_what_it_must() -> None:
    rs = records("python Elector")
    kinds = [r[0] for r in rs]
    assert kinds.count("bad_input") == 5 and all(r[2] for r in rs if r[0] == "bad_input")
    for k in ("leader_elected", "defaults", "work", "lease", "transfer", "graceful_stop", "always_fails"):
        assert k in kinds, k
    assert ["lease", "before_pause", True] in rs


def _python_host_with(patch: str, mode: str = "async") -> Records:
    """The Python Elector's (or, with mode "sync", SyncElector's) story with `patch` applied to the
    package first: a host that renames one code, changes one default or decides by itself."""
    code = (
        f"import sys, runpy\n{patch}\n"
        f"sys.argv = ['story_python.py', {mode!r}]\n"
        f"runpy.run_path({str(HERE / 'story_python.py')!r}, run_name='__main__')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-4000:]
    return list(json.loads(p.stdout.strip().splitlines()[-1]))


def test_a_renamed_code_is_exactly_one_difference() -> None:
    patch = (
        "import tenure.errors as e\n"
        "real = e.from_code\n"
        "e.from_code = lambda m, c: real(m, 'timeouts_reversed' if c == 'min_above_max' else c)"
    )
    diff = differences(records("python Elector"), _python_host_with(patch))
    assert len(diff) == 1 and "timeouts_reversed" in diff[0], diff


def test_a_changed_default_is_exactly_one_difference() -> None:
    # A host whose own default for an option the caller left out differs from the runtime's.
    patch = (
        "import tenure.runtime as r\n"
        "real = r._options\n"
        "r._options = lambda i, p, o, *a: real(i, p, {'heartbeat_interval': 60, **o}, *a)"
    )
    diff = differences(records("python Elector"), _python_host_with(patch))
    assert len(diff) == 1 and '"heartbeat_interval": 60' in diff[0], diff


def test_a_host_that_decides_about_failed_leader_work_itself_is_a_difference() -> None:
    # A SyncElector that hands leadership over at the first failure of on_leader, as the hosts
    # used to, instead of reporting it to the runtime's failure policy and running it again.
    patch = (
        "import contextlib, tenure._facade as f\n"
        "def at_once(self, kind, fn, args):\n"
        "    if kind == 'leader' and self._rt is not None:\n"
        "        with contextlib.suppress(Exception):\n"
        "            self._rt.transfer(None)\n"
        "f._Facade._callback_failed = at_once"
    )
    _, want = split(records(REFERENCE))
    _, got = split(_python_host_with(patch, "sync"))
    diff = differences(want, got)
    assert len(diff) == 1 and '"same_term", false' in diff[0], diff
