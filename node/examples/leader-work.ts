// Leader-only work with the AbortSignal, in TypeScript.

import { setTimeout as sleep } from 'node:timers/promises'
import { Elector, type U64 } from 'tenure'

async function scheduler(term: U64, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    // One unit of singleton work; every await takes the signal so it stops at once.
    await sleep(100, undefined, { signal }).catch(() => undefined)
    if (signal.aborted) break
    console.log(`term ${term}: did one unit of work`)
  }
}

export function runWork(elector: Elector): void {
  // Or, with the lease: runs on every leadership until the elector closes.
  void elector.whileLeader(async (lease) => {
    while (lease.valid) await sleep(100, undefined, { signal: lease.signal })
  })
  elector.on('leader', ({ term, signal }) => {
    void scheduler(term, signal)
  })
  // An async listener that rejects rolls leadership back (the node steps down):
  elector.on('leader', async ({ term }) => {
    if (typeof term === 'bigint') throw new Error('term beyond 2^53: refuse to lead')
  })
}
