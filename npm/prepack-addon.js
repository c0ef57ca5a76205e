'use strict'
// `prepack` of every per-platform package (npm/<platform>/): refuses to pack a package whose
// addon is missing or built for another CPU, so `npm pack` / `npm publish` can never produce an
// empty or mislabelled platform package. `make dist` (scripts/dist/build.py) copies the addon and
// the supervisor helper in.

const fs = require('node:fs')
const path = require('node:path')

const dir = process.cwd()
const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
// What each binary format calls the CPU of each npm `cpu` value we publish: ELF e_machine, Mach-O
// cputype, PE/COFF Machine.
const MACHINES = {
  elf: { x64: 62, arm64: 183 },
  macho: { x64: 0x01000007, arm64: 0x0100000c },
  pe: { x64: 0x8664, arm64: 0xaa64 },
}
// The binary format each npm `os` value loads.
const FORMATS = { linux: 'elf', darwin: 'macho', win32: 'pe' }

function fail(message) {
  process.stderr.write(`${pkg.name}: refusing to pack: ${message}\n`)
  process.exit(1)
}

/** [format, machine] of a binary's first bytes, or fails naming the file. */
function machineOf(file, header) {
  if (header.readUInt32BE(0) === 0x7f454c46) return ['elf', header.readUInt16LE(18)]
  if (header.readUInt32LE(0) === 0xfeedfacf) return ['macho', header.readUInt32LE(4)]
  if (header.readUInt16LE(0) === 0x5a4d) {
    // MZ stub: the PE header is at e_lfanew; its Machine field follows the 4-byte signature.
    const at = header.readUInt32LE(0x3c)
    const pe = Buffer.alloc(6)
    const fd = fs.openSync(path.join(dir, file), 'r')
    fs.readSync(fd, pe, 0, 6, at)
    fs.closeSync(fd)
    if (pe.readUInt32LE(0) !== 0x00004550) fail(`${file} has an MZ stub but no PE header`)
    return ['pe', pe.readUInt16LE(4)]
  }
  fail(`${file} is not an ELF, 64-bit Mach-O or PE file`)
}

// The addon, and the leader-only command's supervisor beside it where the package lists one
// (every platform package does; a package without one would make its command line supervise with a
// second Node.js). Its name is the one node/lib/native.js looks for: `.exe` on Windows. Outside
// Windows it must be executable; Windows runs a file by its name, and a tarball packed there may
// carry no execute bits.
const wantFormat = FORMATS[pkg.os[0]]
const binaries = [[pkg.main, 'the addon']]
const helperName = wantFormat === 'pe' ? 'tenure-supervise.exe' : 'tenure-supervise'
const hasHelper = pkg.files.includes(helperName)
if (hasHelper) binaries.push([helperName, 'the supervisor helper'])
for (const [file, what] of binaries) {
  let header
  try {
    header = Buffer.alloc(64)
    const fd = fs.openSync(path.join(dir, file), 'r')
    fs.readSync(fd, header, 0, 64, 0)
    fs.closeSync(fd)
  } catch (e) {
    fail(`${what} ${file} is not there (${e.code ?? e}); build it with \`make dist\``)
  }
  const [format, machine] = machineOf(file, header)
  if (format !== wantFormat) fail(`${file} is a ${format} file, but the package says os ${pkg.os[0]} (${wantFormat})`)
  const want = MACHINES[format][pkg.cpu[0]]
  if (machine !== want) {
    const label = format === 'elf' ? 'ELF machine' : `${format} machine`
    fail(`${file} is for ${label} ${machine}, but the package says cpu ${pkg.cpu[0]} (machine ${want})`)
  }
}
if (hasHelper && wantFormat !== 'pe' && (fs.statSync(path.join(dir, helperName)).mode & 0o111) === 0) {
  fail(`${helperName} is not executable`)
}
for (const f of pkg.files) {
  if (!fs.existsSync(path.join(dir, f))) fail(`${f} (listed in "files") is missing`)
}
