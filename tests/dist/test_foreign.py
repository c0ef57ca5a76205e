"""The macOS and Windows artefacts in dist/, which this Linux machine builds but cannot run (Windows
runs under Wine in test_wine.py): each inspected with LIEF (scripts/dist/binaries.py). Every
binary is of the right format and CPU, imports only what a bare macOS or Windows has, states the
oldest macOS it was built for, and on arm64 macOS carries an ad-hoc signature whose page hashes
match the file (the kernel kills arm64 code without one). The wheels' tags and the npm packages'
`os`/`cpu` say the same; the standalone command line archives hold the binary and the licenses
(and, for Windows, tenure-supervise.exe beside tenure.exe). Every Windows artefact carries the same
tenure-supervise.exe, where its host looks for it.
"""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, VERSION, artefact
from elftools.elf.elffile import ELFFile
from test_artefacts import check_helper, tgz_files, tgz_modes

sys.path.insert(0, str(ROOT / "scripts" / "dist"))

import binaries
from platforms import MACOS_DEPLOYMENT_TARGET, check_native

MACOS = {"aarch64": "aarch64-apple-darwin", "x86_64": "x86_64-apple-darwin"}
WHEEL_ARCH = {"aarch64": "arm64", "x86_64": "x86_64"}
WINDOWS = "x86_64-pc-windows-gnu"
# The supervisor helper's name in the Windows artefacts: what python/tenure/cli.py,
# node/lib/native.js and the runtime (beside tenure.exe) look for there.
WINDOWS_HELPER = "tenure-supervise.exe"


def check_windows_helper(data: bytes, where: str) -> None:
    """tenure-supervise.exe: an x86-64 PE executable (not a DLL) that imports Windows' own DLLs
    only, neither MinGW's runtime nor python3.dll."""
    p = binaries.pe(data, f"{where} {WINDOWS_HELPER}")
    assert p.cpu == "x86_64" and not p.is_dll, (where, p.cpu, p.is_dll)
    assert "kernel32.dll" in p.imports, (where, p.imports)
    check_native(data, WINDOWS, f"{where} {WINDOWS_HELPER}")


def wheel_tag(wheel: Path) -> tuple[str, dict[str, str]]:
    with zipfile.ZipFile(wheel) as z:
        text = z.read(f"tenure-{VERSION}.dist-info/WHEEL").decode()
    fields = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    return fields["Tag"], fields


@pytest.mark.parametrize("arch", sorted(MACOS))
def test_macos_wheel(arch: str) -> None:
    target = MACOS[arch]
    floor = MACOS_DEPLOYMENT_TARGET[target].replace(".", "_")
    wheel = artefact(f"python/tenure-{VERSION}-cp310-abi3-macosx_*_{WHEEL_ARCH[arch]}.whl")
    tag, fields = wheel_tag(wheel)
    # The tag pip matches against the machine: the oldest macOS is the deployment target.
    assert tag == f"cp310-abi3-macosx_{floor}_{WHEEL_ARCH[arch]}", tag
    assert fields["Root-Is-Purelib"] == "false"
    with zipfile.ZipFile(wheel) as z:
        ext = z.read("tenure/_native.abi3.so")
        helper = z.getinfo("tenure/tenure-supervise")
        helper_data = z.read(helper)
        record = z.read(f"tenure-{VERSION}.dist-info/RECORD").decode()
    m = binaries.macho(ext, "_native.abi3.so")
    assert (m.cpu, m.file_type) == (arch, "DYLIB") or (m.cpu, m.file_type) == (arch, "BUNDLE"), m
    assert m.min_os == MACOS_DEPLOYMENT_TARGET[target]
    assert binaries.foreign_macos_libraries(m) == [], m.libraries
    assert "/usr/lib/libSystem.B.dylib" in m.libraries
    # Python's symbols are looked up in the interpreter at load (-undefined dynamic_lookup): the
    # extension must not name a libpython, which would tie it to one install.
    assert not [lib for lib in m.libraries if "python" in lib.lower()], m.libraries
    check_native(ext, target, "_native.abi3.so", python_extension=True)
    assert "_PyInit__native" in m.exports  # what `import tenure._native` looks up (C name PyInit__native)
    assert helper.external_attr >> 16 & 0o111, "tenure-supervise is not executable"
    h = binaries.macho(helper_data, "tenure-supervise")
    assert (h.cpu, h.file_type) == (arch, "EXECUTE"), h
    check_native(helper_data, target, "tenure-supervise")
    assert "\ntenure/tenure-supervise,sha256=" in record


def test_arm64_macos_code_is_signed_and_the_signature_holds() -> None:
    """Every arm64 Mach-O shipped: the ad-hoc signature zig's linker writes (linker-signed, as
    Apple's ld64 does) is there, and each page's SHA-256 matches its code slot."""
    wheel = artefact(f"python/tenure-{VERSION}-cp310-abi3-macosx_11_0_arm64.whl")
    with zipfile.ZipFile(wheel) as z:
        shipped = {"wheel extension": z.read("tenure/_native.abi3.so"),
                   "wheel tenure-supervise": z.read("tenure/tenure-supervise")}
    npm = tgz_files(artefact(f"npm/tenure-darwin-arm64-{VERSION}.tgz"))
    shipped |= {"npm addon": npm["tenure.darwin-arm64.node"], "npm tenure-supervise": npm["tenure-supervise"]}
    shipped["command line"] = archive_members(artefact(f"cli/tenure-{VERSION}-aarch64-apple-darwin.tar.gz"))["tenure"]
    for what, data in shipped.items():
        sig = binaries.macho(data, what).signature
        assert sig is not None, f"{what}: no code signature"
        assert sig.adhoc and sig.hash_type == "sha256", (what, sig)
        assert sig.code_limit <= len(data) and sig.code_slots > 0, (what, sig)


def test_a_changed_page_breaks_the_signature_check() -> None:
    wheel = artefact(f"python/tenure-{VERSION}-cp310-abi3-macosx_11_0_arm64.whl")
    with zipfile.ZipFile(wheel) as z:
        data = bytearray(z.read("tenure/tenure-supervise"))
    data[len(data) // 3] ^= 0xFF
    with pytest.raises(binaries.BinaryError, match="does not match its code signature slot"):
        binaries.macho(bytes(data), "tenure-supervise")


def test_the_checks_refuse_the_wrong_cpu_and_foreign_libraries() -> None:
    x64 = tgz_files(artefact(f"npm/tenure-darwin-x64-{VERSION}.tgz"))["tenure.darwin-x64.node"]
    with pytest.raises(binaries.BinaryError, match="Mach-O for x86_64, expected aarch64"):
        check_native(x64, "aarch64-apple-darwin", "addon")
    m = binaries.macho(x64, "addon")
    brewed = dataclasses.replace(m, libraries=(*m.libraries, "/opt/homebrew/lib/libssl.3.dylib"))
    assert binaries.foreign_macos_libraries(brewed) == ["/opt/homebrew/lib/libssl.3.dylib"]
    # A MinGW runtime DLL is not part of Windows (same length as KERNEL32.dll, so the file stays valid).
    win = tgz_files(artefact(f"npm/tenure-win32-x64-{VERSION}.tgz"))["tenure.win32-x64.node"]
    assert b"KERNEL32.dll" in win
    with pytest.raises(binaries.BinaryError, match="libgcc_s.dll"):
        check_native(win.replace(b"KERNEL32.dll", b"libgcc_s.dll"), "x86_64-pc-windows-gnu", "addon")


def test_windows_wheel() -> None:
    wheel = artefact(f"python/tenure-{VERSION}-cp310-abi3-win_amd64.whl")
    tag, fields = wheel_tag(wheel)
    assert (tag, fields["Root-Is-Purelib"]) == ("cp310-abi3-win_amd64", "false")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        ext = z.read("tenure/_native.pyd")
    p = binaries.pe(ext, "_native.pyd")
    assert p.cpu == "x86_64" and p.is_dll
    # The stable ABI's python3.dll, not one version's python31X.dll: abi3 holds on every CPython 3.10+.
    assert "python3.dll" in p.imports, p.imports
    assert not [d for d in p.imports if d.startswith("python3") and d != "python3.dll"], p.imports
    check_native(ext, "x86_64-pc-windows-gnu", "_native.pyd", python_extension=True)
    # What `import tenure._native` calls: PyInit_ and the last part of the module name.
    assert "PyInit__native" in p.exports, p.exports
    # The supervisor helper beside the extension, where python/tenure/cli.py looks for it on
    # Windows, listed in RECORD (pip checks what it installs against it).
    assert [n for n in names if "tenure-supervise" in n] == [f"tenure/{WINDOWS_HELPER}"], names
    with zipfile.ZipFile(wheel) as z:
        check_windows_helper(z.read(f"tenure/{WINDOWS_HELPER}"), "wheel")
        record = z.read(f"tenure-{VERSION}.dist-info/RECORD").decode()
    assert f"\ntenure/{WINDOWS_HELPER},sha256=" in record


NPM_FOREIGN = {
    "darwin-arm64": ("darwin", "arm64", "aarch64-apple-darwin"),
    "darwin-x64": ("darwin", "x64", "x86_64-apple-darwin"),
    "win32-x64": ("win32", "x64", "x86_64-pc-windows-gnu"),
}


@pytest.mark.parametrize("platform", sorted(NPM_FOREIGN))
def test_npm_foreign_platform_package(platform: str) -> None:
    os_, cpu, target = NPM_FOREIGN[platform]
    tgz = artefact(f"npm/tenure-{platform}-{VERSION}.tgz")
    files = tgz_files(tgz)
    manifest = json.loads(files["package.json"])
    assert manifest["name"] == f"tenure-{platform}" and manifest["version"] == VERSION
    # node/lib/native.js asks for tenure-${process.platform}-${process.arch}: these two fields.
    assert (manifest["os"], manifest["cpu"], "libc" in manifest) == ([os_], [cpu], False)
    assert manifest["tenure"]["rustTarget"] == target
    assert {"LICENSE-MIT", "LICENSE-APACHE", "README.md", manifest["main"]} <= set(files)
    addon = files[manifest["main"]]
    found = check_native(addon, target, manifest["main"])
    if os_ == "darwin":
        m = binaries.macho(addon, manifest["main"])
        assert m.file_type in ("DYLIB", "BUNDLE") and not [lib for lib in m.libraries if "node" in lib], m
        assert found.min_os == f"macOS {MACOS_DEPLOYMENT_TARGET[target]}"
        assert "_napi_register_module_v1" in m.exports  # what Node.js calls when it loads the addon
        assert tgz_modes(tgz)["tenure-supervise"] & 0o111
        assert binaries.macho(files["tenure-supervise"], "tenure-supervise").file_type == "EXECUTE"
        check_native(files["tenure-supervise"], target, "tenure-supervise")
    else:
        p = binaries.pe(addon, manifest["main"])
        # Node-API is looked up in the host process at load (napi-sys dyn-symbols): the addon
        # names neither node.exe nor a MinGW libnode.dll, so the official Node.js loads it.
        assert p.is_dll and not [d for d in p.imports if "node" in d], p.imports
        assert "napi_register_module_v1" in p.exports, p.exports
        # Beside the addon, where node/lib/native.js looks for it on Windows.
        assert WINDOWS_HELPER in manifest["files"] and "tenure-supervise" not in files
        check_windows_helper(files[WINDOWS_HELPER], "npm")


def archive_members(path: Path) -> dict[str, bytes]:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as z:
            return {n.split("/", 1)[1]: z.read(n) for n in z.namelist()}
    with tarfile.open(path) as t:
        return {m.name.split("/", 1)[1]: t.extractfile(m).read()  # type: ignore[union-attr]
                for m in t.getmembers() if m.isfile()}


CLI = {
    "x86_64-unknown-linux-musl": "x86_64",
    "aarch64-unknown-linux-musl": "aarch64",
    "aarch64-apple-darwin": "aarch64",
    "x86_64-apple-darwin": "x86_64",
    "x86_64-pc-windows-gnu": "x86_64",
}


@pytest.mark.parametrize("target", sorted(CLI))
def test_command_line_archive(target: str) -> None:
    windows = "windows" in target
    path = artefact(f"cli/tenure-{VERSION}-{target}.{'zip' if windows else 'tar.gz'}")
    members = archive_members(path)
    binary = "tenure.exe" if windows else "tenure"
    # Windows: the supervisor helper beside tenure.exe, where the runtime looks for it first.
    helper = {WINDOWS_HELPER} if windows else set()
    assert set(members) == {binary, "LICENSE-MIT", "LICENSE-APACHE", *helper}, set(members)
    data = members[binary]
    if "linux" in target:
        with tarfile.open(path) as t:
            assert t.getmember(f"tenure-{VERSION}-{target}/tenure").mode & 0o111
        check_helper(data, 0o755, CLI[target])  # static, no interpreter, right machine
        assert ELFFile(io.BytesIO(data))["e_type"] in ("ET_EXEC", "ET_DYN")
    elif windows:
        p = binaries.pe(data, binary)
        assert p.cpu == "x86_64" and not p.is_dll
        check_native(data, target, binary)
        check_windows_helper(members[WINDOWS_HELPER], "command line")
    else:
        with tarfile.open(path) as t:
            assert t.getmember(f"tenure-{VERSION}-{target}/tenure").mode & 0o111
        assert binaries.macho(data, binary).file_type == "EXECUTE"
        check_native(data, target, binary)


def test_one_windows_supervisor_ships_everywhere() -> None:
    """The wheel, the npm package and the command line archive carry the same
    tenure-supervise.exe, and it is the supervisor alone, not a copy of tenure.exe; the import
    check refuses it with a MinGW runtime DLL in its imports (same length as KERNEL32.dll, so the
    file stays valid)."""
    with zipfile.ZipFile(artefact(f"python/tenure-{VERSION}-cp310-abi3-win_amd64.whl")) as z:
        wheel = z.read(f"tenure/{WINDOWS_HELPER}")
    npm = tgz_files(artefact(f"npm/tenure-win32-x64-{VERSION}.tgz"))[WINDOWS_HELPER]
    cli = archive_members(artefact(f"cli/tenure-{VERSION}-{WINDOWS}.zip"))
    assert wheel == npm == cli[WINDOWS_HELPER], "the Windows artefacts carry different tenure-supervise.exe builds"
    assert len(wheel) < len(cli["tenure.exe"]), (len(wheel), len(cli["tenure.exe"]))
    assert b"KERNEL32.dll" in wheel
    with pytest.raises(binaries.BinaryError, match="libgcc_s.dll"):
        check_native(wheel.replace(b"KERNEL32.dll", b"libgcc_s.dll"), WINDOWS, WINDOWS_HELPER)


def test_linux_command_line_runs() -> None:
    """The x86_64 Linux command line is the one this machine can run: it answers --version."""
    members = archive_members(artefact(f"cli/tenure-{VERSION}-x86_64-unknown-linux-musl.tar.gz"))
    out = subprocess.run(["sh", "-c", 'f=$(mktemp); cat > "$f"; chmod +x "$f"; "$f" --version; rm -f "$f"'],
                         input=members["tenure"], capture_output=True, check=False)
    assert out.returncode == 0 and VERSION.encode() in out.stdout, out


def test_prepack_refuses_a_mach_o_for_the_other_cpu(tmp_path: Path) -> None:
    pkg = tmp_path / "darwin-arm64"
    shutil.copytree(ROOT / "npm" / "darwin-arm64", pkg,
                    ignore=shutil.ignore_patterns("*.node", "LICENSE-*", "tenure-supervise"))
    shutil.copy2(ROOT / "npm" / "prepack-addon.js", tmp_path / "prepack-addon.js")
    x64 = tgz_files(artefact(f"npm/tenure-darwin-x64-{VERSION}.tgz"))
    arm = tgz_files(artefact(f"npm/tenure-darwin-arm64-{VERSION}.tgz"))
    (pkg / "tenure.darwin-arm64.node").write_bytes(x64["tenure.darwin-x64.node"])
    (pkg / "tenure-supervise").write_bytes(arm["tenure-supervise"])
    (pkg / "tenure-supervise").chmod(0o755)
    out = subprocess.run(["npm", "pack", "--dry-run"], cwd=pkg, capture_output=True, text=True, check=False)
    assert out.returncode != 0 and "macho machine 16777223" in out.stderr, out.stderr
    # A Windows addon in the macOS package: the wrong format.
    (pkg / "tenure.darwin-arm64.node").write_bytes(
        tgz_files(artefact(f"npm/tenure-win32-x64-{VERSION}.tgz"))["tenure.win32-x64.node"])
    out = subprocess.run(["npm", "pack", "--dry-run"], cwd=pkg, capture_output=True, text=True, check=False)
    assert out.returncode != 0 and "is a pe file, but the package says os darwin" in out.stderr, out.stderr
    # The right addon (and the licenses the package lists): packed.
    (pkg / "tenure.darwin-arm64.node").write_bytes(arm["tenure.darwin-arm64.node"])
    for name in ("LICENSE-MIT", "LICENSE-APACHE"):
        shutil.copy2(ROOT / name, pkg / name)
    out = subprocess.run(["npm", "pack", "--dry-run"], cwd=pkg, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


def test_prepack_of_the_windows_package_wants_its_supervisor(tmp_path: Path) -> None:
    """npm/win32-x64 packs only with tenure-supervise.exe beside the addon, and a PE one: a
    missing helper or an ELF file under that name is refused. No execute bit is asked for (Windows
    runs a file by its name; a package packed there may have none)."""
    pkg = tmp_path / "win32-x64"
    shutil.copytree(ROOT / "npm" / "win32-x64", pkg, ignore=shutil.ignore_patterns("*.node", "LICENSE-*", "*.exe"))
    shutil.copy2(ROOT / "npm" / "prepack-addon.js", tmp_path / "prepack-addon.js")
    for name in ("LICENSE-MIT", "LICENSE-APACHE"):
        shutil.copy2(ROOT / name, pkg / name)
    files = tgz_files(artefact(f"npm/tenure-win32-x64-{VERSION}.tgz"))
    (pkg / "tenure.win32-x64.node").write_bytes(files["tenure.win32-x64.node"])

    def pack() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["npm", "pack", "--dry-run"], cwd=pkg, capture_output=True, text=True, check=False)

    out = pack()
    assert out.returncode != 0 and f"the supervisor helper {WINDOWS_HELPER} is not there" in out.stderr, out.stderr
    elf = bytearray(64)
    elf[:4], elf[18] = b"\x7fELF", 62  # an x86-64 ELF header's magic and e_machine
    (pkg / WINDOWS_HELPER).write_bytes(bytes(elf))
    out = pack()
    assert out.returncode != 0 and f"{WINDOWS_HELPER} is a elf file, but the package says os win32" in out.stderr, \
        out.stderr
    (pkg / WINDOWS_HELPER).write_bytes(files[WINDOWS_HELPER])
    (pkg / WINDOWS_HELPER).chmod(0o644)
    out = pack()
    assert out.returncode == 0, out.stderr
