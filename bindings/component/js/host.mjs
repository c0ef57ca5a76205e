// A Node.js host for the tenure component, on top of the jco-transpiled module in out/.
//
// Each node gets its own component instance with its own `tenure:election/host` imports.
// Re-entrancy rule: the imports run while JS is inside a call into the node, so they never call
// the node; they only record into `outputs`, and the host acts after the call returned.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { instantiate } from './out/tenure.js';

const outDir = join(dirname(fileURLToPath(import.meta.url)), 'out');
const modules = new Map();
/** Compiles (once) the core modules of the transpiled component, for jco's `instantiate`. */
export async function getCoreModule(path) {
  if (!modules.has(path)) modules.set(path, WebAssembly.compile(await readFile(join(outDir, path))));
  return modules.get(path);
}

/**
 * The import object for jco's `instantiate`, with `host` as the `tenure:election/host` interface.
 *
 * jco 0.15's generated JS reads the imports by their unversioned names
 * (`imports['tenure:election/host']`), while its generated `.d.ts` (`ImportObject`) declares the
 * versioned ones (`'tenure:election/host@0.3.0'`). A JavaScript host needs only the unversioned
 * key; a TypeScript host passes both so that the object also type-checks. test/imports.test.mjs
 * checks both facts against the transpiled output.
 */
export function importObject(host) {
  return {
    'tenure:election/host': host,
    'tenure:election/host@0.3.0': host,
    'tenure:election/types@0.3.0': {},
  };
}

/**
 * Starts one node (in its own component instance: the `host` imports carry no node identity, so
 * the component holds one node per instance). `config` holds the WIT record's camelCase fields
 * to change; the rest come from the component's `defaultConfig(id, cluster, seed)`. u64 values
 * are BigInt. Returns { node, outputs, wakeup() }: `outputs` collects every callback as
 * [kind, ...args].
 */
export async function startNode(config, now, { confirm = 'grant', onBecameLeader } = {}) {
  const outputs = [];
  let wakeup;
  const host = {
    send: (to, bytes) => outputs.push(['send', to, bytes]),
    setWakeup: (deadline) => {
      wakeup = deadline;
      outputs.push(['set_wakeup', deadline]);
    },
    persist: (state) => outputs.push(['persist', state.term, state.votedFor]),
    becameLeader: (term) => {
      outputs.push(['became_leader', term]);
      // undefined, or a refusal: 'handler-failed' or 'not-ready'.
      const refusal = onBecameLeader?.(term);
      return refusal === undefined ? { tag: 'ok' } : { tag: 'err', val: refusal };
    },
    becameFollower: (term, leader) => outputs.push(['became_follower', term, leader]),
    confirmLeader: (term) => {
      outputs.push(['confirm_leader', term]);
      return confirm;
    },
    peerJoined: (peer) => outputs.push(['peer_joined', peer]),
    peerLeft: (peer) => outputs.push(['peer_left', peer]),
    message: (sender, payload) => outputs.push(['message', sender, payload]),
  };
  const root = await instantiate(getCoreModule, importObject(host));
  const { id, cluster, seed, ...changes } = config;
  const node = new root.node.Node({ ...root.node.defaultConfig(id, cluster, seed), ...changes }, now);
  return { node, outputs, wakeup: () => wakeup, root };
}
