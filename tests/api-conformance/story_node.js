'use strict'
// The API conformance story through the Node.js package's Elector: `node story_node.js` prints the
// story's normalised records as one JSON list (see story.md). Only what is idiomatic differs from
// the Python drivers (promises, whileLeader with an AbortSignal, camelCase inspect keys).
const dgram = require('node:dgram')
const path = require('node:path')

const tenure = require(path.join(__dirname, '..', '..', 'node'))

const TIMEOUT = 20000
const DEFAULT_FIELDS = ['heartbeat_interval', 'election_timeout_min', 'election_timeout_max', 'ghost_ttl', 'min_cluster_size']
const camel = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase())
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

async function freeIds(n) {
  const socks = await Promise.all(
    Array.from({ length: n }, () => new Promise((resolve) => {
      const s = dgram.createSocket('udp4')
      s.bind(0, '127.0.0.1', () => resolve(s))
    })),
  )
  const ids = socks.map((s) => `127.0.0.1:${s.address().port}`)
  for (const s of socks) s.close()
  return ids
}

const BAD_INPUTS = [
  ['id', { id: 'nope' }],
  ['peer', { peers: ['127.0.0.1'] }],
  ['timeouts', { electionTimeoutMin: 500, electionTimeoutMax: 400 }],
  ['cluster', { cluster: '' }],
  ['heartbeat_interval', { heartbeatInterval: 0 }],
]

const codeOf = (e) => (e instanceof tenure.TenureError ? e.code : e?.constructor?.name ?? String(e))

async function waitFor(ok, ms = TIMEOUT) {
  const deadline = Date.now() + ms
  while (!ok() && Date.now() < deadline) await sleep(20)
  return ok()
}

async function leaderOf(electors, exclude) {
  let found = null
  await waitFor(() => (found = electors.find((e) => e !== exclude && e.state === 'running' && e.isLeader) ?? null) !== null)
  if (!found) throw new Error('no leader')
  return found
}

async function main() {
  const out = []
  let ids = await freeIds(3)
  for (const [name, bad] of BAD_INPUTS) {
    try {
      const e = new tenure.Elector({ id: ids[0], peers: ids.slice(1), cluster: 'api', ...bad })
      await e.start()
      await e.stop()
      out.push(['bad_input', name, null])
    } catch (err) {
      out.push(['bad_input', name, codeOf(err)])
    }
  }

  // Cluster 1: leader work that fails twice, then succeeds.
  const attempts = []
  const warned = new Set()
  const leases = new Map()
  const work = async (lease) => {
    attempts.push(lease.term)
    if (attempts.length <= 2) throw new Error(`attempt ${attempts.length} fails`)
    await new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }))
  }
  let electors = ids.map((id) => new tenure.Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'api' }))
  for (const e of electors) {
    e.on('warning', ({ code }) => warned.add(code))
    e.on('error', () => {})
    e.whileLeader(async (lease) => {
      leases.set(e, lease)
      return work(lease)
    }).catch(() => {})
    await e.start()
  }
  let leader = await leaderOf(electors)
  out.push(['leader_elected'])
  const inspect = leader.inspect()
  out.push(['defaults', Object.fromEntries(DEFAULT_FIELDS.map((k) => [k, inspect[camel(k)]]))])
  await waitFor(() => attempts.length >= 3)
  out.push(['work', 'attempts_until_success', attempts.length, 'same_term', new Set(attempts).size === 1])
  leader = await leaderOf(electors)
  await waitFor(() => leases.get(leader)?.term === leader.term && leases.get(leader).valid)
  const lease = leases.get(leader)
  out.push(['lease', 'before_pause', Boolean(lease?.valid)])
  await sleep(500)
  out.push(['lease', 'after_pause', Boolean(lease?.valid)])
  const old = leader
  old.transferLeadership()
  const next = await leaderOf(electors, old)
  out.push(['transfer', 'new_leader', next !== old, 'old_lease_valid', Boolean(lease?.valid)])
  out.push(['warned', 'leader_work_failed', warned.has('leader_work_failed')])
  try {
    old.transferLeadership()
    out.push(['bad_call', 'transfer_by_follower', null])
  } catch (err) {
    out.push(['bad_call', 'transfer_by_follower', codeOf(err)])
  }
  await next.stop()
  const rest = electors.filter((e) => e !== next)
  const after = await leaderOf(rest)
  out.push(['graceful_stop', 'successor', after !== next])
  for (const e of rest) await e.stop()

  // Cluster 2: leader work that always fails.
  ids = await freeIds(3)
  const errors = new Map()
  electors = ids.map((id) => new tenure.Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'api2' }))
  for (const e of electors) {
    // The error that stopped an elector (a TenureError); each failure of the work is an 'error'
    // too (plain Errors: the Node.js way to report it, as Python logs it), not an outcome.
    e.on('error', (err) => {
      if (err instanceof tenure.TenureError) errors.set(e, err)
    })
    e.whileLeader(async () => {
      throw new Error('always fails')
    }).catch(() => {})
    await e.start()
  }
  // Two of three stopped leave no quorum: the third can never lead, so never fail, again.
  await waitFor(() => electors.filter((e) => e.state === 'closed').length >= 2)
  const codes = electors.map((e) => (errors.has(e) ? codeOf(errors.get(e)) : e.state === 'closed' ? null : 'still_running'))
  for (const e of electors) await e.stop()
  out.push(['always_fails', codes.sort((a, b) => String(a).localeCompare(String(b)))])
  process.stdout.write(JSON.stringify(out) + '\n')
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
