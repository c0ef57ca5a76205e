"""What is inside dist/: every artefact is there, built for the architecture and C
library floor its tag claims (auditwheel for the wheels; the ELF headers and symbol versions, as
`readelf -h -V` shows them, for every native binary), with the one version, licenses and project
URLs; every wheel and platform package carries the supervisor helper `tenure-supervise` for its
target (static); the npm packages have the napi-rs layout; the prepack checks refuse to pack without a binary;
the sdist builds; the component carries its name and version."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import DIST, ROOT, TOOLS_ENV, VERSION, artefact, run_ok
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

EM = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}
GLIBC_FLOOR = (2, 17)  # manylinux2014


def elf_facts(data: bytes) -> tuple[str, tuple[int, ...] | None, list[str]]:
    """(e_machine, the highest GLIBC_x.y symbol version it needs or None, DT_NEEDED libraries)."""
    elf = ELFFile(io.BytesIO(data))
    highest: tuple[int, ...] | None = None
    needed: list[str] = []
    for section in elf.iter_sections():
        if isinstance(section, GNUVerNeedSection):
            for _, auxiliaries in section.iter_versions():
                for aux in auxiliaries:
                    m = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)+)", aux.name)
                    if m:
                        v = tuple(int(x) for x in m.group(1).split("."))
                        highest = v if highest is None or v > highest else highest
        if isinstance(section, DynamicSection):
            needed += [t.needed for t in section.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
    return elf["e_machine"], highest, needed


def check_helper(data: bytes, mode: int, arch: str) -> None:
    """The supervisor helper `tenure-supervise`: an executable for the artefact's architecture,
    statically linked (no C library needed, glibc or musl alike; no interpreter, no DT_NEEDED)."""
    assert mode & 0o111, f"tenure-supervise has mode {mode:o}: not executable"
    machine, glibc, needed = elf_facts(data)
    assert machine == EM[arch]
    assert glibc is None and needed == [], f"tenure-supervise is not static: needs {needed}, GLIBC_{glibc}"
    elf = ELFFile(io.BytesIO(data))
    assert not [s for s in elf.iter_segments() if s["p_type"] == "PT_INTERP"], "tenure-supervise has an interpreter"


def wheel_so(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".so")]
        return z.read(name)


def tgz_files(tgz: Path) -> dict[str, bytes]:
    with tarfile.open(tgz) as t:
        return {m.name.removeprefix("package/"): t.extractfile(m).read() for m in t.getmembers() if m.isfile()}  # type: ignore[union-attr]


def tgz_modes(tgz: Path) -> dict[str, int]:
    with tarfile.open(tgz) as t:
        return {m.name.removeprefix("package/"): m.mode for m in t.getmembers() if m.isfile()}


def auditwheel_tag(wheel: Path) -> str:
    out = run_ok([sys.executable, "-m", "auditwheel", "show", str(wheel)], ROOT, TOOLS_ENV)
    return re.findall(r'"([a-z0-9_]+)"', out)[0]


@pytest.mark.parametrize(
    ("pattern", "tag", "arch", "libc"),
    [
        ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "x86_64", "glibc"),
        ("manylinux2014_aarch64", "manylinux_2_17_aarch64", "aarch64", "glibc"),
        # auditwheel cannot audit a musllinux wheel on a glibc machine (and wants the soname
        # libc.musl-x86_64.so.1 where zig links `libc.so`, which musl's loader maps to itself):
        # the ELF checks below stand in for it.
        ("musllinux_1_2_x86_64", None, "x86_64", "musl"),
    ],
)
def test_wheel(pattern: str, tag: str | None, arch: str, libc: str) -> None:
    wheel = artefact(f"python/tenure-{VERSION}-cp310-abi3-{pattern}*.whl")
    if tag is not None:
        assert auditwheel_tag(wheel) == tag
    machine, glibc, needed = elf_facts(wheel_so(wheel))
    assert machine == EM[arch]
    if libc == "glibc":
        assert glibc is not None and glibc <= GLIBC_FLOOR, f"needs GLIBC_{glibc}"
        assert "libc.so.6" in needed
    else:
        assert glibc is None and needed == ["libc.so"], needed
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(f"tenure-{VERSION}.dist-info/METADATA").decode()
        helper = z.getinfo("tenure/tenure-supervise")
        record = z.read(f"tenure-{VERSION}.dist-info/RECORD").decode()
        check_helper(z.read(helper), helper.external_attr >> 16, arch)
    assert "\ntenure/tenure-supervise,sha256=" in record  # pip checks what it installs against RECORD
    for f in ("tenure/py.typed", "tenure/_native.pyi", *(f"tenure-{VERSION}.dist-info/licenses/LICENSE-{k}"
                                                         for k in ("MIT", "APACHE"))):
        assert f in names
    assert f"\nVersion: {VERSION}\n" in meta
    assert "License-Expression: MIT OR Apache-2.0" in meta
    assert "Project-URL" not in meta  # no public repository address is recorded (test_versions.py)


def test_readelf_agrees_on_the_aarch64_artefacts(tmp_path: Path) -> None:
    """The same facts from binutils' readelf, where it is installed (the issue's check)."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed; test_wheel/test_npm_platform_package check the same")
    so = tmp_path / "wheel.so"
    so.write_bytes(wheel_so(artefact(f"python/tenure-{VERSION}-cp310-abi3-manylinux2014_aarch64*.whl")))
    node = tmp_path / "addon.node"
    node.write_bytes(tgz_files(artefact(f"npm/tenure-linux-arm64-gnu-{VERSION}.tgz"))["tenure.linux-arm64-gnu.node"])
    for binary in (so, node):
        out = subprocess.run([readelf, "-h", "-V", str(binary)], capture_output=True, text=True, check=True).stdout
        assert re.search(r"Machine:\s+AArch64", out), out[:800]
        versions = [tuple(int(x) for x in v.split(".")) for v in re.findall(r"Name: GLIBC_([\d.]+)", out)]
        assert versions and max(versions) <= GLIBC_FLOOR, f"{binary.name} needs GLIBC_{max(versions)}"


def test_sdist_has_sources_and_licenses_and_builds(tmp_path: Path) -> None:
    sdist = artefact(f"python/tenure-{VERSION}.tar.gz")
    top = f"tenure-{VERSION}"
    with tarfile.open(sdist) as t:
        names = set(t.getnames())
        pkg_info = t.extractfile(f"{top}/PKG-INFO").read().decode()  # type: ignore[union-attr]
    assert "License-Expression: MIT OR Apache-2.0" in pkg_info and "Project-URL" not in pkg_info
    for f in ("pyproject.toml", "Cargo.toml", "Cargo.lock", "core/src/lib.rs", "bindings/python/src/lib.rs",
              "LICENSE-MIT", "LICENSE-APACHE", "tenure/py.typed"):
        assert f"{top}/{f}" in names, f
    if shutil.which("cargo") is None:
        pytest.skip("building the sdist needs cargo")
    # maturin (the build backend) from this venv; the dist builds' target dir, so it is warm.
    env = dict(TOOLS_ENV, CARGO_TARGET_DIR=str(ROOT / "target" / "dist"))
    # --no-build-isolation: maturin from this venv (requirements-dev.txt), no index needed.
    run_ok([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path),
            str(sdist)], tmp_path, env, timeout=1200)
    (wheel,) = tmp_path.glob(f"tenure-{VERSION}-cp310-abi3-*.whl")
    assert wheel_so(wheel)


NPM_PLATFORMS = {
    "linux-x64-gnu": ("x64", "glibc", "x86_64"),
    "linux-arm64-gnu": ("arm64", "glibc", "aarch64"),
    "linux-x64-musl": ("x64", "musl", "x86_64"),
}


@pytest.mark.parametrize("platform", sorted(NPM_PLATFORMS))
def test_npm_platform_package(platform: str) -> None:
    cpu, libc, arch = NPM_PLATFORMS[platform]
    files = tgz_files(artefact(f"npm/tenure-{platform}-{VERSION}.tgz"))
    manifest = json.loads(files["package.json"])
    assert manifest["name"] == f"tenure-{platform}" and manifest["version"] == VERSION
    assert (manifest["os"], manifest["cpu"], manifest["libc"]) == (["linux"], [cpu], [libc])
    assert manifest["license"] == "MIT OR Apache-2.0"
    assert {"LICENSE-MIT", "LICENSE-APACHE", manifest["main"]} <= set(files)
    machine, glibc, needed = elf_facts(files[manifest["main"]])
    assert machine == EM[arch]
    if libc == "glibc":
        assert glibc is not None and glibc <= GLIBC_FLOOR, f"needs GLIBC_{glibc}"
    else:
        assert glibc is None and needed == ["libc.so"], needed
    assert "tenure-supervise" in files
    check_helper(files["tenure-supervise"], tgz_modes(artefact(f"npm/tenure-{platform}-{VERSION}.tgz"))[
        "tenure-supervise"], arch)


def test_npm_main_package() -> None:
    files = tgz_files(artefact(f"npm/tenure-{VERSION}.tgz"))
    manifest = json.loads(files["package.json"])
    assert manifest["version"] == VERSION
    # Every platform package, Linux, macOS and Windows (test_foreign.py checks the last two).
    foreign = ("darwin-arm64", "darwin-x64", "win32-x64")
    assert manifest["optionalDependencies"] == {f"tenure-{p}": VERSION for p in (*NPM_PLATFORMS, *foreign)}
    assert not [f for f in files if f.endswith(".node")], "the main package must not carry an addon"
    assert {"LICENSE-MIT", "LICENSE-APACHE", "README.md", "index.d.ts", "index.mjs", "bin/tenure.js"} <= set(files)
    # Everything the README points at under examples/ is in the package.
    readme = files["README.md"].decode()
    for ref in set(re.findall(r"examples/[\w.-]+\.(?:js|ts|mts)", readme)):
        assert ref in files, f"README.md references {ref}, which the package does not ship"


def test_npm_web_package() -> None:
    files = tgz_files(artefact(f"npm/tenure-web-{VERSION}.tgz"))
    manifest = json.loads(files["package.json"])
    assert manifest["version"] == VERSION and manifest["type"] == "module"
    for f in ("tenure_wasm.js", "tenure_wasm.d.ts", "tenure_wasm_bg.wasm", "LICENSE-MIT", "LICENSE-APACHE"):
        assert f in files, f
    assert files["tenure_wasm_bg.wasm"][:4] == b"\0asm"
    assert manifest["exports"]["."]["types"] == "./tenure_wasm.d.ts"


def test_component_metadata() -> None:
    wasm = artefact("wasm/tenure.wasm")
    assert wasm.read_bytes()[:8] == b"\0asm\x0d\0\x01\0", "not a component (layer 1)"
    out = run_ok(["wasm-tools", "metadata", "show", "--json", str(wasm)], ROOT, TOOLS_ENV)
    meta = json.loads(out)["component"]["metadata"]
    assert (meta["name"], meta["version"], meta["licenses"]) == ("tenure", VERSION, "MIT OR Apache-2.0"), meta


def test_prepack_refuses_without_the_binary(tmp_path: Path) -> None:
    pkg = tmp_path / "linux-x64-gnu"
    shutil.copytree(ROOT / "npm" / "linux-x64-gnu", pkg,
                    ignore=shutil.ignore_patterns("*.node", "LICENSE-*", "tenure-supervise"))
    shutil.copy2(ROOT / "npm" / "prepack-addon.js", tmp_path / "prepack-addon.js")
    out = subprocess.run(["npm", "pack", "--dry-run"], cwd=pkg, capture_output=True, text=True, check=False)
    assert out.returncode != 0 and "refusing to pack" in out.stderr, out.stderr
    # The wrong architecture is refused too.
    x64_files = tgz_files(artefact(f"npm/tenure-linux-x64-gnu-{VERSION}.tgz"))
    arm_files = tgz_files(artefact(f"npm/tenure-linux-arm64-gnu-{VERSION}.tgz"))
    (pkg / "tenure.linux-x64-gnu.node").write_bytes(arm_files["tenure.linux-arm64-gnu.node"])
    out = subprocess.run(["npm", "pack", "--dry-run"], cwd=pkg, capture_output=True, text=True, check=False)
    assert out.returncode != 0 and "ELF machine 183" in out.stderr, out.stderr
    # The right addon without the supervisor helper, or with the wrong one, or not executable.
    (pkg / "tenure.linux-x64-gnu.node").write_bytes(x64_files["tenure.linux-x64-gnu.node"])
    for helper, mode, message in [(None, 0, "the supervisor helper tenure-supervise is not there"),
                                  (arm_files["tenure-supervise"], 0o755, "tenure-supervise is for ELF machine 183"),
                                  (x64_files["tenure-supervise"], 0o644, "tenure-supervise is not executable")]:
        if helper is not None:
            (pkg / "tenure-supervise").write_bytes(helper)
            (pkg / "tenure-supervise").chmod(mode)
        out = subprocess.run(["npm", "pack", "--dry-run"], cwd=pkg, capture_output=True, text=True, check=False)
        assert out.returncode != 0 and message in out.stderr, out.stderr
    # The main package as checked out (no optionalDependencies) is refused as well.
    out = subprocess.run(["npm", "pack", "--dry-run"], cwd=ROOT / "node", capture_output=True, text=True, check=False)
    assert out.returncode != 0 and "refusing to pack" in out.stderr, out.stderr


def built() -> list[Path]:
    return [p for p in DIST.rglob("*") if p.is_file() and p.suffix in (".whl", ".gz", ".tgz", ".wasm", ".zip")]


def test_artefact_list_is_current() -> None:
    listed = (DIST / "ARTEFACTS.md").read_text()
    for p in built():
        assert f"`{p.relative_to(DIST)}` | {p.stat().st_size:,} |" in listed, p


# How far an artefact may drift from the size the checked-in ARTEFACTS.md lists (the same margin as
# BENCHMARKS.md's sizes in tests/docs): a bigger change means `make artefacts` is due.
SIZE_TOLERANCE = 0.05


def test_top_level_artefact_list_matches_dist() -> None:
    """ARTEFACTS.md (the README links it; written by `make artefacts`) lists exactly what is in
    dist/, each with a size within SIZE_TOLERANCE of the built file's and an oldest OS."""
    rows = {}
    for line in (ROOT / "ARTEFACTS.md").read_text().splitlines():
        m = re.fullmatch(r"\| `([^`]+)` \| ([\d,]+) \| ([^|]*) \| ([^|]*) \|", line)
        if m:
            rows[m.group(1)] = (int(m.group(2).replace(",", "")), m.group(4).strip())
    on_disk = {str(p.relative_to(DIST)): p.stat().st_size for p in built()}
    assert sorted(rows) == sorted(on_disk), "ARTEFACTS.md and dist/ differ: run `make artefacts`"
    for name, (listed, floor) in rows.items():
        assert abs(on_disk[name] - listed) <= SIZE_TOLERANCE * listed, (
            f"{name} is {on_disk[name]:,} bytes, ARTEFACTS.md says {listed:,}: run `make artefacts`")
        assert floor, f"{name}: no oldest OS / runtime in ARTEFACTS.md"
