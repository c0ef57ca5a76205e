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
async function getCoreModule(path) {
  if (!modules.has(path)) modules.set(path, WebAssembly.compile(await readFile(join(outDir, path))));
  return modules.get(path);
}

/**
 * Starts one node. `config` uses the WIT record's camelCase fields; u64 values are BigInt.
 * Returns { node, outputs, wakeup() }: `outputs` collects every callback as [kind, ...args].
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
      const error = onBecameLeader?.(term);
      return error === undefined ? { tag: 'ok' } : { tag: 'err', val: error };
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
  const imports = {
    'tenure:election/host': host,
    'tenure:election/host@0.1.0': host,
    'tenure:election/types': {},
    'tenure:election/types@0.1.0': {},
  };
  const root = await instantiate(getCoreModule, imports);
  const node = new root.node.Node(
    {
      bootstrap: [],
      minClusterSize: undefined,
      electionTimeoutMin: undefined,
      electionTimeoutMax: undefined,
      heartbeatInterval: undefined,
      leaseDuration: undefined,
      ghostTtl: undefined,
      preVote: undefined,
      confirmLeader: undefined,
      durable: false,
      key: undefined,
      restored: undefined,
      admitUnknownPeers: undefined,
      maxPeers: undefined,
      maxClockDriftPpm: undefined,
      incarnation: undefined,
      ...config,
    },
    now,
  );
  return { node, outputs, wakeup: () => wakeup };
}
