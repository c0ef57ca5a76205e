'use strict'
// `tenure run` (bin/tenure.js): the shared command line, JSON lines and stdin control lines, with
// an authenticated three-process cluster on 127.0.0.1.

const test = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { BIN, freePorts, runProcesses } = require('./helpers')

test('--help prints the shared usage; a bad command line exits 2 with it on stderr', () => {
  const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' })
  assert.equal(help.status, 0)
  assert.match(help.stdout, /^usage: tenure run --id/)
  assert.match(help.stdout, /--bind/)
  const version = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' })
  assert.equal(version.status, 0)
  assert.equal(version.stdout.trim(), `tenure ${require('..').VERSION}`)
  const bad = spawnSync(process.execPath, [BIN, 'run', '--id', '127.0.0.1:1', '--cluster', 'c'], { encoding: 'utf8' })
  assert.equal(bad.status, 2)
  // No peer: the runtime's own check (as in every host), a bad value rather than a usage error.
  assert.match(bad.stderr, /no peer was given/)
  assert.equal(bad.stderr.trim().split('\n').length, 1, 'one line, not the whole help')
  const flag = spawnSync(process.execPath, [BIN, 'run', '--bogus', '1'], { encoding: 'utf8' })
  assert.equal(flag.status, 2)
  assert.match(flag.stderr, /--bogus/)
  assert.equal(flag.stderr.trim().split('\n').length, 1, 'one line, not the whole help')
  assert.match(flag.stderr, /--help/)
  const cfg = spawnSync(process.execPath, [BIN, 'run', '--id', '127.0.0.1:1', '--peer', '127.0.0.1:2', '--cluster', 'c', '--heartbeat-interval', '500'], {
    encoding: 'utf8',
  })
  assert.equal(cfg.status, 2)
  assert.match(cfg.stderr, /heartbeat/)
})

/** @param {number} n */

test('an authenticated 3-process cluster: JSON lines, and inspect/broadcast/transfer on stdin', { timeout: 30000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenure-cli-'))
  const keyFile = path.join(dir, 'key')
  fs.writeFileSync(keyFile, 'shared-secret\n')
  const ids = (await freePorts(3)).map((p) => `127.0.0.1:${p}`)
  const { procs, until } = runProcesses(ids, (id, peers) => [
    '--id',
    id,
    '--cluster',
    'cli',
    '--key-file',
    keyFile,
    '--min-cluster-size',
    '2',
    ...peers.map((p) => `--peer=${p}`),
  ])
  try {
    // A configuration warning (min_cluster_size 2) is a warning line; then started, then a leader.
    const warning = await until((l) => l.event === 'warning', 5000)
    assert.equal(warning.code, 'small_min_cluster_size')
    await until((l) => l.event === 'started', 5000)
    const leader = await until((l) => l.event === 'leader', 5000)
    assert.deepEqual(Object.keys(leader), ['ts_ms', 'id', 'event', 'term', 'value'])
    assert.equal(typeof leader.ts_ms, 'number')
    assert.ok(Math.abs(leader.ts_ms - Date.now()) < 10000, 'ts_ms is wall-clock milliseconds')
    const follower = await until((l) => l.event === 'follower' && l.leader === leader.id, 5000)
    assert.deepEqual(Object.keys(follower), ['ts_ms', 'id', 'event', 'term', 'leader', 'value'])

    const li = ids.indexOf(leader.id)
    const other = ids[(li + 1) % 3]
    procs[li].stdin?.write('inspect\n')
    const ins = await until((l) => l.event === 'inspect' && l.id === leader.id, 3000)
    assert.equal(ins.state.state, 'leader')
    assert.equal(ins.state.dropped_by_reason.bad_mac, 0)

    procs[li].stdin?.write('broadcast hello there\n')
    const msg = await until((l) => l.event === 'message', 3000)
    assert.equal(msg.from, leader.id)
    assert.equal(Buffer.from(msg.payload_hex, 'hex').toString(), 'hello there')

    procs[li].stdin?.write('frobnicate\n')
    const usage = await until((l) => l.event === 'warning' && l.code === 'bad_control_line', 3000)
    assert.match(usage.message, /frobnicate/)

    procs[li].stdin?.write(`transfer ${other}\n`)
    const moved = await until((l) => l.event === 'leader' && l.id === other, 3000)
    assert.ok(moved.term > leader.term)

    procs[li].stdin?.write('transfer 127.0.0.1:1\n')
    const refused = await until((l) => l.event === 'warning' && l.code === 'not_leader', 3000)
    assert.equal(refused.id, leader.id)

    // SIGTERM: the new leader hands over, prints `stopped` and exits 0 by itself.
    const oi = ids.indexOf(other)
    const exited = new Promise((resolve) => procs[oi].once('exit', (code) => resolve(code)))
    procs[oi].kill('SIGTERM')
    await until((l) => l.event === 'stopped' && l.id === other, 5000)
    assert.equal(await exited, 0)
    await until((l) => l.event === 'leader' && l.id !== other && l.term > moved.term, 5000)
  } finally {
    for (const p of procs) p.kill('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
