#!/usr/bin/env python3
"""`make dist`: the installable artefacts, built for platforms other than this machine's own
without downloading a toolchain (zig from PyPI links Linux and macOS, Debian's mingw-w64 links
Windows; see NOTES and scripts/dist/README.md).

    python scripts/dist/build.py [--out dist] [--only python-x86_64-gnu,npm-linux-x64-gnu,...]

Writes into OUT (default dist/):

    python/  abi3 wheels (manylinux2014 x86_64 and aarch64, musllinux_1_2 x86_64, macOS arm64 and
             x86_64, Windows x86_64) and the sdist
    npm/     tenure-VERSION.tgz (main package, optionalDependencies on the per-platform packages),
             tenure-{linux-*,darwin-*,win32-x64}-VERSION.tgz (one addon each, os/cpu(/libc)),
             tenure-web-VERSION.tgz
    cli/     the `tenure` command line alone for each target: tenure-VERSION-TARGET.tar.gz (.zip
             for Windows), with the licenses
    wasm/    tenure.wasm, the component with name/version metadata in its custom sections
    ARTEFACTS.md  every artefact with its size, platform and oldest OS (also printed; artefacts.py)

Every wheel and per-platform npm package carries `tenure-supervise` (`tenure-supervise.exe` for
Windows) for its target beside the extension or addon: the leader-only command's supervisor, so
that the Python and Node.js command lines need not start their interpreter a second time
(docs/command.md). The Windows command line archive carries it beside `tenure.exe`, where the
runtime looks for it.

Each Linux wheel is checked with `auditwheel show` (its platform tag must be the one asked for),
each macOS and Windows binary with platforms.check_native (CPU, only system libraries, the oldest
OS; arm64 macOS: a valid ad-hoc code signature, which zig's linker writes), and each addon's
machine by the per-platform package's own prepack check. Artefacts from earlier
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
import tarfile
import tempfile
import time
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import artefacts
import binaries
from platforms import (
    GLIBC_FLOOR,
    cdylib,
    check_native,
    cli_target,
    exe,
    helper_target,
    os_of,
    target_env,
)

ROOT = Path(__file__).resolve().parents[2]
LICENSES = ("LICENSE-MIT", "LICENSE-APACHE")


@dataclass(frozen=True)
class Wheel:
    part: str
    target: str
    # maturin's --compatibility (Linux only: macOS wheels take their tag from
    # MACOSX_DEPLOYMENT_TARGET, Windows wheels are win_amd64).
    compatibility: str | None
    # What `auditwheel show` must report for the wheel (the glibc floor it proves); None: not
    # checkable by auditwheel (musl: see MUSL_NOTE; macOS and Windows: platforms.check_native).
    audit_tag: str | None


WHEELS = (
    Wheel("python-x86_64-gnu", "x86_64-unknown-linux-gnu", "manylinux2014", "manylinux_2_17_x86_64"),
    Wheel("python-aarch64-gnu", "aarch64-unknown-linux-gnu", "manylinux2014", "manylinux_2_17_aarch64"),
    Wheel("python-x86_64-musl", "x86_64-unknown-linux-musl", "musllinux_1_2", None),
    Wheel("python-aarch64-macos", "aarch64-apple-darwin", None, None),
    Wheel("python-x86_64-macos", "x86_64-apple-darwin", None, None),
    Wheel("python-x86_64-windows", "x86_64-pc-windows-gnu", None, None),
)
# auditwheel cannot confirm a musllinux tag on a glibc machine, and zig links musl binaries against
# the soname `libc.so` (which musl's loader maps to itself) where auditwheel's musllinux policy
# expects `libc.musl-x86_64.so.1`. The tests check those binaries' ELF facts instead.
MUSL_NOTE = "musllinux: tagged by maturin; ELF-checked by tests/dist (auditwheel cannot audit musl here)"
# The per-platform npm packages are the directories npm/*/ whose package.json names a Rust target
# (npm/web is the browser package); parts are called npm-<dir>.
NPM_PLATFORM_DIRS = sorted(p.parent for p in (ROOT / "npm").glob("*/package.json")
                           if "rustTarget" in json.loads(p.read_text()).get("tenure", {}))
# The standalone command line, one archive per target; parts are called cli-<target>.
CLI_TARGETS = ("x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl", "aarch64-apple-darwin",
               "x86_64-apple-darwin", "x86_64-pc-windows-gnu")
PARTS = (
    [w.part for w in WHEELS]
    + ["python-sdist"]
    + [f"npm-{d.name}" for d in NPM_PLATFORM_DIRS]
    + ["npm-main", "npm-web"]
    + [f"cli-{t}" for t in CLI_TARGETS]
    + ["wasm-component"]
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


# The supervisor helper's file name (with `.exe` for Windows: platforms.exe) inside the wheel's
# package, each npm platform package and the Windows command line archive.
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
    return f"{target}.{GLIBC_FLOOR}" if target.endswith("-linux-gnu") else target


def cargo_build(target: str) -> list[str]:
    """How to build for `target`: with zig as the linker (cargo-zigbuild), except for Windows.

    Windows is linked by Debian's mingw-w64 (`x86_64-w64-mingw32-gcc`, rustc's default linker for
    the -gnu target; `make setup` installs it): maturin 1.16's zig path writes a module definition
    file exporting `PyInit_tenure._native` (the whole dotted module name) where pyo3 defines
    `PyInit__native`, and lld refuses the wheel's link; one linker for every Windows artefact."""
    return ["cargo", "build"] if os_of(target) == "windows" else ["cargo", "zigbuild"]


def maturin_linker(target: str) -> list[str]:
    return [] if os_of(target) == "windows" else ["--zig"]


def build_runtime_bin(rust_target: str, name: str, env: dict[str, str]) -> Path:
    """A binary of tenure-runtime (`tenure-supervise` or `tenure`) for `rust_target`, checked
    (macOS, Windows) before it ships (cargo keeps it: the wheels and npm packages of one CPU
    share the helper)."""
    # Its own target dir: static linking (+crt-static, musl's default, which build_env turns off
    # for the addons) would otherwise rebuild the addons' dependencies at every switch.
    target_dir = Path(env["CARGO_TARGET_DIR"]) / "helper"
    env = dict(target_env(rust_target, env), **RELEASE_SETTINGS, CARGO_TARGET_DIR=str(target_dir))
    if os_of(rust_target) == "linux":
        env[f"CARGO_TARGET_{rust_target.upper().replace('-', '_')}_RUSTFLAGS"] = "-C target-feature=+crt-static"
    run([*cargo_build(rust_target), "--release", "--locked", "-p", "tenure-runtime", "--bin", name,
         "--target", rust_target], env=env)
    built = target_dir / rust_target / "release" / exe(rust_target, name)
    if os_of(rust_target) != "linux":
        check_or_exit(built.read_bytes(), rust_target, built.name)
    return built


def build_helper(target: str, env: dict[str, str]) -> tuple[Path, str]:
    """`tenure-supervise` for an artefact for `target`, and the file name it ships under there
    (the one python/tenure/cli.py and node/lib/native.js look for on that system)."""
    rust_target = helper_target(target)
    return build_runtime_bin(rust_target, HELPER, env), exe(rust_target, HELPER)


def check_or_exit(data: bytes, target: str, name: str, *, python_extension: bool = False) -> None:
    try:
        found = check_native(data, target, name, python_extension=python_extension)
    except binaries.BinaryError as e:
        sys.exit(f"dist: {e}")
    print(f"dist: {name} for {target}: {found.min_os}" + (f", signature {found.signature}" if found.signature else ""))


def add_to_wheel(wheel: Path, arcname: str, path: Path, replaces: tuple[str, ...] = ()) -> None:
    """Adds `path` to `wheel` as `arcname`, executable, with its line in RECORD (the wheel format's
    `name,sha256=<urlsafe base64 without padding>,size`), and drops the members named in
    `replaces` with their lines. maturin cannot put a binary of another target into the package
    (its `include` takes files from the source tree as they are, and this one differs per target),
    so the wheel it built is rewritten with the helper in it."""
    dropped = {arcname, *replaces}
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        (record,) = [n for n in src.namelist() if n.endswith(".dist-info/RECORD")]
        for item in src.infolist():
            # A copy maturin may have taken from the source tree (a development build) is replaced.
            if item.filename == record or item.filename in dropped:
                continue
            dst.writestr(item, src.read(item.filename))
        info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o100755 << 16  # a regular file, rwxr-xr-x: pip keeps the x bit
        info.compress_type = zipfile.ZIP_DEFLATED
        dst.writestr(info, data)
        lines = [line for line in src.read(record).decode().splitlines() if line.split(",", 1)[0] not in dropped]
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
        compatibility = ["--compatibility", w.compatibility] if w.compatibility else []
        run(
            ["maturin", "build", "--release", *maturin_linker(w.target), "--target", w.target, *compatibility,
             "-o", tmp],
            cwd=ROOT / "python",
            env=target_env(w.target, env),
        )
        (built,) = Path(tmp).glob("*.whl")
        if os_of(w.target) != "linux":
            with zipfile.ZipFile(built) as z:
                (ext,) = [n for n in z.namelist() if n.startswith("tenure/_native.") and not n.endswith(".pyi")]
                check_or_exit(z.read(ext), w.target, f"{built.name}:{ext}", python_extension=True)
        helper, name = build_helper(w.target, env)
        # maturin takes python/tenure/ as it is: a development build's helper (`make python-dev`,
        # for this machine) may be there under either name, and would ship beside this target's.
        add_to_wheel(built, f"tenure/{name}", helper, replaces=(f"tenure/{HELPER}", f"tenure/{HELPER}.exe"))
        for old in before:
            if old.name.split("-")[-1] == built.name.split("-")[-1]:
                old.unlink()  # the same platform from an earlier run (maybe another version)
        dest = out / built.name
        shutil.move(str(built), dest)
    if w.audit_tag is None:
        if os_of(w.target) == "linux":
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
    build = dict(target_env(target, env), **RELEASE_SETTINGS)
    with tempfile.TemporaryDirectory() as libnode:
        if os_of(target) == "windows":
            build.update(windows_addon_env(Path(libnode)))
        run([*cargo_build(target), "--release", "--locked", "-p", "tenure-node", "--target", zig_target(target)],
            env=build)
    built = Path(env["CARGO_TARGET_DIR"]) / target / "release" / cdylib(target, "tenure_node")
    if os_of(target) != "linux":
        check_or_exit(built.read_bytes(), target, f"{pkg_dir.name}/{manifest['main']}")
    shutil.copy2(built, pkg_dir / manifest["main"])
    helper, name = build_helper(target, env)
    shutil.copy2(helper, pkg_dir / name)  # node/lib/native.js finds it there
    copy_licenses(pkg_dir)
    return npm_pack(pkg_dir, out)  # prepack checks the addon's format and machine


def windows_addon_env(libnode: Path) -> dict[str, str]:
    """What the napi crate's build script needs for x86_64-pc-windows-gnu. It was written for a
    MinGW-built Node.js (libnode.dll): it refuses to run unless it finds a libnode.dll, and then
    links `-lnode`. The official Node.js for Windows is one node.exe with no libnode.dll, and the
    addon needs no import from either: napi-sys's default `dyn-symbols` looks every Node-API
    function up in the host process when the addon loads. So the build script is shown an empty
    libnode.dll, and `-lnode` an empty archive, which adds no import (tests/dist checks the
    addon's imports: Windows DLLs only)."""
    (libnode / "libnode.dll").write_bytes(b"")
    (libnode / "libnode.a").write_bytes(b"!<arch>\n")
    return {"LIBNODE_PATH": str(libnode)}


def build_cli(target: str, out: Path, version: str, env: dict[str, str]) -> Path:
    """The `tenure` command line for `target` alone, with the licenses: a .tar.gz (mode 755 kept)
    for Linux and macOS, a .zip for Windows. On Linux it is the static musl build, like the helper.

    The Windows archive also holds `tenure-supervise.exe` beside `tenure.exe`, where the runtime
    looks for its supervisor first: without it, `tenure.exe` starts itself again as the supervisor
    of a leader-only command, the whole runtime idling in a second process."""
    rust_target = cli_target(target)
    binary = build_runtime_bin(rust_target, "tenure", env)
    stem = f"tenure-{version}-{target}"
    for old in out.glob(f"tenure-*-{target}.*"):
        old.unlink()
    members = [(binary, exe(rust_target, "tenure"), 0o755)]
    if os_of(target) == "windows":
        helper, name = build_helper(target, env)
        members.append((helper, name, 0o755))
    members += [(ROOT / n, n, 0o644) for n in LICENSES]
    if os_of(target) == "windows":
        dest = out / f"{stem}.zip"
        with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
            for path, name, mode in members:
                info = zipfile.ZipInfo(f"{stem}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, path.read_bytes())
        return dest
    dest = out / f"{stem}.tar.gz"
    # Fixed owner, times and order, so the same binary gives the same archive.
    with tarfile.open(dest, "w:gz", format=tarfile.PAX_FORMAT) as t:
        for path, name, mode in members:
            info = tarfile.TarInfo(f"{stem}/{name}")
            info.size, info.mode, info.mtime = path.stat().st_size, mode, 315532800
            with open(path, "rb") as f:
                t.addfile(info, f)
    return dest


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


def record_timings(path: Path, timings: list[tuple[str, float]]) -> None:
    """Each part's wall clock in this run, over the same part's from earlier runs (a --only run
    refreshes its own parts): the build-time table of ARTEFACTS.md."""
    earlier = json.loads(path.read_text())["parts"] if path.exists() else {}
    parts = {p: earlier[p] for p in PARTS if p in earlier} | dict(timings)
    parts = {p: round(parts[p], 1) for p in PARTS if p in parts}
    jobs = os.environ.get("CARGO_BUILD_JOBS", str(os.cpu_count()))
    path.write_text(json.dumps({"cpus": os.cpu_count(), "jobs": jobs, "parts": parts}, indent=2) + "\n")


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
    if any("windows" in p or "win32" in p for p in parts) and shutil.which("x86_64-w64-mingw32-gcc") is None:
        sys.exit("dist: x86_64-w64-mingw32-gcc (links the Windows artefacts) is not on PATH: run `make setup` "
                 "(Debian's gcc-mingw-w64-x86-64)")

    version = workspace_version()
    out: Path = args.out.resolve()
    for sub in ("python", "npm", "cli", "wasm"):
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
        elif part.startswith("cli-"):
            build_cli(part.removeprefix("cli-"), out / "cli", version, env)
        else:
            build_addon(ROOT / "npm" / part.removeprefix("npm-"), out / "npm", env)
        timings.append((part, time.monotonic() - started))
    record_timings(out / artefacts.TIMINGS, timings)
    print(artefacts.write(out, out / "ARTEFACTS.md"))
    print("dist: time per part: " + ", ".join(f"{p} {s:.0f} s" for p, s in timings))


if __name__ == "__main__":
    main()
