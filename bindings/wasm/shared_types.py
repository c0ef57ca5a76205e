"""Prints the npm package's TypeScript declarations that the browser build shares.

The browser module takes the same configuration and options and returns the same `inspect()` as
the npm package, so its `.d.ts` uses the same declarations instead of a second hand-written set:
`build.sh` appends what this prints (each named declaration of `node/index.d.ts`, with its doc
comment) to the `.d.ts` that wasm-bindgen generates. A name that is missing fails the build.

Usage: python3 shared_types.py node/index.d.ts >> tenure_wasm.d.ts
"""

import re
import sys

SHARED = [
    "U64",
    "Role",
    "DropReason",
    "NodeConfig",
    "DurableState",
    "NodeOptions",
    "ConfigWarning",
    "Inspect",
    "CamelCase",
    "InspectCamel",
]


def declarations(text: str) -> dict[str, str]:
    """Top-level `export type X = ...` and `export interface X {...}` blocks, keyed by name."""
    lines = text.splitlines()
    found: dict[str, str] = {}
    i = 0
    while i < len(lines):
        m = re.match(r"export (type|interface) (\w+)", lines[i])
        if not m:
            i += 1
            continue
        start = i
        while start > 0 and (lines[start - 1].startswith((" *", "/**")) or lines[start - 1].startswith("*/")):
            start -= 1
        end = i
        if m.group(1) == "interface":
            while not lines[end].startswith("}"):
                end += 1
        else:
            while end + 1 < len(lines) and lines[end + 1].startswith("  |"):
                end += 1
        found[m.group(2)] = "\n".join(lines[start : end + 1])
        i = end + 1
    return found


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        found = declarations(f.read())
    missing = [name for name in SHARED if name not in found]
    if missing:
        sys.exit(f"shared_types: {sys.argv[1]} declares no {', '.join(missing)}")
    print("\n// Shared with the npm package (node/index.d.ts), appended by bindings/wasm/build.sh.")
    for name in SHARED:
        print()
        print(found[name])


if __name__ == "__main__":
    main()
