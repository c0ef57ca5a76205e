#!/usr/bin/env node
'use strict'
// `tenure run ...`: the runtime's own command line (tenure-runtime's cli::main), run off the JS
// thread. Options, help, JSON lines, stdin control lines and signal handling are the runtime's,
// so they are identical in every host.

const native = require('../lib/native')

// The runtime handles SIGTERM/SIGINT (graceful stop; a second one exits at once). Node's default
// handlers would end the process first: replace them with no-ops the runtime's handler chains to.
for (const sig of /** @type {const} */ (['SIGTERM', 'SIGINT'])) process.on(sig, () => {})

// A leader-only command (`-- CMD ARGS...`) runs under a supervisor: this command line again.
native.runCli(['tenure', ...process.argv.slice(2)], [process.execPath, __filename]).then(
  (/** @type {number} */ code) => process.exit(code),
  (/** @type {Error} */ e) => {
    process.stderr.write(`tenure: ${e.message}\n`)
    process.exit(1)
  }
)
