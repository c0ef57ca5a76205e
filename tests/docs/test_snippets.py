"""Snippets in the docs cannot go stale.

Every fenced block in README.md, python/README.md, node/README.md and docs/*.md carries a marker
comment on the line before it, `<!-- snippet: KIND ... -->`, and this file fails on a block
without one. The kinds:

- `run HARNESS [until "TEXT"]`: extracted and run here (HARNESSES below): `python-cluster` /
  `node-cluster` start three copies on 127.0.0.1 (ids as arguments: `me peer peer`) in a temporary
  directory and wait until one prints TEXT; `python-script` must exit 0; `node-script` must exit 0
  or still be running, without an error, after a few seconds.
- `checked by PATH`: PATH is a test that reads this page (a doctest through `include_str!`, or a
  parser), so PATH must name the page.
- `excerpt of PATH`: a fragment of PATH, which is tested (named by a test or the Makefile, or
  run below).
- `command, not run` / `output, not run` / `diagram, not run`: shell commands (installs, `make`,
  deployments), sample output and formats, and pictures, said explicitly; none is executed.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from docscan import ROOT, Block, all_blocks, blocks

BLOCKS = all_blocks()
KINDS = ("run", "checked by", "excerpt of", "command, not run", "output, not run", "diagram, not run")
# Where a linked example counts as tested when its path is named.
TEST_SOURCES = ["Makefile", "python/tests/*.py", "node/test/*.js", "tests/*/*.py", "bindings/component/tests/*.py"]
CLUSTER_TIMEOUT = 30.0
NODE_SCRIPT_GRACE = 3.0
# Snippets print to a pipe here: unbuffered, so a line is seen before the process is stopped.
ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}
# docs/component.md's host loads the built component from here (as tenure-wasmtime does).
ENV.setdefault("TENURE_COMPONENT", str(ROOT / "target" / "component" / "tenure.wasm"))


def kind(block: Block) -> str:
    assert block.marker is not None
    return next((k for k in KINDS if block.marker.startswith(k)), "")


def _id(b: Block) -> str:
    return f"{b.path}:{b.line}"


def test_every_block_is_run_or_marked() -> None:
    bad = [
        f"{b}: no `<!-- snippet: KIND -->` line before it (kinds: {', '.join(KINDS)}; tests/docs/test_snippets.py)"
        for b in BLOCKS
        if b.marker is None or not kind(b)
    ]
    assert bad == [], "\n".join(bad)


def test_an_unmarked_block_is_caught() -> None:
    page = "Text.\n\n```python\nprint(1)\n```\n\n<!-- snippet: command, not run -->\n```sh\nmake\n```\n"
    found = blocks(page, "x.md")
    assert [(b.line, b.marker) for b in found] == [(3, None), (8, "command, not run")]


def test_the_issues_snippets_are_run() -> None:
    run = {(b.path, b.lang) for b in BLOCKS if b.marker and kind(b) == "run"}
    assert {
        ("README.md", "python"),
        ("README.md", "js"),
        ("python/README.md", "python"),
        ("node/README.md", "js"),
    } <= run


def _tested(target: str) -> bool:
    rel = Path(target)
    names = {target, str(rel.relative_to(*rel.parts[:1])) if len(rel.parts) > 1 else target}
    for pattern in TEST_SOURCES:
        for f in ROOT.glob(pattern):
            text = f.read_text(errors="replace")
            if any(n in text for n in names) or (f"{rel.parent.name}" in text and rel.stem in text):
                return True
    return False


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.marker and kind(b) in ("checked by", "excerpt of")], ids=_id
)
def test_linked_files_exist_and_are_tested(block: Block) -> None:
    assert block.marker is not None
    target = block.marker.split(" of " if kind(block) == "excerpt of" else " by ", 1)[1].split()[0]
    path = ROOT / target
    assert path.is_file(), f"{block}: {target} does not exist"
    if kind(block) == "checked by":
        assert Path(block.path).name in path.read_text(), f"{block}: {target} does not read {block.path}"
    elif not (path.is_relative_to(ROOT / "node/examples") or re.search(r"(^|/)(tests?)/", target)):
        assert _tested(target), f"{block}: {target} is not run by any test"


def test_the_component_wit_listing_is_what_the_built_component_says() -> None:
    """docs/component.md shows `wasm-tools component wit target/component/tenure.wasm`."""
    [block] = [
        b
        for b in BLOCKS
        if b.path == "docs/component.md" and (b.marker or "").startswith("checked by tests/docs/test_snippets.py")
    ]
    wasm = ROOT / "target" / "component" / "tenure.wasm"
    tool = shutil.which("wasm-tools") or str(Path(sys.executable).with_name("wasm-tools"))
    if not wasm.exists() or not Path(tool).exists():
        if os.environ.get("TENURE_DOCS_REQUIRE_ARTEFACTS"):
            pytest.fail("needs target/component/tenure.wasm (make component) and wasm-tools (make setup)")
        pytest.skip("the component or wasm-tools is missing")
    listing = subprocess.run([tool, "component", "wit", str(wasm)], capture_output=True, text=True, check=True)
    assert block.code == listing.stdout, f"{block}: differs from `wasm-tools component wit` of {wasm}"


def test_an_excerpt_of_a_missing_file_is_caught() -> None:
    [b] = blocks("<!-- snippet: excerpt of python/examples/nope.py -->\n```python\nx\n```\n", "x.md")
    with pytest.raises(AssertionError, match="does not exist"):
        test_linked_files_exist_and_are_tested(b)


# ---------------------------------------------------------------------------------------------
# Harnesses
# ---------------------------------------------------------------------------------------------


def free_udp_ports(n: int) -> list[int]:
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def node_project(tmp: Path) -> None:
    """`import 'tenure'` / `require('tenure')` resolve to this checkout's node/ package."""
    (tmp / "node_modules").mkdir()
    (tmp / "node_modules" / "tenure").symlink_to(ROOT / "node", target_is_directory=True)


def stop(procs: list[subprocess.Popen[str]]) -> list[str]:
    """SIGTERM, then SIGKILL; returns each one's stderr."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    errs = []
    for p in procs:
        try:
            _, err = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        errs.append(err or "")
    return errs


def run_cluster(cmd: list[str], cwd: Path, until: str) -> None:
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
    procs = [
        subprocess.Popen(
            [*cmd, me, *[i for i in ids if i != me]],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for me in ids
    ]
    sel = selectors.DefaultSelector()
    for p in procs:
        assert p.stdout is not None
        os.set_blocking(p.stdout.fileno(), False)
        sel.register(p.stdout, selectors.EVENT_READ, p)
    seen: list[str] = []
    deadline = time.monotonic() + CLUSTER_TIMEOUT
    found = False
    try:
        while not found and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=0.2):
                chunk = key.fileobj.read()  # type: ignore[union-attr]
                if chunk:
                    seen.append(chunk)
                    found = found or until in "".join(seen)
            if any(p.poll() not in (None, 0) for p in procs):
                break
    finally:
        sel.close()
        errs = stop(procs)
    assert found, f"no {until!r} within {CLUSTER_TIMEOUT} s; stdout: {''.join(seen)!r}; stderr: {errs!r}"


def run_script(cmd: list[str], cwd: Path, grace: float | None) -> None:
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        out, err = p.communicate(timeout=grace if grace is not None else 60)
    except subprocess.TimeoutExpired:
        if grace is None:
            raise
        [err] = stop([p])  # still running after the grace: a host loop, fine unless it complained
        assert "Error" not in err, err
        return
    assert p.returncode == 0, f"exit {p.returncode}\nstdout: {out}\nstderr: {err}"


SHELL_TIMEOUT = 120.0


def run_shell(block: Block, tmp: Path) -> None:
    """A shell walk-through (`run shell`): `bash -euo pipefail` in `tmp`, with this checkout's
    `tenure` on PATH; in a network namespace of its own (loopback only) when root can make one, so
    its fixed ports cannot meet another test's. Everything it started is killed afterwards."""
    tenure = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "tenure"
    if not tenure.is_file():
        if os.environ.get("TENURE_DOCS_REQUIRE_ARTEFACTS"):
            pytest.fail(f"{block}: needs {tenure} (cargo build -p tenure-runtime --bin tenure)")
        pytest.skip(f"{tenure} is not built")
    script = tmp / "walkthrough.sh"
    script.write_text(block.code)
    cmd = ["bash", "-euo", "pipefail", str(script)]
    if os.geteuid() == 0 and shutil.which("unshare") and shutil.which("ip"):
        cmd = ["unshare", "-n", "bash", "-c", 'ip link set lo up && exec "$@"', "-", *cmd]
    env = {**ENV, "PATH": f"{tenure.parent}:{os.environ.get('PATH', '')}", "TENURE_LOG": "warn"}
    p = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=SHELL_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        pytest.fail(f"{block}: still running after {SHELL_TIMEOUT} s\n{out}")
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    logs = "".join(f"\n--- {f.name}\n{f.read_text()[-3000:]}" for f in sorted(tmp.glob("*.log")))
    assert p.returncode == 0, f"{block}: exit {p.returncode}\n{out}{logs}"


def run_block(block: Block, tmp: Path) -> None:
    assert block.marker is not None
    m = re.fullmatch(r'run (\S+)(?: until "([^"]+)")?', block.marker)
    assert m, f"{block}: bad marker {block.marker!r}"
    harness, until = m.group(1), m.group(2)
    node = shutil.which("node") or "node"
    if harness.startswith("node"):
        node_project(tmp)
    esm = bool(re.search(r"^import ", block.code, re.MULTILINE))
    script = tmp / ("app.py" if harness.startswith("python") else "app.mjs" if esm else "app.cjs")
    script.write_text(block.code)
    interpreter = sys.executable if harness.startswith("python") else node
    if harness in ("python-cluster", "node-cluster"):
        assert until, f"{block}: a cluster needs `until \"TEXT\"`"
        run_cluster([interpreter, script.name], tmp, until)
    elif harness == "python-script":
        run_script([interpreter, script.name], tmp, None)
    elif harness == "node-script":
        run_script([interpreter, script.name], tmp, NODE_SCRIPT_GRACE)
    elif harness == "shell":
        run_shell(block, tmp)
    else:
        pytest.fail(f"{block}: unknown harness {harness!r}")


def node_minimum_major() -> int:
    """The oldest Node.js major version the package supports (`engines.node` in node/package.json)."""
    engines = json.loads((ROOT / "node" / "package.json").read_text())["engines"]["node"]
    m = re.fullmatch(r">=\s*(\d+)(?:\.\d+)*", engines.strip())
    assert m, f"node/package.json engines.node {engines!r}: expected >=N"
    return int(m.group(1))


def node_major(node: str) -> int:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout
    return int(out.strip().lstrip("v").split(".")[0])


JS_BLOCKS = [b for b in BLOCKS if b.lang in ("js", "javascript", "mjs", "cjs")]


@pytest.mark.parametrize("block", JS_BLOCKS, ids=_id)
def test_js_blocks_parse_on_the_oldest_supported_node(block: Block, tmp_path: Path) -> None:
    """Every JavaScript block of the docs, run or not, parses on the Node.js version the package
    says it supports (`await using`, for one, is a syntax error before Node.js 24)."""
    node = shutil.which("node") or "node"
    if node_major(node) != node_minimum_major():
        pytest.skip(f"node on PATH is v{node_major(node)}, the stated minimum is {node_minimum_major()}")
    cjs = "require(" in block.code and not re.search(r"^import ", block.code, re.MULTILINE)
    script = tmp_path / ("block.cjs" if cjs else "block.mjs")
    script.write_text(block.code)
    r = subprocess.run([node, "--check", str(script)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, f"{block}: does not parse on Node.js {node_minimum_major()}:\n{r.stderr}"


def test_await_using_is_caught_on_the_oldest_node(tmp_path: Path) -> None:
    [b] = blocks(
        "<!-- snippet: run node-script -->\n```js\nawait using e = { [Symbol.asyncDispose]: async () => {} }\n```\n",
        "x.md",
    )
    with pytest.raises(AssertionError, match="does not parse"):
        test_js_blocks_parse_on_the_oldest_supported_node(b, tmp_path)


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.marker and kind(b) == "run"], ids=_id)
def test_snippet_runs(block: Block, tmp_path: Path) -> None:
    run_block(block, tmp_path)


def test_a_broken_snippet_fails(tmp_path: Path) -> None:
    [b] = blocks(
        '<!-- snippet: run python-script -->\n```python\nfrom tenure import now_ms\nrun_batch(now_ms())\n```\n',
        "x.md",
    )
    with pytest.raises(AssertionError, match="NameError: name 'run_batch'"):
        run_block(b, tmp_path)


def test_a_failing_step_of_a_shell_walkthrough_fails(tmp_path: Path) -> None:
    [b] = blocks("<!-- snippet: run shell -->\n```sh\necho step one\ntest -e no-such-file\necho never\n```\n", "x.md")
    with pytest.raises(AssertionError, match="exit 1"):
        run_block(b, tmp_path)


@pytest.mark.parametrize(
    "example",
    sorted(
        {
            b.marker.split(" of ", 1)[1].split()[0]
            for b in BLOCKS
            if b.marker and kind(b) == "excerpt of" and b.marker.split(" of ", 1)[1].startswith("node/examples/")
        }
    ),
)
def test_linked_node_examples_run(example: str, tmp_path: Path) -> None:
    run_script([shutil.which("node") or "node", str(ROOT / example)], ROOT / "node", None)
