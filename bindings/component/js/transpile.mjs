// Transpiles the tenure component (target/component/tenure.wasm, built by `make component`, or
// $TENURE_COMPONENT) into an ES module under out/ with jco. Instantiation mode "async": the host
// passes its `tenure:election/host` imports to instantiate(), so every node gets its own instance
// and its own callbacks.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transpile } from '@bytecodealliance/jco-transpile';

const here = dirname(fileURLToPath(import.meta.url));
const component = process.env.TENURE_COMPONENT ?? resolve(here, '../../../target/component/tenure.wasm');
if (!existsSync(component)) {
  console.error(`${component} not found: run \`make component\` first`);
  process.exit(1);
}
const outDir = join(here, 'out');
const { files } = await transpile(component, { name: 'tenure', instantiation: 'async', outDir });
for (const [name, bytes] of Object.entries(files)) {
  const path = resolve(outDir, name);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
}
console.log(`transpiled ${component} -> ${outDir} (${Object.keys(files).length} files)`);
