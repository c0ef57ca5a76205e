#!/usr/bin/env bash
# Builds the tenure WebAssembly component: the one pipeline that `make component` and the host
# crate's build script (bindings/component/host/build.rs) both run.
#
#   cargo (wasm32-unknown-unknown, profile wasm-release)  the guest's core module
#   wasm-opt --merge-similar-functions -Oz --converge, --flatten --rereloop -Oz, --monomorphize -Oz,
#     --reorder-functions (--low-memory-unused): binaryen, from npm
#   wasm-tools component new                              wraps it as a component (WIT in wit/)
#   wasm-tools strip --all                                drops the name sections (debug names only)
#   short-names.awk                                       short internal names (core exports/imports,
#                                                         the nested component's imports)
#   wasm-tools metadata add                               name, version, licenses, description
#   wasm-tools validate
#
# Usage: bindings/component/build.sh OUT.wasm   (run from anywhere)
#        bindings/component/build.sh --named CORE.wasm
#   the second form writes the core module as shipped (after wasm-opt) but with its function names,
#   for twiggy (`make wasm-size`).
# Environment: CARGO (default cargo); TENURE_GUEST_TARGET_DIR, the guest's own cargo target dir
# (default: $CARGO_TARGET_DIR or <root>/target, then /component-guest), so that the guest build does
# not wait on the lock of an outer cargo build; WASM_TOOLS (default: .venv's, else PATH's).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
named=""
if [ "${1:-}" = "--named" ]; then named=1; shift; fi
out="${1:?usage: build.sh [--named] OUT.wasm}"
cargo="${CARGO:-cargo}"
guest_dir="${TENURE_GUEST_TARGET_DIR:-${CARGO_TARGET_DIR:-$root/target}/component-guest}"
wasm_tools="${WASM_TOOLS:-}"
if [ -z "$wasm_tools" ]; then
  if [ -x "$root/.venv/bin/wasm-tools" ]; then wasm_tools="$root/.venv/bin/wasm-tools"; else wasm_tools=wasm-tools; fi
fi
command -v "$wasm_tools" >/dev/null || { echo "component: wasm-tools missing: run make setup" >&2; exit 1; }
wasm_opt="$root/bindings/component/js/node_modules/.bin/wasm-opt"
[ -x "$wasm_opt" ] || { echo "component: $wasm_opt missing: run make setup (npm ci in bindings/component/js)" >&2; exit 1; }
# The workspace version (the first `version =` of Cargo.toml, in [workspace.package]).
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)"

guest=(-p tenure-component --target wasm32-unknown-unknown --profile wasm-release --target-dir "$guest_dir")
core="$guest_dir/wasm32-unknown-unknown/wasm-release/tenure_component.wasm"
# The features rustc enables by default for wasm32-unknown-unknown, so wasm-opt may keep using them.
# wasm-opt keeps the `component-type` custom section that `component new` reads.
# --low-memory-unused lets wasm-opt fold constant pointer offsets into loads' and stores' offset
# immediates (`load (add p C)` -> `load offset=C p`). That is exact unless `p + C` wraps around
# 2^32 into the lowest kilobyte, which Rust never does: its address arithmetic stays inside one
# allocation, and the low kilobyte is the far end of the 1 MiB stack (rustc's layout: stack below
# the data at 1 MiB), only reached by a stack already overflowing.
# --reorder-functions (last) numbers the most called functions first, so that more `call`s fit
# their function index in one LEB128 byte (-Oz does not reorder).
# --duplicate-function-elimination --merge-similar-functions (first, before -Oz inlines the small
# ones away) fold the copies that generics leave (one `IdMap` method per value type, one `Vec`
# growth per element type): functions equal up to constants become one taking those constants.
# --ignore-implicit-traps lets wasm-opt drop or move a load, division or remainder whose result
# goes unused, as if it could not trap. Exact for Rust: its loads read live allocations (LLVM
# already treats them as unable to trap), and it checks divisors before dividing (a zero or
# overflowing division panics explicitly, by `unreachable`, which stays). Explicit traps are kept.
wasm_opt_flags=(--ignore-implicit-traps --duplicate-function-elimination --merge-similar-functions -Oz --converge --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-mutable-globals --enable-reference-types --enable-multivalue --low-memory-unused
  --flatten --rereloop -Oz --monomorphize -Oz --reorder-functions)

if [ -n "$named" ]; then
  # Relink with symbols (only the final crate), keep them through wasm-opt (-g), then relink as
  # shipped so that the next build finds its usual artefact.
  "$cargo" rustc -q --manifest-path "$root/Cargo.toml" --lib "${guest[@]}" -- -C strip=none
  mkdir -p "$(dirname "$out")"
  "$wasm_opt" "${wasm_opt_flags[@]}" -g --strip-dwarf "$core" -o "$out"
  "$cargo" build -q --manifest-path "$root/Cargo.toml" "${guest[@]}"
  exit 0
fi

"$cargo" build --manifest-path "$root/Cargo.toml" "${guest[@]}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$wasm_opt" "${wasm_opt_flags[@]}" "$core" -o "$tmp/core.wasm"
"$wasm_tools" component new "$tmp/core.wasm" -o "$tmp/bare.wasm"
"$wasm_tools" strip --all "$tmp/bare.wasm" -o "$tmp/stripped.wasm"
# The canonical ABI's long internal names made short (only the component itself refers to them; see
# short-names.awk), through the text format, which `wasm-tools` prints and parses losslessly.
"$wasm_tools" print "$tmp/core.wasm" -o "$tmp/core.wat"
"$wasm_tools" print "$tmp/stripped.wasm" -o "$tmp/stripped.wat"
awk -f "$root/bindings/component/short-names.awk" "$tmp/core.wat" "$tmp/stripped.wat" >"$tmp/short.wat"
"$wasm_tools" parse "$tmp/short.wat" -o "$tmp/short.wasm"
"$wasm_tools" metadata add --name tenure --version "$version" --licenses "MIT OR Apache-2.0" \
  --description "tenure: leader election (the tenure:election WIT world)" "$tmp/short.wasm" -o "$tmp/tenure.wasm"
"$wasm_tools" validate "$tmp/tenure.wasm"
mkdir -p "$(dirname "$out")"
mv "$tmp/tenure.wasm" "$out"
echo "component: $out: $(stat -c %s "$out") bytes, $(gzip -9c "$out" | wc -c) gzipped" \
  "(core module $(stat -c %s "$core") bytes before wasm-opt, $(stat -c %s "$tmp/core.wasm") after)"
