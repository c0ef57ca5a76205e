// A static file server for the demo, on 127.0.0.1 only. `node serve.mjs [PORT]` (0: any free port).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('.', import.meta.url));
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ts': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** Starts the server; resolves to { server, url }. */
export function serve(port = 0, root = ROOT) {
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = normalize(join(root, path));
      if (!file.startsWith(root.endsWith(sep) ? root : root + sep) && file !== root) throw Object.assign(new Error('outside'), { status: 403 });
      if (file.split(sep).includes('node_modules')) throw Object.assign(new Error('hidden'), { status: 404 });
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch (e) {
      res.writeHead(e.status ?? 404, { 'content-type': 'text/plain' });
      res.end(e.status === 403 ? 'forbidden' : 'not found');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: p } = server.address();
      resolve({ server, url: `http://127.0.0.1:${p}/` });
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const port = Number(process.argv[2] ?? process.env.PORT ?? 8080);
  const { url } = await serve(port);
  console.log(`tenure demo: ${url}`);
  console.log(`multi-tab mode: ${url}?mode=tabs (open it in several tabs)`);
  console.log('Ctrl-C to stop');
}
