#!/usr/bin/env node
'use strict'
// `tenure run ...`: the runtime's own command line (tenure-runtime's cli::main), run off the JS
// thread. Options, help, JSON lines, stdin control lines and signal handling are the runtime's,
// so they are identical in every host.

const native = require('../lib/native')

// The runtime handles SIGTERM/SIGINT (graceful stop; a second one exits at once). Node's default
// handlers would end the process first: replace them with no-ops the runtime's handler chains to.
for (const sig of /** @type {const} */ (['SIGTERM', 'SIGINT'])) process.on(sig, () => {})

// A leader-only command (`-- CMD ARGS...`) runs under a supervisor: the native helper beside the
// addon, else (none built) this command line again, with a warning at start.
const args = process.argv.slice(2)
/** @type {string | null} */
const helper = native.supervisorHelper
if (helper === null && args[0] === 'run' && args.includes('--')) {
  process.stderr.write(
    'tenure: warning: the native supervisor tenure-supervise is missing beside the addon (a source build ' +
      'without `make node-addon`); the leader-only command is supervised by a second Node.js process\n'
  )
}
native.runCli(['tenure', ...args], helper === null ? [process.execPath, __filename] : [helper]).then(
  (/** @type {number} */ code) => process.exit(code),
  (/** @type {Error} */ e) => {
    process.stderr.write(`tenure: ${e.message}\n`)
    process.exit(1)
  }
)
