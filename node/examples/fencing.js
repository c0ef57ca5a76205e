'use strict'
// A fencing write: the resource (here a tiny in-memory "database") keeps the highest
// (term, leader) it has accepted, and refuses a write from a stale leader — e.g. one that was
// paused, was deposed meanwhile, and wakes up believing it still leads.
//
//   node examples/fencing.js

const { FenceChecker } = require('tenure')

class Store {
  constructor() {
    this.fence = new FenceChecker()
    /** @type {string[]} */
    this.rows = []
  }
  /** @param {number | bigint} term @param {string} leader @param {string} row */
  write(term, leader, row) {
    const verdict = this.fence.check(term, leader) // in a real database: same transaction as the write
    if (verdict !== 'accepted') return `refused (${verdict})`
    this.rows.push(row)
    return 'ok'
  }
}

const store = new Store()
console.log('leader a, term 4:', store.write(4, 'a', 'report 1'))
console.log('leader b, term 5:', store.write(5, 'b', 'report 2'))
console.log('stale a, term 4: ', store.write(4, 'a', 'report 1 again'))
console.log('rogue c, term 5: ', store.write(5, 'c', 'report 2 again'))
console.log('rows:', store.rows, 'highest:', store.fence.highest)

// The leader side: take the term from the 'leader' event (or elector.fencingToken) and check
// elector.leaseRemainingMs > 0 right before each irreversible step.
