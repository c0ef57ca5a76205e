#!/usr/bin/env python3
"""`make dist`: the installable artefacts, built for platforms other than this machine's own
without downloading a toolchain (zig from PyPI is the cross-linker; see NOTES and scripts/dist/README.md).

    python scripts/dist/build.py [--out dist] [--only python-x86_64-gnu,npm-linux-x64-gnu,...]

Writes into OUT (default dist/):

    python/  abi3 wheels (manylinux2014 x86_64 and aarch64, musllinux_1_2 x86_64) and the sdist
    npm/     tenure-VERSION.tgz (main package, optionalDependencies on the per-platform packages),
             tenure-linux-*-VERSION.tgz (one addon each, os/cpu/libc), tenure-web-VERSION.tgz

Every wheel and per-platform npm package carries `tenure-supervise` for its target beside the
extension or addon: the leader-only command's supervisor, so that the Python and Node.js command
lines need not start their interpreter a second time (docs/command.md).
    wasm/    tenure.wasm, the component with name/version metadata in its custom sections
    ARTEFACTS.md  every artefact with its size and platform tag (also printed)

Each wheel is checked with `auditwheel show` (its platform tag must be the one asked for) and
each addon's ELF machine by the per-platform package's own prepack check. Artefacts from earlier
runs that this run did not rebuild are kept, so `--only` can refresh a subset.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LICENSES = ("LICENSE-MIT", "LICENSE-APACHE")
# The oldest glibc the Linux -gnu artefacts run on (manylinux2014).
GLIBC_FLOOR = "2.17"


@dataclass(frozen=True)
class Wheel:
    part: str
    target: str
    compatibility: str
    # What `auditwheel show` must report for the wheel (the glibc floor it proves); None: not
    # checkable here (see MUSL_NOTE).
    audit_tag: str | None


WHEELS = (
    Wheel("python-x86_64-gnu", "x86_64-unknown-linux-gnu", "manylinux2014", "manylinux_2_17_x86_64"),
    Wheel("python-aarch64-gnu", "aarch64-unknown-linux-gnu", "manylinux2014", "manylinux_2_17_aarch64"),
    Wheel("python-x86_64-musl", "x86_64-unknown-linux-musl", "musllinux_1_2", None),
)
# auditwheel cannot confirm a musllinux tag on a glibc machine, and zig links musl binaries against
# the soname `libc.so` (which musl's loader maps to itself) where auditwheel's musllinux policy
# expects `libc.musl-x86_64.so.1`. The tests check those binaries' ELF facts instead.
MUSL_NOTE = "musllinux: tagged by maturin; ELF-checked by tests/dist (auditwheel cannot audit musl here)"
# The per-platform npm packages are the directories npm/linux-*/ (their package.json names the
# Rust target); parts are called npm-<dir>.
NPM_PLATFORM_DIRS = sorted(p.parent for p in (ROOT / "npm").glob("linux-*/package.json"))
PARTS = (
    [w.part for w in WHEELS]
    + ["python-sdist"]
    + [f"npm-{d.name}" for d in NPM_PLATFORM_DIRS]
    + ["npm-main", "npm-web", "wasm-component"]
)


def workspace_version() -> str:
    with open(ROOT / "Cargo.toml", "rb") as f:
        return str(tomllib.load(f)["workspace"]["package"]["version"])


def run(cmd: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None, capture: bool = False) -> str:
    print("+", " ".join(cmd), flush=True)
    out = subprocess.run(
        cmd, cwd=cwd, env=env, text=True, check=False, stdout=subprocess.PIPE if capture else None
    )
    if out.returncode != 0:
        sys.exit(f"dist: {cmd[0]} failed with exit code {out.returncode}")
    return out.stdout or ""


def build_env(target_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    # Its own target dir: the zig-linked builds must not invalidate the development builds.
    env["CARGO_TARGET_DIR"] = str(target_dir)
    # musl defaults to a static C runtime, which cannot produce the cdylib a Node addon is.
    env["CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS"] = "-C target-feature=-crt-static"
    return env


# The supervisor helper's file name inside the wheel's package and each npm platform package.
HELPER = "tenure-supervise"
# The same release settings as node/package.json's `build` script (and the Makefile's helper).
RELEASE_SETTINGS = {
    "CARGO_PROFILE_RELEASE_LTO": "true",
    "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "1",
    "CARGO_PROFILE_RELEASE_STRIP": "symbols",
}


def zig_target(target: str) -> str:
    # cargo-zigbuild (PyPI) links with zig; for glibc targets the `.2.17` suffix sets the glibc the
    # binary is linked against (without it zig's default needs GLIBC_2.30: gettid, statx, getrandom),
    # the same floor as the manylinux2014 wheels.
    return f"{target}.{GLIBC_FLOOR}" if target.endswith("-gnu") else target


def helper_target(target: str) -> str:
    """The Rust target `tenure-supervise` is built for to go with an artefact for `target`: the
    same CPU, musl, linked statically. A static executable needs no C library on the machine, so
    one binary serves the glibc and the musl packages alike, and it maps no shared library: its
    idle memory is the program alone (docs/command.md)."""
    return f"{target.split('-')[0]}-unknown-linux-musl"


def build_helper(target: str, env: dict[str, str]) -> Path:
    """`tenure-supervise` for an artefact for `target` (cargo keeps it: the wheels and the npm
    packages of one CPU share it)."""
    rust_target = helper_target(target)
    flags = f"CARGO_TARGET_{rust_target.upper().replace('-', '_')}_RUSTFLAGS"
    # Its own target dir: static linking (+crt-static, musl's default, which build_env turns off
    # for the addons) would otherwise rebuild the addons' dependencies at every switch.
    target_dir = Path(env["CARGO_TARGET_DIR"]) / "helper"
    env = dict(env, **RELEASE_SETTINGS, CARGO_TARGET_DIR=str(target_dir), **{flags: "-C target-feature=+crt-static"})
    run(["cargo", "zigbuild", "--release", "--locked", "-p", "tenure-runtime", "--bin", HELPER,
         "--target", rust_target], env=env)
    return target_dir / rust_target / "release" / HELPER


def add_to_wheel(wheel: Path, arcname: str, path: Path) -> None:
    """Adds `path` to `wheel` as `arcname`, executable, with its line in RECORD (the wheel format's
    `name,sha256=<urlsafe base64 without padding>,size`). maturin cannot put a binary of another
    target into the package (its `include` takes files from the source tree as they are, and this
    one differs per target), so the wheel it built is rewritten with the helper in it."""
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        (record,) = [n for n in src.namelist() if n.endswith(".dist-info/RECORD")]
        for item in src.infolist():
            # A copy maturin may have taken from the source tree (a development build) is replaced.
            if item.filename in (record, arcname):
                continue
            dst.writestr(item, src.read(item.filename))
        info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o100755 << 16  # a regular file, rwxr-xr-x: pip keeps the x bit
        info.compress_type = zipfile.ZIP_DEFLATED
        dst.writestr(info, data)
        lines = [line for line in src.read(record).decode().splitlines() if not line.startswith(arcname + ",")]
        lines.insert(len(lines) - 1 if lines[-1].startswith(record + ",") else len(lines),
                     f"{arcname},sha256={digest},{len(data)}")
        dst.writestr(src.getinfo(record), "\n".join(lines) + "\n")
    tmp.replace(wheel)


def npm_pack(pkg_dir: Path, dest: Path) -> Path:
    out = run(["npm", "pack", "--json", "--pack-destination", str(dest)], cwd=pkg_dir, capture=True)
    return dest / json.loads(out)[0]["filename"]


def copy_licenses(to: Path) -> None:
    for name in LICENSES:
        shutil.copy2(ROOT / name, to / name)


def build_wheel(w: Wheel, out: Path, env: dict[str, str]) -> Path:
    before = set(out.glob("*.whl"))
    with tempfile.TemporaryDirectory() as tmp:
        run(
            ["maturin", "build", "--release", "--zig", "--target", w.target, "--compatibility", w.compatibility,
             "-o", tmp],
            cwd=ROOT / "python",
            env=env,
        )
        (built,) = Path(tmp).glob("*.whl")
        add_to_wheel(built, f"tenure/{HELPER}", build_helper(w.target, env))
        for old in before:
            if old.name.split("-")[-1] == built.name.split("-")[-1]:
                old.unlink()  # the same platform from an earlier run (maybe another version)
        dest = out / built.name
        shutil.move(str(built), dest)
    if w.audit_tag is None:
        print(f"dist: {dest.name}: {MUSL_NOTE}")
        return dest
    report = run(["auditwheel", "show", str(dest)], capture=True)
    tags = re.findall(r'"([a-z0-9_]+)"', report)
    if not tags or tags[0] != w.audit_tag:
        sys.exit(f"dist: auditwheel says {dest.name} is {tags[:1]}, expected {w.audit_tag}:\n{report}")
    return dest


def build_sdist(out: Path, env: dict[str, str]) -> Path:
    for old in out.glob("*.tar.gz"):
        old.unlink()
    run(["maturin", "sdist", "-o", str(out)], cwd=ROOT / "python", env=env)
    (sdist,) = out.glob("*.tar.gz")
    return sdist


def build_addon(pkg_dir: Path, out: Path, env: dict[str, str]) -> Path:
    manifest = json.loads((pkg_dir / "package.json").read_text())
    target = manifest["tenure"]["rustTarget"]
    # `napi build -x` runs the same cargo-zigbuild but passes no glibc version (see zig_target);
    # the rest of what napi build does (generating JS/.d.ts bindings) is not used by the package,
    # whose index.d.ts is written by hand.
    run(["cargo", "zigbuild", "--release", "--locked", "-p", "tenure-node", "--target", zig_target(target)],
        env=dict(env, **RELEASE_SETTINGS))
    built = Path(env["CARGO_TARGET_DIR"]) / target / "release" / "libtenure_node.so"
    shutil.copy2(built, pkg_dir / manifest["main"])
    shutil.copy2(build_helper(target, env), pkg_dir / HELPER)  # node/lib/native.js finds it there
    copy_licenses(pkg_dir)
    return npm_pack(pkg_dir, out)  # prepack checks the addon's ELF machine


def build_npm_main(out: Path, version: str) -> Path:
    src = ROOT / "node"
    manifest = json.loads((src / "package.json").read_text())
    # The checkout's package.json has no optionalDependencies (npm ci would look them up in the
    # registry); the packed package names every per-platform package, at the one version.
    manifest["optionalDependencies"] = {
        json.loads((d / "package.json").read_text())["name"]: version for d in NPM_PLATFORM_DIRS
    }
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / "tenure"
        stage.mkdir()
        for entry in manifest["files"]:
            path = src / entry.rstrip("/")
            if path.is_dir():
                shutil.copytree(path, stage / path.name)
            elif path.exists():
                shutil.copy2(path, stage / path.name)
        copy_licenses(stage)
        shutil.copytree(src / "scripts", stage / "scripts")  # prepack.js (not in "files")
        (stage / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        return npm_pack(stage, out)


def build_npm_web(out: Path, env: dict[str, str]) -> Path:
    pkg_dir = ROOT / "npm" / "web"
    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "pkg"
        run([str(ROOT / "bindings/wasm/build.sh"), str(built)], env=env)
        with tempfile.TemporaryDirectory() as stage_tmp:
            stage = Path(stage_tmp) / "web"
            shutil.copytree(pkg_dir, stage)
            for f in built.iterdir():
                if f.suffix in (".js", ".ts", ".wasm"):
                    shutil.copy2(f, stage / f.name)
            copy_licenses(stage)
            return npm_pack(stage, out)


def build_component(out: Path, version: str, component: Path) -> Path:
    if not component.exists():
        sys.exit(f"dist: {component} is missing: run `make component` first (make dist does)")
    dest = out / "tenure.wasm"
    with open(ROOT / "Cargo.toml", "rb") as f:
        ws = tomllib.load(f)["workspace"]["package"]
    run(["wasm-tools", "metadata", "add", "--name", "tenure", "--version", version,
         "--licenses", ws["license"],
         "--description", "tenure: leader election (the tenure:election WIT world)",
         str(component), "-o", str(dest)])
    run(["wasm-tools", "validate", str(dest)])
    return dest


def platform_tag(path: Path) -> str:
    name = path.name
    if name.endswith(".whl"):
        return name[:-4].split("-", 2)[2]  # python-abi-platform
    if name.endswith(".tar.gz"):
        return "sdist (any platform, builds with Rust)"
    if name.endswith(".wasm"):
        return "WebAssembly component (wasm32, any host)"
    stem = name.removesuffix(".tgz")
    for d in NPM_PLATFORM_DIRS:
        m = json.loads((d / "package.json").read_text())
        if stem.startswith(m["name"] + "-"):
            return f"npm os={m['os'][0]} cpu={m['cpu'][0]} libc={m['libc'][0]}"
    if stem.startswith("tenure-web-"):
        return "npm, browser ES module + wasm32"
    return "npm, any platform (addon from the optional dependency)"


def write_manifest(out: Path) -> str:
    rows = [
        f"| `{p.relative_to(out)}` | {p.stat().st_size:,} | {platform_tag(p)} |"
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.suffix in (".whl", ".gz", ".tgz", ".wasm")
    ]
    text = "\n".join(
        ["# dist/ artefacts", "", "Written by `make dist` (scripts/dist/build.py).", "",
         "| artefact | bytes | platform |", "| --- | ---: | --- |", *rows, ""]
    )
    (out / "ARTEFACTS.md").write_text(text)
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ap.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(PARTS)}")
    ap.add_argument("--component", type=Path, default=ROOT / "target/component/tenure.wasm",
                    help="the component `make component` built")
    ap.add_argument("--target-dir", type=Path, default=ROOT / "target" / "dist",
                    help="cargo target directory for these builds (default target/dist)")
    args = ap.parse_args()
    parts = [p for p in args.only.split(",") if p] or list(PARTS)
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        sys.exit(f"dist: unknown part(s) {', '.join(unknown)}; known: {', '.join(PARTS)}")
    for tool in ("maturin", "zig", "cargo-zigbuild", "auditwheel", "npm", "wasm-tools"):
        if shutil.which(tool) is None:
            sys.exit(f"dist: {tool} is not on PATH: run `make setup` (it is in requirements-dev.txt)")

    version = workspace_version()
    out: Path = args.out.resolve()
    for sub in ("python", "npm", "wasm"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    env = build_env(args.target_dir.resolve())
    timings: list[tuple[str, float]] = []
    for part in parts:
        started = time.monotonic()
        if part == "python-sdist":
            build_sdist(out / "python", env)
        elif part.startswith("python-"):
            build_wheel(next(w for w in WHEELS if w.part == part), out / "python", env)
        elif part == "npm-main":
            build_npm_main(out / "npm", version)
        elif part == "npm-web":
            build_npm_web(out / "npm", env)
        elif part == "wasm-component":
            build_component(out / "wasm", version, args.component)
        else:
            build_addon(ROOT / "npm" / part.removeprefix("npm-"), out / "npm", env)
        timings.append((part, time.monotonic() - started))
    print(write_manifest(out))
    print("dist: time per part: " + ", ".join(f"{p} {s:.0f} s" for p, s in timings))


if __name__ == "__main__":
    main()
