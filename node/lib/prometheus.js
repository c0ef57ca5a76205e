'use strict'
/**
 * `tenure/prometheus`: an elector's metrics in a prom-client registry (optional peer dependency
 * `prom-client`). On every scrape each `tenure_*` metric reads `elector.metrics()` — the numbers the
 * Rust runtime counts, the same names, types and values as `tenure run --http`'s `/metrics`
 * (docs/http.md). Nothing is counted here.
 */

const promClient = require('prom-client')

const ROLES = Object.freeze(['unclustered', 'follower', 'candidate', 'leader'])

/**
 * @typedef {import('../index').Metrics} Metrics
 * @typedef {{ value: number, labels?: Record<string, string | number>, metricName?: string }} Sample
 * @typedef {{ name: string, help: string, type: 'gauge' | 'counter' | 'histogram', samples: (m: Metrics) => Sample[] }} Family
 */

/** @type {Family[]} */
const FAMILIES = [
  { name: 'tenure_is_leader', help: '1 while this node leads, else 0.', type: 'gauge', samples: (m) => [{ value: m.isLeader ? 1 : 0 }] },
  { name: 'tenure_term', help: 'The current term (the fencing token while leading).', type: 'gauge', samples: (m) => [{ value: m.term }] },
  {
    name: 'tenure_role',
    help: "1 for the node's current role, 0 for the others.",
    type: 'gauge',
    samples: (m) => ROLES.map((role) => ({ labels: { role }, value: m.role === role ? 1 : 0 })),
  },
  {
    name: 'tenure_leader_changes_total',
    help: 'Leaderships observed: each (term, leader) pair this node learned of, once.',
    type: 'counter',
    samples: (m) => [{ value: m.leaderChanges }],
  },
  {
    name: 'tenure_elections_total',
    help: 'Campaigns run by this node (terms in which it became candidate).',
    type: 'counter',
    samples: (m) => [{ value: m.elections }],
  },
  {
    name: 'tenure_leader_work_failures_total',
    help: 'Failures of leader-only work (or of the -- CMD command) reported while this node led.',
    type: 'counter',
    samples: (m) => [{ value: m.leaderWorkFailures }],
  },
  {
    name: 'tenure_leader_work_step_downs_total',
    help: 'Leaderships this node handed over because their work kept failing (the failure policy).',
    type: 'counter',
    samples: (m) => [{ value: m.leaderWorkStepDowns }],
  },
  {
    name: 'tenure_messages_dropped_total',
    help: 'Datagrams dropped by the core, by reason.',
    type: 'counter',
    samples: (m) => Object.entries(m.dropped).map(([reason, value]) => ({ labels: { reason }, value })),
  },
  {
    name: 'tenure_peers',
    help: 'Peers known to the runtime, by state (in_view, unreachable: in the view but sends fail, left).',
    type: 'gauge',
    samples: (m) => Object.entries(m.peers).map(([state, value]) => ({ labels: { state }, value })),
  },
  {
    name: 'tenure_failover_seconds',
    help: 'Leaderless time observed by this node: from losing a known leader to knowing the next.',
    type: 'histogram',
    samples: (m) => [
      ...m.failover.buckets.map(([le, value]) => ({ metricName: 'tenure_failover_seconds_bucket', labels: { le }, value })),
      { metricName: 'tenure_failover_seconds_bucket', labels: { le: '+Inf' }, value: m.failover.count },
      { metricName: 'tenure_failover_seconds_sum', value: m.failover.sumSeconds },
      { metricName: 'tenure_failover_seconds_count', value: m.failover.count },
    ],
  },
  {
    name: 'tenure_build_info',
    help: "Always 1; the version label is the tenure runtime's version.",
    type: 'gauge',
    samples: (m) => [{ labels: { version: m.version }, value: 1 }],
  },
]

/**
 * Registers the `tenure_*` metrics of `elector` with a prom-client registry (default: prom-client's
 * global `register`). Before the elector runs and after it closed, a scrape lists them without
 * samples. Returns a function that unregisters them.
 * @param {{ metrics(): Metrics }} elector
 * @param {{ registry?: import('prom-client').Registry }} [options]
 * @returns {() => void}
 */
function registerTenureMetrics(elector, options = {}) {
  const registry = options.registry ?? promClient.register
  /** @returns {Metrics | null} */
  const snapshot = () => {
    try {
      return elector.metrics()
    } catch {
      return null // not started, or closed
    }
  }
  for (const f of FAMILIES) {
    const aggregator = f.type === 'gauge' ? 'first' : 'sum'
    const metric = {
      name: f.name,
      help: f.help,
      type: f.type,
      aggregator,
      get: async () => {
        const m = snapshot()
        return { name: f.name, help: f.help, type: f.type, aggregator, values: m === null ? [] : f.samples(m) }
      },
    }
    registry.registerMetric(/** @type {any} */ (metric))
  }
  return () => {
    for (const f of FAMILIES) registry.removeSingleMetric(f.name)
  }
}

module.exports = { registerTenureMetrics, ROLES }
