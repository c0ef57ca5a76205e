#!/usr/bin/env node
'use strict'
// `tenure run --id HOST:PORT --peer HOST:PORT ... --cluster NAME [...]`: one node over UDP,
// printing one JSON line per event. The command line, the help text and the JSON lines come
// from the Rust core (tenure::cli), so they are identical in every runtime.

const fs = require('node:fs')
const readline = require('node:readline')
const native = require('../lib/native')
const { Elector, kNative } = require('../lib/elector')
const { wrapError } = require('../lib/errors')

/** @param {string} line */
function out(line) {
  process.stdout.write(line + '\n')
}

async function main() {
  let cmd
  try {
    cmd = native.cliParseArgs(process.argv.slice(2))
  } catch (e) {
    const err = /** @type {Error} */ (wrapError(e))
    process.stderr.write(`tenure: ${err.message}\n\nusage: tenure ${native.cliUsage()}`)
    process.exitCode = 2
    return
  }
  if (cmd.command === 'help') {
    process.stdout.write(`usage: tenure ${native.cliUsage()}`)
    return
  }
  const { config, stateFile, keyFile } = cmd
  const id = config.id
  /** @param {any} event */
  const line = (event) => {
    const l = native.cliEventLine(Date.now(), id, event)
    if (l !== null) out(l)
  }
  let elector
  try {
    const key = keyFile ? native.keyFromFile(fs.readFileSync(keyFile)) : null
    elector = new Elector({
      id,
      peers: config.bootstrap,
      cluster: config.cluster,
      minClusterSize: config.minClusterSize,
      electionTimeoutMin: config.electionTimeoutMin,
      electionTimeoutMax: config.electionTimeoutMax,
      heartbeatInterval: config.heartbeatInterval,
      ghostTtl: config.ghostTtl,
      stateFile: stateFile ?? undefined,
      key,
      // Printed synchronously from the network path, so that ts_ms is the instant of the event.
      eventHook: line,
    })
  } catch (e) {
    const err = /** @type {Error} */ (wrapError(e))
    process.stderr.write(`tenure: ${err.message}\n`)
    process.exitCode = 1
    return
  }
  elector.on('error', (/** @type {any} */ err) => {
    out(native.cliWarningLine(Date.now(), id, typeof err?.code === 'string' ? err.code : 'error', String(err?.message ?? err)))
    if (err?.code === 'state_file_write_failed') process.exit(1)
  })

  for (const w of elector.warnings) out(native.cliWarningLine(Date.now(), id, w.code, w.message))
  try {
    await elector.start()
  } catch (e) {
    process.stderr.write(`tenure: cannot listen on ${id}: ${/** @type {Error} */ (e).message}\n`)
    process.exitCode = 1
    return
  }
  out(native.cliLifecycleLine(Date.now(), id, 'started', elector.term))

  let stopping = false
  const stop = async () => {
    if (stopping) process.exit(1) // a second signal: give up on the graceful stop
    stopping = true
    await elector.stop()
    out(native.cliLifecycleLine(Date.now(), id, 'stopped', elector.term))
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)

  // Control lines on stdin (see the usage text): transfer PEER, inspect, broadcast TEXT.
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  rl.on('line', (text) => {
    let control
    try {
      control = native.cliParseControl(text)
    } catch (e) {
      out(native.cliWarningLine(Date.now(), id, 'usage', /** @type {Error} */ (e).message))
      return
    }
    if (control === null || stopping) return
    try {
      if (control.command === 'inspect') out(elector[kNative].inspectLine(Date.now()))
      else if (control.command === 'transfer') elector.transferLeadership(control.peer)
      else if (control.command === 'broadcast') elector.broadcast(control.payload)
    } catch (e) {
      const err = /** @type {any} */ (wrapError(e))
      out(native.cliWarningLine(Date.now(), id, typeof err.code === 'string' ? err.code : 'error', String(err.message)))
    }
  })
  // stdin closing (e.g. </dev/null) is not a reason to stop: only the signals are.
}

main().catch((e) => {
  process.stderr.write(`tenure: ${e && e.stack ? e.stack : e}\n`)
  process.exit(1)
})
