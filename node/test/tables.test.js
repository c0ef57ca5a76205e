'use strict'
// The tables generated from the Rust definitions (lib/tables.js) drive this package: every shared
// exception class is exported with the base the table names, every code throws its class, the
// prom-client families are the runtime's, and the declarations name every class.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const tenure = require('..')
const tables = require('../lib/tables')
const { fromCode } = require('../lib/errors')

test('every shared class is exported, declared, and derives from its base', () => {
  const dts = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8')
  for (const [name, base] of tables.ERROR_CLASSES) {
    const C = tenure[name]
    assert.equal(typeof C, 'function', `tenure.${name} is not exported`)
    assert.equal(C.name, name)
    if (base) assert.ok(C.prototype instanceof tenure[base], `${name} does not derive from ${base}`)
    assert.match(dts, new RegExp(`export class ${name} extends ${base || 'Error'}\\b`), `${name} is not declared`)
  }
})

test('every code throws the class the table names', () => {
  for (const [code, [, className]] of Object.entries(tables.ERROR_CODES)) {
    const e = fromCode('m', code)
    assert.ok(e instanceof tenure[className], code)
    assert.equal(e.constructor.name, className)
    assert.equal(e.code, code)
  }
  // The cases that used to differ between Node.js and Python.
  assert.ok(fromCode('m', 'invalid_id') instanceof tenure.InvalidAddressError)
  assert.ok(fromCode('m', 'invalid_id') instanceof tenure.ConfigError)
  assert.ok(fromCode('m', 'io') instanceof tenure.RuntimeFailure)
})

test("the elector's runtime options are the generated list, and the native runtime takes each", () => {
  const native = require('../lib/native')
  const every = Object.fromEntries(tables.RUNTIME_OPTIONS.map((k) => [k, undefined]))
  // The binding refuses a key it does not read: a name in the Rust list it lacks fails here.
  assert.doesNotThrow(() => new native.NativeRuntimeConfig({ id: '127.0.0.1:7001', cluster: 'c', bootstrap: ['127.0.0.1:7002', '127.0.0.1:7003'] }, every))
  assert.ok(tables.RUNTIME_OPTIONS.includes('stateFile') && tables.RUNTIME_OPTIONS.includes('failurePolicy'))
  // The Elector passes them on, and refuses others with the list it accepts.
  assert.throws(
    () => new tenure.Elector({ id: '127.0.0.1:7001', peers: [], bogus: 1 }),
    (e) => e instanceof TypeError && tables.RUNTIME_OPTIONS.every((k) => e.message.includes(k)),
  )
})

test('core messages name options the way this API spells them', () => {
  assert.throws(
    () => new tenure.Node({ id: 'a', cluster: 'c', electionTimeoutMin: 400, electionTimeoutMax: 300 }),
    (e) => e instanceof tenure.ConfigError && /electionTimeoutMin/.test(e.message) && !/election_timeout_min/.test(e.message),
  )
})

test('the prom-client families are the runtime table', async () => {
  const prom = require('prom-client')
  const { registerTenureMetrics } = require('../lib/prometheus')
  const registry = new prom.Registry()
  registerTenureMetrics({ metrics: () => { throw new Error('not started') } }, { registry })
  const got = registry.getMetricsAsArray().map((m) => [m.name, m.help])
  const want = tables.METRIC_FAMILIES.map((f) => [f.type === 'counter' ? `${f.name}_total` : f.name, f.help])
  assert.deepEqual(got, want)
})
