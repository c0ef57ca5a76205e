#!/usr/bin/env python3
"""Groups `twiggy top -f csv` rows of a WebAssembly module by where the bytes come from.

    twiggy top -n 100000 -f csv module.wasm | python3 bindings/wasm/size_groups.py [--top N]

Prints one line per group (bytes, group, its largest items), largest first. A row goes to the
first group whose pattern matches its symbol name; `make wasm-size` runs it over the browser
module as wasm-bindgen emits it (with names, before wasm-opt). Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import defaultdict

# (group, pattern over the symbol name); the first match wins, so specific groups come first.
GROUPS: list[tuple[str, str]] = [
    ("function names (dropped by wasm-opt --strip-debug)", r'"function names"'),
    (".rodata and other data", r"^data segment|^data\["),
    ("float formatting", r"flt2dec|fmt::float|bignum|Big32x40|dragon|grisu"),
    ("std panic machinery", r"std\W.*panick|panic_handler|rust_panic|begin_panic"),
    ("core::fmt without floats", r"fmt|escape_debug|slice_error_fail|unicode_data|from_utf8"),
    ("serde_path_to_error", r"serde_path_to_error"),
    ("serde-wasm-bindgen", r"serde_wasm_bindgen"),
    ("serde derives, serde_core, the key tracking", r"serde|Visitor|Deserializ|Serializ|__Field"),
    ("talc (allocator)", r"talc"),
    ("dlmalloc (allocator)", r"dlmalloc"),
    ("alloc (Vec/String growth)", r"__rust_(alloc|realloc|dealloc)|raw_vec|RawVec|finish_grow"),
    ("slice sorting", r"slice::sort|quicksort|driftsort|smallsort|heapsort"),
    ("SHA-256/HMAC", r"sha2|hmac|compress256|digest"),
    ("hashbrown", r"hashbrown"),
    ("BTreeMap", r"btree|BTree"),
    ("exported methods (the core inlined into them)", r"^node_|^decodeMessage|^version|tenure_wasm::"),
    ("wasm-bindgen and js-sys", r"wasm_bindgen|js_sys|__wbg|__wbindgen|externref"),
    ("the rest of the core", r"^tenure::|<tenure::"),
]


def short(name: str) -> str:
    """The symbol without hashes and crate disambiguators, cut to a readable length."""
    name = re.sub(r"::h[0-9a-f]{16}$", "", re.sub(r"\[[0-9a-f]{16}\]", "", name))
    return name if len(name) <= 50 else name[:49] + "…"


def group(rows: list[tuple[str, int]]) -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = defaultdict(list)
    compiled = [(g, re.compile(p)) for g, p in GROUPS]
    for name, size in rows:
        g = next((g for g, p in compiled if p.search(name)), "other (iterators, memcpy, Rc, ...)")
        out[g].append((size, name))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=2, help="largest items shown per group")
    args = ap.parse_args()
    rows = []
    for r in csv.DictReader(sys.stdin):
        name = r["Name"]
        if name.startswith(("Σ", "...")):
            continue
        rows.append((name, int(r["ShallowSize"])))
    groups = group(rows)
    total = sum(size for _, size in rows)
    for g, items in sorted(groups.items(), key=lambda kv: -sum(s for s, _ in kv[1])):
        items.sort(reverse=True)
        tops = ", ".join(f"{short(n)} {s:,}" for s, n in items[: args.top])
        print(f"{sum(s for s, _ in items):>9,}  {g:<48}  {tops}")
    print(f"{total:>9,}  total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
