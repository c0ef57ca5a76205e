'use strict'
// Loads the napi-rs addon: a source build (native/tenure.node: `npm run build` or `make node-addon`)
// if there is one, else the prebuilt per-platform package that npm installed through
// optionalDependencies (tenure-linux-x64-gnu, ...; see npm/ and scripts/dist in the repository).

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
/** @type {unknown[]} */
const errors = []
for (const candidate of ['../native/tenure.node', platformPackage]) {
  try {
    binding = require(typeof candidate === 'string' ? candidate : candidate())
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

module.exports = binding
