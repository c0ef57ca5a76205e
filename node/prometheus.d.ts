/**
 * `tenure/prometheus`: an elector's metrics in a prom-client registry (needs the optional peer
 * dependency `prom-client`). The same names, types and values as `tenure run --http`'s `/metrics`
 * (docs/http.md); read from `elector.metrics()` on every scrape, counted by the Rust runtime.
 */
import type { Registry } from 'prom-client'
import type { Metrics } from './index'

/** Every value of the `role` label of `tenure_role`. */
export declare const ROLES: readonly ['unclustered', 'follower', 'candidate', 'leader', 'observer']

/**
 * Registers `tenure_is_leader`, `tenure_term`, `tenure_role{role}`, `tenure_leader_changes_total`,
 * `tenure_elections_total`, `tenure_messages_dropped_total{reason}`, `tenure_peers{state}`,
 * `tenure_failover_seconds` (histogram) and `tenure_build_info{version}` with `options.registry`
 * (default: prom-client's global `register`). Returns a function that unregisters them.
 */
export declare function registerTenureMetrics(
  elector: { metrics(): Metrics },
  options?: { registry?: Registry }
): () => void
