'use strict'
// `tenure/prometheus`: an elector's runtime metrics in a prom-client registry, checked against the
// elector's own snapshot on a live 3-node cluster over 127.0.0.1 UDP. Bounded waits only.

const test = require('node:test')
const assert = require('node:assert/strict')
const { Registry } = require('prom-client')
const tenure = require('..')
const { Elector, ConfigError } = tenure
const { registerTenureMetrics, ROLES } = require('tenure/prometheus')
const { freePorts } = require('./helpers')

const FAMILIES = {
  tenure_is_leader: 'gauge',
  tenure_term: 'gauge',
  tenure_role: 'gauge',
  tenure_leader_changes_total: 'counter',
  tenure_elections_total: 'counter',
  tenure_leader_work_failures_total: 'counter',
  tenure_leader_work_step_downs_total: 'counter',
  tenure_messages_dropped_total: 'counter',
  tenure_peers: 'gauge',
  tenure_failover_seconds: 'histogram',
  tenure_build_info: 'gauge',
}

/** @param {string} text @param {string} sample the sample name with its labels, as printed */
function value(text, sample) {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `))
  assert.ok(line, `no sample ${sample} in:\n${text}`)
  return Number(line.slice(sample.length + 1))
}

test('registerTenureMetrics maps elector.metrics() into a prom-client registry', async () => {
  const ids = (await freePorts(3)).map((p) => `127.0.0.1:${p}`)
  const electors = ids.map((id) => new Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'prom-test' }))
  const registry = new Registry()
  const unregister = registerTenureMetrics(electors[0], { registry })
  // Not started: every family is listed, without samples.
  let text = await registry.metrics()
  for (const [name, type] of Object.entries(FAMILIES)) assert.ok(text.includes(`# TYPE ${name} ${type}\n`), name)
  assert.ok(!/^tenure_term /m.test(text))
  try {
    await Promise.all(electors.map((e) => e.start()))
    const end = Date.now() + 10_000
    while (!electors.every((e) => e.leader !== null)) {
      assert.ok(Date.now() < end, 'no leader')
      await new Promise((r) => setTimeout(r, 10))
    }
    const m = electors[0].metrics()
    text = await registry.metrics()
    assert.equal(registry.contentType, Registry.PROMETHEUS_CONTENT_TYPE)
    assert.equal(value(text, 'tenure_term'), m.term)
    assert.equal(value(text, 'tenure_is_leader'), m.isLeader ? 1 : 0)
    for (const role of ROLES) assert.equal(value(text, `tenure_role{role="${role}"}`), role === m.role ? 1 : 0)
    assert.ok(value(text, 'tenure_leader_changes_total') >= 1)
    assert.equal(value(text, 'tenure_elections_total'), m.elections)
    assert.deepEqual(Object.keys(m.dropped).sort(), [...tenure.DROP_REASONS].sort())
    for (const [reason, n] of Object.entries(m.dropped)) {
      assert.equal(value(text, `tenure_messages_dropped_total{reason="${reason}"}`), n)
    }
    assert.equal(value(text, 'tenure_peers{state="in_view"}'), 2)
    assert.equal(value(text, 'tenure_failover_seconds_bucket{le="+Inf"}'), m.failover.count)
    assert.equal(value(text, 'tenure_failover_seconds_bucket{le="0.01"}'), m.failover.buckets[0][1])
    assert.equal(value(text, 'tenure_failover_seconds_count'), m.failover.count)
    assert.equal(value(text, `tenure_build_info{version="${m.version}"}`), 1)
    assert.equal(m.version, tenure.VERSION)
  } finally {
    await Promise.all(electors.map((e) => e.stop({ transfer: false })))
  }
  // Closed: no samples, no error; unregistering empties the registry.
  text = await registry.metrics()
  assert.ok(!/^tenure_term /m.test(text))
  unregister()
  assert.equal(registry.getMetricsAsArray().length, 0)
})

test('an elector serves the HTTP sidecar with the http and readyWhen options', async () => {
  const ids = (await freePorts(3)).map((p) => `127.0.0.1:${p}`)
  assert.throws(() => new Elector({ id: ids[0], peers: ids.slice(1), cluster: 'c', http: 'localhost:80' }), (e) => e instanceof ConfigError && /localhost:80/.test(e.message))
  assert.throws(() => new Elector({ id: ids[0], peers: ids.slice(1), cluster: 'c', readyWhen: /** @type {any} */ ('follower') }), (e) => e instanceof ConfigError && /follower/.test(e.message))
  const electors = ids.map((id) => new Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'http-test', http: '127.0.0.1:0', readyWhen: 'leader' }))
  assert.equal(electors[0].httpAddr, null)
  try {
    await Promise.all(electors.map((e) => e.start()))
    const addrs = electors.map((e) => /** @type {string} */ (e.httpAddr))
    assert.ok(addrs.every((a) => a.startsWith('127.0.0.1:')))
    const end = Date.now() + 10_000
    /** @type {boolean[]} */
    let ready = []
    for (;;) {
      ready = await Promise.all(addrs.map(async (a) => (await fetch(`http://${a}/readyz`)).status === 200))
      if (ready.filter(Boolean).length === 1) break
      assert.ok(Date.now() < end, `readiness ${ready}`)
      await new Promise((r) => setTimeout(r, 20))
    }
    const leader = electors[ready.indexOf(true)]
    assert.ok(leader.isLeader)
    const view = await (await fetch(`http://${leader.httpAddr}/leader`)).json()
    assert.equal(view.id, leader.id)
    assert.equal(view.is_leader, true)
  } finally {
    await Promise.all(electors.map((e) => e.stop({ transfer: false })))
  }
})
