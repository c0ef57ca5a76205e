'use strict'
// `prepack` of every per-platform package (npm/<platform>/): refuses to pack a package whose
// addon is missing or built for another CPU, so `npm pack` / `npm publish` can never produce an
// empty or mislabelled platform package. `make dist` (scripts/dist/build.py) copies the addon and
// the supervisor helper in.

const fs = require('node:fs')
const path = require('node:path')

const dir = process.cwd()
const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
// ELF e_machine for each npm `cpu` value we publish.
const MACHINES = { x64: 62, arm64: 183 }

function fail(message) {
  process.stderr.write(`${pkg.name}: refusing to pack: ${message}\n`)
  process.exit(1)
}

// The addon, and the leader-only command's supervisor beside it (which must be executable).
for (const [file, what] of [[pkg.main, 'the addon'], ['tenure-supervise', 'the supervisor helper']]) {
  let header
  try {
    header = Buffer.alloc(20)
    const fd = fs.openSync(path.join(dir, file), 'r')
    fs.readSync(fd, header, 0, 20, 0)
    fs.closeSync(fd)
  } catch (e) {
    fail(`${what} ${file} is not there (${e.code ?? e}); build it with \`make dist\``)
  }
  if (header.readUInt32BE(0) !== 0x7f454c46) fail(`${file} is not an ELF file`)
  const machine = header.readUInt16LE(18)
  const want = MACHINES[pkg.cpu[0]]
  if (machine !== want) fail(`${file} is for ELF machine ${machine}, but the package says cpu ${pkg.cpu[0]} (machine ${want})`)
}
if ((fs.statSync(path.join(dir, 'tenure-supervise')).mode & 0o111) === 0) fail('tenure-supervise is not executable')
for (const f of pkg.files) {
  if (!fs.existsSync(path.join(dir, f))) fail(`${f} (listed in "files") is missing`)
}
