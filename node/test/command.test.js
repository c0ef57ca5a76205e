'use strict'
// The leader-only command through `tenure run ... -- CMD ARGS...` (bin/tenure.js): its supervisor
// is the native helper `tenure-supervise` beside the addon (`make node-addon` builds it), or, when
// it is missing, this command line again ([process.execPath, bin/tenure.js]). Both are checked end
// to end: the command runs on the leader with its environment, under the expected supervisor, and a
// SIGKILL of the runtime's pid takes it down. The rules themselves are tested once, in
// runtime/tests/command.rs.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const native = require('../lib/native')
const { BIN, freePorts, runProcesses } = require('./helpers')

const NO_HELPER = path.join(__dirname, 'fixtures', 'no-helper.js')

/** @param {number} pid */
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(') ') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

/** @param {number} pid */
const parent = (pid) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[1])
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

for (const helper of [true, false]) {
  test(`the command runs on the leader with its env and dies with its SIGKILLed runtime (${helper ? 'native helper' : 'fallback: node again'})`, { skip: process.platform !== 'linux', timeout: 30000 }, async () => {
    if (helper) assert.ok(native.supervisorHelper, 'tenure-supervise is missing beside the addon: build it with `make node-addon`')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenure-command-'))
    const ids = (await freePorts(3)).map((p) => `127.0.0.1:${p}`)
    const script = 'echo "$TENURE_TERM $TENURE_LEADER_ID" > "$0/$$"; exec sleep 60'
    const { procs, until } = runProcesses(
      ids,
      (id, peers) => ['--id', id, '--cluster', 'node-command', '--kill-grace', '200', ...peers.map((p) => `--peer=${p}`), '--', 'sh', '-c', script, dir],
      'pipe',
      helper ? BIN : NO_HELPER,
    )
    /** @type {string[]} */
    const stderr = procs.map(() => '')
    procs.forEach((p, i) => p.stderr?.on('data', (d) => { stderr[i] += d }))
    try {
      const started = /** @type {any} */ (await until((l) => l.event === 'command_started', 15000))
      // `started.pid` is the command's own (it names its record after `$$`); `started.pgid` its
      // process group, led by the guard the supervisor forked, whose child the command is.
      const guard = started.pgid
      const records = () => fs.readdirSync(dir)
      // `>` creates the file before `echo` writes it: wait for the whole line, not the file.
      const line = () => (records().length === 1 ? fs.readFileSync(path.join(dir, records()[0]), 'utf8') : '')
      for (let i = 0; i < 500 && !line().endsWith('\n'); i++) await sleep(10)
      assert.deepEqual(line().trim().split(' '), [String(started.term), started.id])
      const command = Number(records()[0])
      assert.equal(command, started.pid)
      assert.equal(parent(command), guard)
      const leader = procs[ids.indexOf(started.id)]
      // The supervisor is the guard's parent, a child of the runtime's process.
      assert.equal(fs.readFileSync(`/proc/${guard}/comm`, 'utf8').trim(), 'tenure-guard')
      const supervisor = parent(guard)
      assert.equal(parent(supervisor), leader.pid)
      const exe = fs.readlinkSync(`/proc/${supervisor}/exe`)
      assert.equal(exe, fs.realpathSync(helper ? native.supervisorHelper : process.execPath), `supervised by ${exe}`)
      leader.kill('SIGKILL') // the runtime's pid alone
      for (let i = 0; i < 200 && (alive(guard) || alive(command)); i++) await sleep(10)
      assert.ok(!alive(command), 'the command outlived its SIGKILLed runtime')
      assert.ok(!alive(guard), 'the guard outlived its SIGKILLed runtime')
    } finally {
      for (const p of procs) p.kill('SIGKILL')
      fs.rmSync(dir, { recursive: true, force: true })
    }
    // The fallback says why at start, once per process; the helper says nothing.
    await sleep(100)
    for (const text of stderr) assert.equal(text.split('the native supervisor').length - 1, helper ? 0 : 1, text)
  })
}
