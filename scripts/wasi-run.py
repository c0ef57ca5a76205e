"""Runs a wasm32-wasip1 program (a cargo test binary) under wasmtime from PyPI, with its
arguments, stdout and stderr: cargo's runner for `--target wasm32-wasip1`
(`CARGO_TARGET_WASM32_WASIP1_RUNNER="python scripts/wasi-run.py"`). Exits with the program's
status."""

from __future__ import annotations

import sys

from wasmtime import Engine, ExitTrap, Linker, Module, Store, Trap, WasiConfig


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: wasi-run.py PROGRAM.wasm [ARGS...]", file=sys.stderr)
        return 2
    engine = Engine()
    module = Module.from_file(engine, argv[0])
    linker = Linker(engine)
    linker.define_wasi()
    store = Store(engine)
    wasi = WasiConfig()
    wasi.argv = argv
    wasi.inherit_stdout()
    wasi.inherit_stderr()
    store.set_wasi(wasi)
    instance = linker.instantiate(store, module)
    start = instance.exports(store)["_start"]
    try:
        start(store)  # type: ignore[operator]
    except ExitTrap as e:
        return e.code
    except Trap as e:
        # A panic aborts (wasm32-wasip1 cannot unwind): the test that panicked printed why.
        print(f"wasi-run: {argv[0]} trapped: {e.message.splitlines()[0]}", file=sys.stderr)
        return 101
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
