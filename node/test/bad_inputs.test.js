'use strict'
// The table of bad inputs (tests/bad_inputs.json, shared with the Rust and Python tests): the
// Elector refuses each 'config' row at construction and each 'start' row at start(), with the
// row's code and a message naming the value; the Node.js command line exits with the row's status
// for each 'cli' row (one usage line, no stack trace).

const test = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { Elector, TenureError } = require('..')

const TABLE = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'tests', 'bad_inputs.json'), 'utf8'))
const BIN = path.join(__dirname, '..', 'bin', 'tenure.js')

/**
 * The Node.js spelling of a table key: camelCase, without Python's `_ms` suffix (every Node.js
 * duration is milliseconds).
 * @param {string} s
 */
const camel = (s) => s.replace(/_ms$/, '').replace(/_([a-z])/g, (_, c) => c.toUpperCase())

/** @param {any} c */
function elector(c) {
  /** @type {Record<string, any>} */
  const o = { id: TABLE.defaults.id, peers: TABLE.defaults.peers, cluster: TABLE.defaults.cluster }
  for (const [k, v] of Object.entries(c.config)) o[camel(k)] = v
  return new Elector(/** @type {any} */ (o))
}

for (const c of TABLE.cases.filter((/** @type {any} */ c) => c.surface === 'config')) {
  test(`construction refuses: ${c.name}`, () => {
    assert.throws(
      () => elector(c),
      // The table names options as Python and the core do; a Node.js message spells them in camelCase.
      (/** @type {any} */ e) => e instanceof TenureError && e.code === c.code && e.message.includes(camel(c.message))
    )
  })
}

const HOST_ERRORS = { type: [TypeError, 'ERR_INVALID_ARG_TYPE'], range: [RangeError, 'ERR_OUT_OF_RANGE'] }

for (const c of TABLE.cases.filter((/** @type {any} */ c) => c.surface === 'host')) {
  test(`conversion refuses: ${c.name}`, () => {
    const [cls, code] = /** @type {any} */ (HOST_ERRORS)[c.error]
    const [first, nested] = c.option.split('.')
    const config = nested === undefined ? { [c.option]: c.value } : { [first]: { [camel(nested)]: c.value } }
    assert.throws(
      () => elector({ config }),
      (/** @type {any} */ e) => e instanceof cls && !(e instanceof TenureError) && e.code === code && e.message.includes(camel(c.option.split('.').pop()))
    )
  })
}

for (const c of TABLE.cases.filter((/** @type {any} */ c) => c.surface === 'start')) {
  test(`start refuses: ${c.name}`, async () => {
    const e = elector(c)
    await assert.rejects(
      e.start(),
      (/** @type {any} */ err) => err instanceof TenureError && err.code === c.code && err.message.includes(c.message)
    )
  })
}

for (const c of TABLE.cases.filter((/** @type {any} */ c) => c.surface === 'cli')) {
  test(`the command line exits ${c.status}: ${c.name}`, () => {
    // Through sh so that `<0xff>` becomes the raw byte (a JS string cannot carry it).
    const quoted = c.args.map((/** @type {string} */ a) => `"$(printf '%b' '${a.replaceAll('<0xff>', '\\0377')}')"`).join(' ')
    const r = spawnSync('/bin/sh', ['-c', `exec "${process.execPath}" "${BIN}" ${quoted}`], { encoding: 'utf8', timeout: 30000 })
    assert.equal(r.status, c.status, r.stderr)
    assert.ok(r.stderr.includes(c.message), r.stderr)
    assert.ok(!r.stderr.includes('panicked') && !r.stderr.includes('    at '), r.stderr)
  })
}
