'use strict'
// Loads the napi-rs addon: a source build (native/tenure.node: `npm run build` or `make node-addon`)
// if there is one, else the prebuilt per-platform package that npm installed through
// optionalDependencies (tenure-linux-x64-gnu, ...; see npm/ and scripts/dist in the repository).

const fs = require('node:fs')
const path = require('node:path')

/** The per-platform package for this machine, napi-rs style: tenure-linux-x64-gnu, ... */
function platformPackage() {
  return `tenure-${process.platform}-${process.arch}${libcSuffix()}`
}

/** `-gnu` or `-musl` on Linux (napi-rs naming), nothing elsewhere. */
function libcSuffix() {
  if (process.platform !== 'linux') return ''
  // glibc's Node reports the glibc version it runs on; musl's reports none.
  const report = /** @type {any} */ (process.report?.getReport())
  return report?.header?.glibcVersionRuntime ? '-gnu' : '-musl'
}

/** @type {any} */
let binding
/** The directory the addon was loaded from: the supervisor helper ships beside it. */
let addonDir = ''
/** @type {unknown[]} */
const errors = []
for (const candidate of ['../native/tenure.node', platformPackage]) {
  try {
    const id = require.resolve(typeof candidate === 'string' ? candidate : candidate())
    binding = require(id)
    addonDir = path.dirname(id)
    break
  } catch (err) {
    errors.push(err)
  }
}
if (binding === undefined) {
  const why = errors.map((e) => (e instanceof Error ? e.message.split('\n')[0] : String(e))).join('; ')
  throw new Error(
    `tenure: no native addon for ${process.platform}-${process.arch}: neither a source build ` +
      `(native/tenure.node) nor the prebuilt package ${platformPackage()} could be loaded (${why}). ` +
      `Reinstall without --no-optional / --omit=optional, or build from source with \`make node-addon\` (needs Rust).`,
    { cause: errors[errors.length - 1] }
  )
}

// The leader-only command's supervisor: the small native program `tenure-supervise`
// (`tenure-supervise.exe` on Windows) next to the addon it was built with (each per-platform
// package ships one; `make node-addon` builds one into native/), so the supervisor speaks the same
// protocol as this runtime. null when there is none (a source build made without
// `make node-addon`): bin/tenure.js then re-invokes itself, a second Node.js process. On Windows
// X_OK is checked as existence (Node.js). Not enumerable: it is no part of the addon's API.
const helper = path.join(addonDir, process.platform === 'win32' ? 'tenure-supervise.exe' : 'tenure-supervise')
let helperPath = null
try {
  fs.accessSync(helper, fs.constants.X_OK)
  helperPath = helper
} catch {}
Object.defineProperty(binding, 'supervisorHelper', { value: helperPath, enumerable: false, writable: true, configurable: true })

module.exports = binding
