"""Install tests: the artefacts in dist/ install and elect a leader on a machine with
no Rust and no C compiler. Each runs with a PATH of python, node, npm and coreutils only (see
conftest.clean_env) in a directory outside the repository:

- the x86_64 manylinux2014 wheel into a fresh venv (pip with --no-index: nothing else comes in),
  then `python -m tenure run` x 3 on loopback until one prints `"event": "leader"`, and again with
  a leader-only command (`-- sleep 60`), which must run under the wheel's native supervisor
  `tenure-supervise`, not a second interpreter;
- the npm tarballs into a fresh npm project, offline: the main package plus every per-platform
  package (overrides point the optional dependencies at the tarballs), so npm's os/cpu/libc
  filter picks the one for this machine; then `npx tenure run` x 3 (also with a leader-only
  command, under the platform package's `tenure-supervise`), a CommonJS and an ESM import,
  and the shipped CommonJS example; the browser package `tenure-web` imports as an ES module.

Only command lines and the JSON event lines are used, so the test holds whichever code is behind
`python -m tenure run` / `npx tenure run`.
"""

from __future__ import annotations

import json
import os
import venv
from collections.abc import Callable
from pathlib import Path

from conftest import (
    DIST,
    VERSION,
    artefact,
    elect,
    free_udp_ports,
    needs_x86_64,
    run_ok,
)


def peer_args(peers: list[str]) -> list[str]:
    return [arg for p in peers for arg in ("--peer", p)]


def supervised_by(helper: Path) -> Callable[[dict[str, object]], None]:
    """A check of a `command_started` line: the command's guard (`tenure-guard`, which leads the
    command's process group, `pgid`) has as parent the supervisor, which must be the executable
    `helper` (not python or node again)."""

    def check(started: dict[str, object]) -> None:
        pid = started["pgid"]
        assert Path(f"/proc/{pid}/comm").read_text().strip() == "tenure-guard"
        supervisor = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1]
        exe = os.readlink(f"/proc/{supervisor}/exe")
        assert Path(exe) == helper.resolve(), f"the leader-only command is supervised by {exe}, not {helper}"
        assert Path(f"/proc/{supervisor}/comm").read_text().strip() == "tenure-supervis"  # 15 characters

    return check


def test_wheel_installs_and_elects_without_a_toolchain(clean_env: dict[str, str], workdir: Path) -> None:
    needs_x86_64()
    wheel = artefact(f"python/tenure-{VERSION}-cp310-abi3-manylinux2014_x86_64*.whl")
    env_dir = workdir / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = str(env_dir / "bin" / "python")
    run_ok([py, "-m", "pip", "install", "--no-index", "--only-binary", ":all:", str(wheel)], workdir, clean_env)

    smoke = "import tenure, sys; assert tenure.__file__.startswith(sys.prefix), tenure.__file__; print(tenure.__version__)"
    assert run_ok([py, "-c", smoke], workdir, clean_env).strip() == VERSION

    leader = elect(lambda me, peers: [py, "-m", "tenure", "run", "--id", me, *peer_args(peers),
                                      "--cluster", "dist-python"], workdir, clean_env)
    assert isinstance(leader["term"], int) and leader["term"] >= 1

    helper = Path(run_ok([py, "-c", "import tenure.cli; print(tenure.cli.SUPERVISOR_HELPER)"], workdir,
                         clean_env).strip())
    assert helper.is_file() and os.access(helper, os.X_OK), f"the wheel installed no executable {helper}"
    elect(lambda me, peers: [py, "-m", "tenure", "run", "--id", me, *peer_args(peers), "--cluster", "dist-py-cmd",
                             "--", "sleep", "60"],
          workdir, clean_env, event="command_started", while_running=supervised_by(helper))


ESM_CLUSTER = """
import tenure, { Elector, VERSION } from 'tenure'
if (tenure.Elector !== Elector) throw new Error('the default export differs from the named exports')
const [version, ...ids] = process.argv.slice(1)
if (VERSION !== version) throw new Error(`VERSION ${VERSION}, expected ${version}`)
const electors = ids.map((id) => new Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'dist-esm' }))
const won = new Promise((resolve) => electors.forEach((e) => e.on('leader', ({ term }) => resolve(term))))
await Promise.all(electors.map((e) => e.start()))
const timeout = setTimeout(() => { console.error('no leader within 30 s'); process.exit(1) }, 30000)
const term = await won
clearTimeout(timeout)
await Promise.all(electors.map((e) => e.stop()))
console.log(JSON.stringify({ event: 'leader', term }))
"""

# The browser package installs like any ES module; in Node, init() takes the .wasm bytes.
WEB_SMOKE = """
import init, { Node, version } from 'tenure-web'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
const wasm = readFileSync(createRequire(import.meta.url).resolve('tenure-web/tenure_wasm_bg.wasm'))
await init({ module_or_path: wasm })
const node = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] }, { now: 0, seed: 1 })
node.handleTimeout(node.pollTimeout())
console.log(JSON.stringify({ version: version(), sent: node.drain().filter((o) => o.type === 'send').length }))
"""

CJS_SMOKE = """
const t = require('tenure')
if (t.VERSION !== process.argv[1]) throw new Error(`VERSION ${t.VERSION}, expected ${process.argv[1]}`)
const n = new t.Node({ id: 'a', cluster: 'c', bootstrap: ['b', 'c'] }, { now: 0 })
n.handleTimeout(n.pollTimeout())
if (n.drain().length !== 2) throw new Error('expected two vote requests')
try { n.handleMessage(1, 'b', Buffer.from('junk')); throw new Error('junk accepted') }
catch (e) { if (!(e instanceof t.DroppedError)) throw e }
console.log('ok')
"""


def test_npm_tarballs_install_and_elect_without_a_toolchain(clean_env: dict[str, str], workdir: Path) -> None:
    needs_x86_64()
    main = artefact(f"npm/tenure-{VERSION}.tgz")
    web = artefact(f"npm/tenure-web-{VERSION}.tgz")
    platforms = sorted(p for p in DIST.glob(f"npm/tenure-*-{VERSION}.tgz") if not p.name.startswith("tenure-web-"))
    assert len(platforms) >= 2, f"per-platform tarballs missing in {DIST}/npm: run `make dist`"
    project = workdir / "app"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({
        "name": "dist-install-test",
        "version": "1.0.0",
        "private": True,
        "dependencies": {"tenure": f"file:{main}", "tenure-web": f"file:{web}"},
        # As if from a registry: every per-platform package is offered, npm keeps the matching one.
        "overrides": {p.name.removesuffix(f"-{VERSION}.tgz"): f"file:{p}" for p in platforms},
    }, indent=2))
    run_ok(["npm", "install", "--offline", "--no-audit", "--no-fund"], project, clean_env)

    modules = project / "node_modules"
    assert (modules / "tenure-linux-x64-gnu" / "tenure.linux-x64-gnu.node").is_file()
    for other in ("tenure-linux-arm64-gnu", "tenure-linux-x64-musl", "tenure-darwin-arm64", "tenure-darwin-x64",
                  "tenure-win32-x64"):
        assert not (modules / other).exists(), f"npm installed {other} on linux-x64-gnu"
    assert not (modules / "tenure" / "native").exists(), "the main package must not carry an addon"

    assert run_ok(["node", "-e", CJS_SMOKE, VERSION], project, clean_env).strip() == "ok"
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
    esm = json.loads(run_ok(["node", "--input-type=module", "-e", ESM_CLUSTER, VERSION, *ids], project, clean_env,
                            timeout=60))
    assert esm["event"] == "leader"
    web_out = json.loads(run_ok(["node", "--input-type=module", "-e", WEB_SMOKE], project, clean_env))
    assert web_out == {"version": VERSION, "sent": 2}
    # The CommonJS example shipped in the package runs against the installed package.
    run_ok(["node", str(modules / "tenure" / "examples" / "runtime.js")], project, clean_env, timeout=60)

    leader = elect(lambda me, peers: ["npx", "--offline", "--no", "tenure", "run", "--id", me,
                                      *peer_args(peers), "--cluster", "dist-node"],
                   project, clean_env)
    assert isinstance(leader["term"], int) and leader["term"] >= 1

    helper = modules / "tenure-linux-x64-gnu" / "tenure-supervise"
    assert helper.is_file() and os.access(helper, os.X_OK), f"npm installed no executable {helper}"
    elect(lambda me, peers: ["npx", "--offline", "--no", "tenure", "run", "--id", me, *peer_args(peers),
                             "--cluster", "dist-node-cmd", "--", "sleep", "60"],
          project, clean_env, event="command_started", while_running=supervised_by(helper))
