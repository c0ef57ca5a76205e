'use strict'
/**
 * `tenure/prometheus`: an elector's metrics in a prom-client registry (optional peer dependency
 * `prom-client`). On every scrape each `tenure_*` metric reads `elector.metrics()` — the numbers the
 * Rust runtime counts, the same names, types and values as `tenure run --http`'s `/metrics`
 * (docs/http.md). Nothing is counted here.
 */

const promClient = require('prom-client')
const tables = require('./tables')

const { ROLES } = tables

/**
 * @typedef {import('../index').Metrics} Metrics
 * @typedef {{ value: number, labels?: Record<string, string | number>, metricName?: string }} Sample
 * @typedef {{ name: string, help: string, type: 'gauge' | 'counter' | 'histogram', samples: (m: Metrics) => Sample[] }} Family
 */

// Names, types and help texts are the runtime's (generated from runtime/src/metrics.rs); only the
// mapping from a snapshot to samples is written here. prom-client wants a counter's `_total`.
/** @type {Record<string, (m: Metrics) => Sample[]>} */
const SAMPLES = {
  tenure_is_leader: (m) => [{ value: m.isLeader ? 1 : 0 }],
  tenure_term: (m) => [{ value: m.term }],
  tenure_role: (m) => ROLES.map((role) => ({ labels: { role }, value: m.role === role ? 1 : 0 })),
  tenure_leader_changes: (m) => [{ value: m.leaderChanges }],
  tenure_elections: (m) => [{ value: m.elections }],
  tenure_leader_work_failures: (m) => [{ value: m.leaderWorkFailures }],
  tenure_leader_work_step_downs: (m) => [{ value: m.leaderWorkStepDowns }],
  tenure_messages_dropped: (m) => Object.entries(m.dropped).map(([reason, value]) => ({ labels: { reason }, value })),
  tenure_peers: (m) => Object.entries(m.peers).map(([state, value]) => ({ labels: { state }, value })),
  tenure_failover_seconds: (m) => [
    ...m.failover.buckets.map(([le, value]) => ({ metricName: 'tenure_failover_seconds_bucket', labels: { le }, value })),
    { metricName: 'tenure_failover_seconds_bucket', labels: { le: '+Inf' }, value: m.failover.count },
    { metricName: 'tenure_failover_seconds_sum', value: m.failover.sumSeconds },
    { metricName: 'tenure_failover_seconds_count', value: m.failover.count },
  ],
  tenure_peer_last_heard_seconds: (m) =>
    Object.entries(m.peerLastHeardMs)
      .filter(([, ms]) => ms != null)
      .map(([peer, ms]) => ({ labels: { peer }, value: /** @type {number} */ (ms) / 1000 })),
  tenure_peer_last_ack_seconds: (m) => Object.entries(m.peerLastAckMs).map(([peer, ms]) => ({ labels: { peer }, value: ms / 1000 })),
  tenure_quorum_slack: (m) => (m.quorumSlack == null ? [] : [{ value: m.quorumSlack }]),
  tenure_peers_silent: (m) => (m.quorumSlack == null ? [] : [{ value: m.silentPeers.length }]),
  tenure_wire_version: (m) => (m.wireVersion == null ? [] : [{ value: m.wireVersion }]),
  tenure_build_info: (m) => [{ labels: { version: m.version }, value: 1 }],
}

/** @type {Family[]} */
const FAMILIES = tables.METRIC_FAMILIES.map((f) => ({
  name: f.type === 'counter' ? `${f.name}_total` : f.name,
  help: f.help,
  type: /** @type {Family['type']} */ (f.type),
  samples: SAMPLES[f.name] ?? (() => []),
}))

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
