'use strict'
// Packing: `npm pack`, install the tarball into an empty folder offline (the package has no
// runtime dependencies: only the prebuilt addon it ships), then `require` it, `import` it and run
// its bin from there.

const test = require('node:test')
const assert = require('node:assert/strict')
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const PKG_DIR = path.join(__dirname, '..')
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'

test('npm pack → install into an empty folder offline → require, import and the bin work', { timeout: 120000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tenure-pack-'))
  try {
    const env = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' }
    const packed = JSON.parse(execFileSync(NPM, ['pack', '--json', '--pack-destination', tmp], { cwd: PKG_DIR, env, encoding: 'utf8' }))
    const files = packed[0].files.map((/** @type {{ path: string }} */ f) => f.path).sort()
    for (const f of ['package.json', 'index.d.ts', 'index.mjs', 'lib/index.js', 'lib/elector.js', 'bin/tenure.js', 'native/tenure.node', 'README.md']) {
      assert.ok(files.includes(f), `the tarball contains ${f}: ${files.join(', ')}`)
    }
    assert.ok(!files.some((/** @type {string} */ f) => f.startsWith('test/') || f.startsWith('node_modules/')), 'no tests or node_modules in the tarball')
    const manifest = JSON.parse(fs.readFileSync(path.join(PKG_DIR, 'package.json'), 'utf8'))
    assert.deepEqual(manifest.dependencies ?? {}, {}, 'no runtime dependencies')

    const app = path.join(tmp, 'app')
    fs.mkdirSync(app)
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }))
    execFileSync(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', path.join(tmp, packed[0].filename)], {
      cwd: app,
      env,
      stdio: 'pipe',
    })

    const cjs = execFileSync(
      process.execPath,
      ['-e', "const t = require('tenure'); const n = new t.Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] }); console.log(JSON.stringify([t.VERSION, n.role, typeof t.Elector, require.resolve('tenure')]))"],
      { cwd: app, encoding: 'utf8' }
    )
    const [version, role, elector, resolved] = JSON.parse(cjs)
    assert.equal(version, manifest.version)
    assert.equal(role, 'follower')
    assert.equal(elector, 'function')
    assert.ok(resolved.startsWith(path.join(app, 'node_modules', 'tenure')), `resolved from the install: ${resolved}`)

    const esm = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import tenure, { Node, FenceChecker, ConfigError } from 'tenure'; const f = new FenceChecker(); let code; try { new Node({ id: '', cluster: 'c' }) } catch (e) { code = e instanceof ConfigError && e.code } console.log(JSON.stringify([tenure.Node === Node, f.check(1, 'a'), code]))",
      ],
      { cwd: app, encoding: 'utf8' }
    )
    assert.deepEqual(JSON.parse(esm), [true, 'accepted', 'empty_id'])

    const help = execFileSync(path.join(app, 'node_modules', '.bin', 'tenure'), ['--help'], { cwd: app, encoding: 'utf8' })
    assert.match(help, /^usage: tenure run --id HOST:PORT/)
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
})
