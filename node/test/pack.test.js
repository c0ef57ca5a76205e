'use strict'
// Packing. The addon is not in this package but in the per-platform packages (npm/linux-* in the
// repository) that `make dist` builds and names in the packed package's optionalDependencies; the
// install of those tarballs on a machine without Rust is tests/dist/test_install.py (`make
// test-dist`). Here: packing the checkout as it is is refused, and the file list is right.

const test = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const PKG_DIR = path.join(__dirname, '..')
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const env = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' }

test('npm pack of the checkout is refused: it would install no addon', { timeout: 120000 }, () => {
  const r = spawnSync(NPM, ['pack', '--dry-run'], { cwd: PKG_DIR, env, encoding: 'utf8' })
  assert.notEqual(r.status, 0)
  assert.match(r.stderr, /tenure: refusing to pack: no optionalDependencies on the per-platform addon packages/)
  assert.match(r.stderr, /make dist/)
})

test('the packed file list: sources, types, bin, examples; no addon, no tests', { timeout: 120000 }, () => {
  const r = spawnSync(NPM, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PKG_DIR, env, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const files = JSON.parse(r.stdout)[0].files.map((/** @type {{ path: string }} */ f) => f.path).sort()
  for (const f of ['package.json', 'index.d.ts', 'index.mjs', 'lib/index.js', 'lib/native.js', 'bin/tenure.js', 'README.md', 'examples/runtime.js']) {
    assert.ok(files.includes(f), `the tarball contains ${f}: ${files.join(', ')}`)
  }
  assert.ok(!files.some((/** @type {string} */ f) => f.endsWith('.node')), `no addon in the main package: ${files.join(', ')}`)
  assert.ok(!files.some((/** @type {string} */ f) => f.startsWith('test/') || f.startsWith('node_modules/')), 'no tests or node_modules')
  const manifest = JSON.parse(fs.readFileSync(path.join(PKG_DIR, 'package.json'), 'utf8'))
  assert.deepEqual(manifest.dependencies ?? {}, {}, 'no runtime dependencies')
})
