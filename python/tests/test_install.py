"""Install test: the package installs into a fresh virtualenv from source (`pip install ./python`,
PEP 517 through maturin) and from the wheel `maturin build --release` makes, and imports from both.
One fresh venv serves both checks (slow: it compiles the extension)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import PYTHON_DIR, ROOT

SMOKE = """
import tenure, sys
from tenure import Config, Node
assert tenure.__file__.startswith(sys.prefix), tenure.__file__
n = Node(Config(id="a", cluster="c", bootstrap=("b", "c")), now=0, seed=1)
n.handle_timeout(n.poll_timeout())
assert len(n.drain()) == 2
try:
    n.handle_message(1, "b", b"junk")
except tenure.DecodeError as e:
    assert e.reason.value == "malformed"
print("ok", tenure.__version__)
"""


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, f"{cmd} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


@pytest.mark.slow
def test_pip_install_from_source_and_wheel_install(tmp_path: Path) -> None:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is needed to build from source")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = str(env_dir / "bin" / "python")
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.setdefault("CARGO_TARGET_DIR", str(ROOT / "target"))
    # Run from a directory that has no `tenure` package in it, so the import is the installed one.
    work = tmp_path / "work"
    work.mkdir()

    # 1. From source: pip builds the extension through maturin's PEP 517 backend.
    run([py, "-m", "pip", "install", "-q", str(PYTHON_DIR)], work, env)
    assert run([py, "-c", SMOKE], work, env).startswith("ok 0.1.0")
    assert run([py, "-m", "tenure", "--help"], work, env).startswith("usage: python -m tenure run")
    assert run([str(env_dir / "bin" / "tenure"), "--version"], work, env).startswith("tenure 0.1.0")

    # 2. The wheel maturin builds: one abi3 wheel with the stubs and py.typed.
    wheels = tmp_path / "wheels"
    maturin = shutil.which("maturin") or str(Path(sys.executable).parent / "maturin")
    run([maturin, "build", "--release", "-q", "-o", str(wheels)], PYTHON_DIR, env)
    (wheel,) = wheels.glob("tenure-*.whl")
    assert "abi3" in wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    for name in ("tenure/py.typed", "tenure/_native.pyi", "tenure/runtime.py"):
        assert name in names
    size = wheel.stat().st_size
    out = ROOT / "test-output"
    out.mkdir(exist_ok=True)
    (out / "python-wheel-size.txt").write_text(f"{wheel.name} {size}\n")
    run([py, "-m", "pip", "uninstall", "-q", "-y", "tenure"], work, env)
    run([py, "-m", "pip", "install", "-q", str(wheel)], work, env)
    assert run([py, "-c", SMOKE], work, env).startswith("ok 0.1.0")
