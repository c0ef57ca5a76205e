'use strict'
// `prepack` of the main `tenure` package: the addon is not in this package but in per-platform
// packages (npm/<platform>/ in the repository) that it names in optionalDependencies. `make dist`
// (scripts/dist/build.py) packs a copy of this directory with those dependencies added; packing the
// checkout as it is would give a package that installs no addon anywhere, so refuse.

const fs = require('node:fs')
const path = require('node:path')

const pkg = JSON.parse(fs.readFileSync(path.join(process.cwd(), 'package.json'), 'utf8'))
const optional = Object.entries(pkg.optionalDependencies ?? {}).filter(([name]) => name.startsWith('tenure-'))
let problem = null
if (optional.length === 0) {
  problem = 'no optionalDependencies on the per-platform addon packages (tenure-linux-x64-gnu, ...)'
} else {
  const wrong = optional.filter(([, version]) => version !== pkg.version)
  if (wrong.length > 0) problem = `optionalDependencies ${wrong.map(([n, v]) => `${n}@${v}`).join(', ')} are not at ${pkg.version}`
}
if (problem !== null) {
  process.stderr.write(
    `tenure: refusing to pack: ${problem}. Run \`make dist\`, which builds the addons and packs ` +
      `the main and per-platform packages into dist/npm/.\n`
  )
  process.exit(1)
}
