'use strict'
// Leader-only work with the AbortSignal: a loop that runs only while this process leads and
// stops the moment leadership ends (here: when the leader is stopped and hands over).
//
//   node examples/leader-work.js

const { setTimeout: sleep } = require('node:timers/promises')
const { Elector } = require('tenure')

const ids = ['127.0.0.1:47201', '127.0.0.1:47202', '127.0.0.1:47203']

/**
 * The singleton job: ticks every 100 ms while `signal` is not aborted.
 * @param {string} who @param {number | bigint} term @param {AbortSignal} signal
 */
async function scheduler(who, term, signal) {
  let ticks = 0
  try {
    for (;;) {
      await sleep(100, undefined, { signal }) // rejects with AbortError the moment leadership ends
      ticks++
      console.log(`${who} (term ${term}) tick ${ticks}`)
    }
  } catch (e) {
    if (!signal.aborted) throw e
    console.log(`${who} stopped its work after ${ticks} ticks: ${/** @type {Error} */ (signal.reason).message}`)
  }
}

async function main() {
  const electors = ids.map((id) => new Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'work' }))
  for (const e of electors) e.on('leader', ({ term, signal }) => void scheduler(e.id, term, signal))
  await Promise.all(electors.map((e) => e.start()))
  await sleep(800)
  const leader = electors.find((e) => e.isLeader)
  await leader?.stop()
  await sleep(400)
  await Promise.all(electors.map((e) => e.stop()))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
