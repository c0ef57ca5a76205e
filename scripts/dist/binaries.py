"""What a Mach-O or PE binary is, read with LIEF (PyPI `lief`, pinned in requirements-dev.txt): its
CPU, the libraries it imports, the oldest OS it says it runs on, and, for Mach-O, whether its code
signature holds. `make dist` (build.py) refuses to ship a binary that fails these checks and
tests/dist checks the shipped artefacts with the same functions.

The code signature is checked here rather than by a signing tool: macOS verifies an ad-hoc
signature by hashing every page of the file up to the signature's code limit and comparing each
hash with the CodeDirectory's code slots, so that is what `verify_code_signature` does (the
layout is Apple's `cs_blobs.h`: big-endian blobs in a SuperBlob at LC_CODE_SIGNATURE's offset).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

import lief

# LIEF logs what it cannot parse on stderr; every fact used here is checked and raised instead.
lief.logging.disable()

# Mach-O cputype and PE machine of each architecture the artefacts are built for.
MACHO_CPU = {"aarch64": lief.MachO.Header.CPU_TYPE.ARM64, "x86_64": lief.MachO.Header.CPU_TYPE.X86_64}
PE_MACHINE = {"x86_64": lief.PE.Header.MACHINE_TYPES.AMD64, "aarch64": lief.PE.Header.MACHINE_TYPES.ARM64}

# cs_blobs.h
CSMAGIC_EMBEDDED_SIGNATURE = 0xFADE0CC0
CSMAGIC_CODEDIRECTORY = 0xFADE0C02
CSSLOT_CODEDIRECTORY = 0
CS_ADHOC = 0x2
CS_LINKER_SIGNED = 0x20000
HASH_TYPES = {1: ("sha1", 20), 2: ("sha256", 32), 3: ("sha256", 20), 4: ("sha384", 48)}

# The libraries every macOS has: the system's dylibs under /usr/lib and its frameworks. A binary
# that names anything else (a Homebrew prefix, an @rpath library) would not load on a bare system.
MACOS_SYSTEM_PREFIXES = ("/usr/lib/", "/System/Library/Frameworks/")

# The DLLs every Windows 10 has. A GNU-toolchain binary that names libgcc_s_seh-1.dll,
# libwinpthread-1.dll or libstdc++-6.dll would need MinGW's runtime installed beside it;
# api-ms-win-* are Windows' API sets; python3.dll is the interpreter that loads a stable-ABI
# extension (checked separately: only the extension may import it).
WINDOWS_SYSTEM_DLLS = frozenset(
    d.lower()
    for d in (
        "kernel32.dll", "ntdll.dll", "advapi32.dll", "bcrypt.dll", "bcryptprimitives.dll", "ws2_32.dll",
        "userenv.dll", "msvcrt.dll", "ucrtbase.dll", "user32.dll", "shell32.dll", "secur32.dll",
        "crypt32.dll", "iphlpapi.dll", "dbghelp.dll", "ole32.dll", "oleaut32.dll", "synchronization.dll",
    )
)


class BinaryError(Exception):
    """A binary is not what its artefact says it is; the message names the file and the fact."""


@dataclass(frozen=True)
class CodeSignature:
    identifier: str
    flags: int
    hash_type: str
    page_size: int
    code_slots: int
    code_limit: int

    @property
    def adhoc(self) -> bool:
        return bool(self.flags & CS_ADHOC)

    @property
    def linker_signed(self) -> bool:
        return bool(self.flags & CS_LINKER_SIGNED)


@dataclass(frozen=True)
class MachO:
    cpu: str  # "aarch64" or "x86_64"
    file_type: str  # "EXECUTE", "DYLIB", "BUNDLE"
    min_os: str  # LC_BUILD_VERSION (or LC_VERSION_MIN_MACOSX) minos, e.g. "11.0"
    libraries: tuple[str, ...]  # LC_LOAD_DYLIB and friends, the binary's own id left out
    signature: CodeSignature | None
    exports: tuple[str, ...]  # exported symbols (with Mach-O's leading underscore)


@dataclass(frozen=True)
class PE:
    cpu: str
    is_dll: bool
    imports: tuple[str, ...]  # DLL names, lower case, delay-loaded ones included
    exports: tuple[str, ...]  # exported function names
    subsystem_version: str  # the optional header's major.minor subsystem version


def _version(v: list[int]) -> str:
    major, minor, patch = (list(v) + [0, 0, 0])[:3]
    return f"{major}.{minor}" + (f".{patch}" if patch else "")


def macho(data: bytes, name: str) -> MachO:
    fat = lief.MachO.parse(data)
    if fat is None or fat.size != 1:
        raise BinaryError(f"{name}: not a thin Mach-O file")
    b = fat.at(0)
    cpu = {v: k for k, v in MACHO_CPU.items()}.get(b.header.cpu_type)
    if cpu is None:
        raise BinaryError(f"{name}: Mach-O cputype {b.header.cpu_type} is neither arm64 nor x86_64")
    if b.has_build_version:
        min_os = _version(b.build_version.minos)
    elif b.has_version_min:
        min_os = _version(b.version_min.version)
    else:
        raise BinaryError(f"{name}: no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX: the oldest macOS is not stated")
    # LIEF lists the dylib's own LC_ID_DYLIB among its libraries: that one is no import.
    libraries = tuple(lib.name for lib in b.libraries if lib.command != lief.MachO.LoadCommand.TYPE.ID_DYLIB)
    signature = None
    if b.has_code_signature:
        cs = b.code_signature
        signature = verify_code_signature(data, cs.data_offset, cs.data_size, name)
    exports = tuple(sym.name for sym in b.exported_symbols)
    return MachO(cpu, b.header.file_type.name, min_os, libraries, signature, exports)


def verify_code_signature(data: bytes, offset: int, size: int, name: str) -> CodeSignature:
    """The embedded signature's CodeDirectory, after checking every code slot's hash against the
    page of `data` it covers (what the kernel does before it runs the page). Raises BinaryError
    naming the first page that does not match."""
    blob = data[offset:offset + size]
    magic, _length, count = struct.unpack_from(">III", blob, 0)
    if magic != CSMAGIC_EMBEDDED_SIGNATURE:
        raise BinaryError(f"{name}: code signature magic {magic:#x}, expected {CSMAGIC_EMBEDDED_SIGNATURE:#x}")
    index = [struct.unpack_from(">II", blob, 12 + 8 * i) for i in range(count)]
    cd_at = next((off for slot, off in index if slot == CSSLOT_CODEDIRECTORY), None)
    if cd_at is None:
        raise BinaryError(f"{name}: the code signature has no CodeDirectory")
    (cd_magic, _cd_len, _version, flags, hash_offset, ident_offset, _n_special, n_code, code_limit,
     hash_size, hash_type, _platform, page_shift) = struct.unpack_from(">IIIIIIIIIBBBB", blob, cd_at)
    if cd_magic != CSMAGIC_CODEDIRECTORY:
        raise BinaryError(f"{name}: CodeDirectory magic {cd_magic:#x}")
    algorithm, size_of_hash = HASH_TYPES.get(hash_type, (None, 0))
    if algorithm is None or size_of_hash != hash_size:
        raise BinaryError(f"{name}: CodeDirectory hash type {hash_type} with {hash_size}-byte hashes is unknown")
    page = 1 << page_shift
    if code_limit > offset:
        raise BinaryError(f"{name}: the code limit {code_limit} reaches into the signature at {offset}")
    if n_code != (code_limit + page - 1) // page:
        raise BinaryError(f"{name}: {n_code} code slots for a code limit of {code_limit} in {page}-byte pages")
    for i in range(n_code):
        chunk = data[i * page:min((i + 1) * page, code_limit)]
        want = blob[cd_at + hash_offset + i * hash_size:cd_at + hash_offset + (i + 1) * hash_size]
        if hashlib.new(algorithm, chunk).digest()[:hash_size] != want:
            raise BinaryError(f"{name}: page {i} (bytes {i * page}..) does not match its code signature slot: "
                              "the file was changed after it was signed")
    end = blob.index(b"\0", cd_at + ident_offset)
    identifier = blob[cd_at + ident_offset:end].decode()
    return CodeSignature(identifier, flags, algorithm, page, n_code, code_limit)


def pe(data: bytes, name: str) -> PE:
    b = lief.PE.parse(data)
    if b is None:
        raise BinaryError(f"{name}: not a PE file")
    cpu = {v: k for k, v in PE_MACHINE.items()}.get(b.header.machine)
    if cpu is None:
        raise BinaryError(f"{name}: PE machine {b.header.machine} is neither x86-64 nor arm64")
    imports = [i.name.lower() for i in b.imports] + [i.name.lower() for i in b.delay_imports]
    exports = tuple(e.name for e in b.get_export().entries) if b.has_exports else ()
    oh = b.optional_header
    return PE(cpu, b.header.has_characteristic(lief.PE.Header.CHARACTERISTICS.DLL), tuple(imports), exports,
              f"{oh.major_subsystem_version}.{oh.minor_subsystem_version}")


def foreign_macos_libraries(m: MachO) -> list[str]:
    return [lib for lib in m.libraries if not lib.startswith(MACOS_SYSTEM_PREFIXES)]


def foreign_windows_dlls(p: PE, allowed: frozenset[str] = frozenset()) -> list[str]:
    return [d for d in p.imports
            if d not in WINDOWS_SYSTEM_DLLS and d not in allowed and not d.startswith(("api-ms-win-", "ext-ms-win-"))]
