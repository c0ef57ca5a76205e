'use strict'
// The leader-only command through `tenure run ... -- CMD ARGS...` (bin/tenure.js): its supervisor
// is this command line again ([process.execPath, bin/tenure.js]), so this checks that re-invocation
// end to end: the command runs on the leader with its environment, and a SIGKILL of the runtime's
// pid takes it down. The rules themselves are tested once, in runtime/tests/command.rs.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { freePorts, runProcesses } = require('./helpers')

/** @param {number} pid */
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(') ') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

test('the command runs on the leader with its env and dies with its SIGKILLed runtime', { skip: process.platform !== 'linux', timeout: 30000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenure-command-'))
  const ids = (await freePorts(3)).map((p) => `127.0.0.1:${p}`)
  const script = 'echo "$TENURE_TERM $TENURE_LEADER_ID" > "$0/$$"; exec sleep 60'
  const { procs, until } = runProcesses(
    ids,
    (id, peers) => ['--id', id, '--cluster', 'node-command', '--kill-grace', '200', ...peers.map((p) => `--peer=${p}`), '--', 'sh', '-c', script, dir],
    'ignore',
  )
  try {
    const started = /** @type {any} */ (await until((l) => l.event === 'command_started', 15000))
    const record = path.join(dir, String(started.pid))
    // `>` creates the file before `echo` writes it: wait for the whole line, not the file.
    const line = () => (fs.existsSync(record) ? fs.readFileSync(record, 'utf8') : '')
    for (let i = 0; i < 500 && !line().endsWith('\n'); i++) await sleep(10)
    assert.deepEqual(line().trim().split(' '), [String(started.term), started.id])
    procs[ids.indexOf(started.id)].kill('SIGKILL') // the runtime's pid alone
    for (let i = 0; i < 200 && alive(started.pid); i++) await sleep(10)
    assert.ok(!alive(started.pid), 'the command outlived its SIGKILLed runtime')
  } finally {
    for (const p of procs) p.kill('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
