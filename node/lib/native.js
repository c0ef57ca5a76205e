'use strict'
// Loads the napi-rs addon built from bindings/node (`npm run build`, or `make node-addon`).

let binding
try {
  binding = require('../native/tenure.node')
} catch (err) {
  throw new Error(
    'tenure: could not load the native addon native/tenure.node ' +
      `(${err && err.message}). Build it from source with \`make node-addon\` (needs Rust).`,
    { cause: err }
  )
}

module.exports = binding
