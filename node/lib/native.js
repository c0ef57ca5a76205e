'use strict'
// Loads the napi-rs addon built from bindings/node (`npm run build`, or `make node-addon`).

/** @type {any} */
let binding
try {
  // @ts-ignore: the addon is built at install time; its types are native/native.d.ts
  binding = require('../native/tenure.node')
} catch (err) {
  throw new Error(
    'tenure: could not load the native addon native/tenure.node ' +
      `(${err instanceof Error ? err.message : String(err)}). Build it from source with \`make node-addon\` (needs Rust).`,
    { cause: err }
  )
}

module.exports = binding
