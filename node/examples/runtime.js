'use strict'
// The runtime: three Electors over UDP on 127.0.0.1 in one process (normally one per process).
// Leadership is handed over gracefully when the leader stops.
//
//   node examples/runtime.js

const { Elector } = require('tenure')

const ids = ['127.0.0.1:47101', '127.0.0.1:47102', '127.0.0.1:47103']

async function main() {
  const electors = ids.map((id) => new Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'example' }))
  for (const e of electors) {
    e.on('leader', ({ term }) => console.log(`${e.id} leads term ${term}`))
    e.on('follower', ({ term, leader }) => console.log(`${e.id} follows ${leader ?? 'nobody'} (term ${term})`))
    e.on('error', (err) => console.error(`${e.id}: ${err.message}`))
  }
  await Promise.all(electors.map((e) => e.start()))
  await new Promise((r) => setTimeout(r, 1000))
  const leader = electors.find((e) => e.isLeader)
  if (leader) {
    console.log(`stopping ${leader.id}: it hands leadership over first`)
    await leader.stop()
  }
  await new Promise((r) => setTimeout(r, 300))
  console.log('state of one follower:', JSON.stringify(electors.find((e) => e !== leader)?.inspect(), null, 0).slice(0, 120), '...')
  await Promise.all(electors.map((e) => e.stop()))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
