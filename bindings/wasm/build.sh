#!/usr/bin/env bash
# Builds the browser module: cargo (profile wasm-release) -> wasm-bindgen --target web -> wasm-opt -Oz --converge.
# Output: demo/pkg/{tenure_wasm.js, tenure_wasm.d.ts, tenure_wasm_bg.wasm, ...} and demo/pkg/SIZES.txt.
# Usage: bindings/wasm/build.sh [OUT_DIR]   (run from anywhere; `make web` calls it)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/demo/pkg}"
cargo="${CARGO:-cargo}"
target_dir="$("$cargo" metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
wasm_opt="$root/demo/node_modules/.bin/wasm-opt"
[ -x "$wasm_opt" ] || { echo "web: $wasm_opt missing: run make setup (npm ci in demo/)" >&2; exit 1; }
command -v wasm-bindgen >/dev/null || { echo "web: wasm-bindgen CLI missing: run make setup" >&2; exit 1; }

# strip=false for this build only: wasm-bindgen reads the target_features section that strip removes
# (it decides whether to use reference types from it); wasm-opt strips names and debug info below.
CARGO_PROFILE_WASM_RELEASE_STRIP=false \
  "$cargo" build --manifest-path "$root/Cargo.toml" -p tenure-wasm --target wasm32-unknown-unknown --profile wasm-release
raw="$target_dir/wasm32-unknown-unknown/wasm-release/tenure_wasm.wasm"
rm -rf "$out.tmp" && mkdir -p "$out.tmp"
wasm-bindgen --target web --out-dir "$out.tmp" "$raw"
# The configuration, options and inspect() types are the npm package's (one definition for both).
python3 "$root/bindings/wasm/shared_types.py" "$root/node/index.d.ts" >> "$out.tmp/tenure_wasm.d.ts"
before=$(stat -c %s "$out.tmp/tenure_wasm_bg.wasm")
"$wasm_opt" -Oz --converge --strip-debug --strip-producers --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue \
  "$out.tmp/tenure_wasm_bg.wasm" -o "$out.tmp/tenure_wasm_bg.opt.wasm"
mv "$out.tmp/tenure_wasm_bg.opt.wasm" "$out.tmp/tenure_wasm_bg.wasm"
after=$(stat -c %s "$out.tmp/tenure_wasm_bg.wasm")
gz=$(gzip -9 -c "$out.tmp/tenure_wasm_bg.wasm" | wc -c)
js=$(stat -c %s "$out.tmp/tenure_wasm.js")
printf 'wasm before wasm-opt: %d bytes\nwasm after wasm-opt -Oz: %d bytes raw, %d bytes gzip -9\nJS glue: %d bytes\n' \
  "$before" "$after" "$gz" "$js" > "$out.tmp/SIZES.txt"
rm -rf "$out" && mv "$out.tmp" "$out"
echo "web: built $out"
sed 's/^/web:   /' "$out/SIZES.txt"
