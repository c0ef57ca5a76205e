"""The targets `make dist` builds for and what differs between their operating systems: file
names, the oldest OS each is built for, which supervisor helper goes with it, and the checks a
native binary for it must pass before it ships (build.py) and in tests/dist.

Linux binaries are ELF and checked by auditwheel / the ELF tests; macOS and Windows binaries are
checked here with binaries.py (LIEF).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import binaries

# The oldest glibc the Linux -gnu artefacts run on (manylinux2014).
GLIBC_FLOOR = "2.17"
# The oldest macOS each Apple target is built for: MACOSX_DEPLOYMENT_TARGET, which rustc writes into
# every binary's LC_BUILD_VERSION and maturin into the wheel's platform tag. Both are the oldest
# rustc's targets support (rustc's platform-support pages: 11.0 for aarch64-apple-darwin, the first
# macOS on Apple silicon; 10.12 for x86_64-apple-darwin).
MACOS_DEPLOYMENT_TARGET = {"aarch64-apple-darwin": "11.0", "x86_64-apple-darwin": "10.12"}
# rustc's x86_64-pc-windows-gnu target supports Windows 10 and later (its standard library uses
# APIs newer Windows have); a PE file does not record that floor, so it is stated, not read.
WINDOWS_FLOOR = "10"


def os_of(target: str) -> str:
    if "-linux-" in target:
        return "linux"
    if target.endswith("-apple-darwin"):
        return "macos"
    if "-windows-" in target:
        return "windows"
    raise ValueError(f"unknown target {target!r}: not Linux, macOS or Windows")


def arch_of(target: str) -> str:
    return target.split("-")[0]


def target_env(target: str, env: dict[str, str]) -> dict[str, str]:
    """`env` with what a build for `target` needs besides: the macOS deployment target."""
    if target in MACOS_DEPLOYMENT_TARGET:
        return dict(env, MACOSX_DEPLOYMENT_TARGET=MACOS_DEPLOYMENT_TARGET[target])
    return env


def helper_target(target: str) -> str:
    """The Rust target `tenure-supervise` is built for to go with an artefact for `target`.

    On Linux: the same CPU, musl, linked statically. A static executable needs no C library on the
    machine, so one binary serves the glibc and the musl packages alike, and it maps no shared
    library: its idle memory is the program alone (docs/command.md). macOS has no static linking
    (every program links libSystem), and a Windows GNU-toolchain program imports Windows' own DLLs
    only (check_native refuses one that names MinGW's runtime DLLs): the target itself."""
    if os_of(target) == "linux":
        return f"{arch_of(target)}-unknown-linux-musl"
    return target


def cli_target(target: str) -> str:
    """The Rust target the standalone `tenure` command line is built for (static musl on Linux,
    as the helper)."""
    return helper_target(target)


def exe(target: str, name: str) -> str:
    return f"{name}.exe" if os_of(target) == "windows" else name


def cdylib(target: str, crate: str) -> str:
    """The file name cargo gives a cdylib of `crate` for `target`."""
    return {"linux": f"lib{crate}.so", "macos": f"lib{crate}.dylib", "windows": f"{crate}.dll"}[os_of(target)]


def min_os(target: str) -> str:
    """The oldest OS (or C library) an artefact for `target` is built for, in words."""
    system = os_of(target)
    if system == "linux":
        return f"glibc {GLIBC_FLOOR}" if target.endswith("-gnu") else "musl 1.2"
    if system == "macos":
        return f"macOS {MACOS_DEPLOYMENT_TARGET[target]}"
    return f"Windows {WINDOWS_FLOOR}"


@dataclass(frozen=True)
class Checked:
    """What check_native found: the facts an artefact list reports."""

    min_os: str
    signature: str | None  # macOS: "ad-hoc, linker-signed" / "ad-hoc"; None elsewhere


def check_native(data: bytes, target: str, name: str, *, python_extension: bool = False) -> Checked:
    """Refuses (binaries.BinaryError) a macOS or Windows binary that is not for `target`'s CPU,
    loads a library a bare system lacks, states another oldest OS than the one it was built for,
    or (arm64 macOS) carries no valid ad-hoc signature. `python_extension`: it may import the
    stable-ABI python3.dll (Windows)."""
    system, arch = os_of(target), arch_of(target)
    if system == "macos":
        m = binaries.macho(data, name)
        if m.cpu != arch:
            raise binaries.BinaryError(f"{name}: Mach-O for {m.cpu}, expected {arch}")
        foreign = binaries.foreign_macos_libraries(m)
        if foreign:
            raise binaries.BinaryError(f"{name}: loads libraries that are not part of macOS: {foreign}")
        want = MACOS_DEPLOYMENT_TARGET[target]
        if m.min_os != want:
            raise binaries.BinaryError(f"{name}: built for macOS {m.min_os}, expected {want}")
        signature = None
        if m.signature is not None:
            signature = "ad-hoc" + (", linker-signed" if m.signature.linker_signed else "")
            if not m.signature.adhoc:
                raise binaries.BinaryError(f"{name}: its code signature is not ad hoc (flags {m.signature.flags:#x})")
        elif arch == "aarch64":
            # The kernel refuses to run arm64 code without a valid signature (at least ad hoc).
            raise binaries.BinaryError(f"{name}: arm64 Mach-O without a code signature: macOS would kill it")
        return Checked(f"macOS {m.min_os}", signature)
    if system == "windows":
        p = binaries.pe(data, name)
        if p.cpu != arch:
            raise binaries.BinaryError(f"{name}: PE for {p.cpu}, expected {arch}")
        allowed = frozenset({"python3.dll"}) if python_extension else frozenset()
        foreign = binaries.foreign_windows_dlls(p, allowed)
        if foreign:
            raise binaries.BinaryError(f"{name}: imports DLLs that are not part of Windows: {foreign}")
        return Checked(min_os(target), None)
    raise ValueError(f"check_native is for macOS and Windows binaries, not {target}")
