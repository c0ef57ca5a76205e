// The shared tests/scenarios replayed through the jco-transpiled component: the same outputs,
// byte for byte, as every other host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNode } from '../host.mjs';

const dir = join(dirname(fileURLToPath(import.meta.url)), '../../../../tests/scenarios');
const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : [];
const hex = (b) => Buffer.from(b).toString('hex');
const bytes = (h) => Uint8Array.from(Buffer.from(h, 'hex'));
const big = (v) => (v === null ? undefined : BigInt(v));
const num = (v) => (v === undefined ? null : Number(v));
const str = (v) => (v === undefined ? null : v);

function output(o) {
  switch (o[0]) {
    case 'send': return { type: 'send', to: o[1], hex: hex(o[2]) };
    case 'persist': return { type: 'persist', term: Number(o[1]), voted_for: str(o[2]) };
    case 'became_leader':
    case 'confirm_leader': return { type: 'event', event: o[0], term: Number(o[1]) };
    case 'became_follower': return { type: 'event', event: o[0], term: Number(o[1]), leader: str(o[2]) };
    case 'peer_joined':
    case 'peer_left': return { type: 'event', event: o[0], peer: o[1] };
    case 'message': return { type: 'event', event: o[0], from: o[1], hex: hex(o[2]) };
    default: return undefined; // set_wakeup: checked through pollTimeout()
  }
}

// A refused call throws the WIT error value: a drop-reason string or a { code, message } record.
function apply(node, at, inp) {
  try {
    switch (inp.kind) {
      case 'timeout': node.handleTimeout(at); break;
      case 'message': node.handleMessage(at, inp.from, bytes(inp.hex)); break;
      case 'join': node.join(at, inp.peer); break;
      case 'leave': node.leave(at, inp.peer); break;
      case 'peer_down': node.peerDown(at, inp.peer, inp.reason.replace('_', '-')); break;
      case 'confirm': node.confirmLeader(at, BigInt(inp.term), inp.granted); break;
      case 'leader_failed': node.leaderHandlerFailed(at, BigInt(inp.term)); break;
      case 'transfer': node.transferLeadership(at, inp.peer); break;
      case 'broadcast': node.broadcast(at, bytes(inp.hex)); break;
      case 'proclaim': node.proclaim(at, inp.value); break;
      default: throw new Error(`unknown input kind ${inp.kind}`);
    }
  } catch (e) {
    const code = typeof e === 'string' ? e : e?.code;
    if (typeof code !== 'string') throw e;
    return code.replaceAll('-', '_');
  }
  return 'ok';
}

test('scenario files are present', { skip: files.length === 0 && 'no tests/scenarios/*.json yet' }, () => {
  assert.ok(files.length > 0);
});

for (const file of files) {
  test(`scenario ${file} replays byte for byte`, async () => {
    const text = readFileSync(join(dir, file), 'utf8');
    const s = JSON.parse(text);
    // Seeds are full u64s: JSON.parse would round them to a double, so take the digits.
    const seed = BigInt(/"seed":\s*(\d+)/.exec(text)[1]);
    const c = s.config;
    const { node, outputs } = await startNode(
      {
        id: c.id,
        cluster: c.cluster,
        bootstrap: c.bootstrap,
        minClusterSize: c.min_cluster_size ?? undefined,
        electionTimeoutMin: big(c.election_timeout_min),
        electionTimeoutMax: big(c.election_timeout_max),
        heartbeatInterval: big(c.heartbeat_interval),
        leaseDuration: big(c.lease_duration ?? null),
        ghostTtl: big(c.ghost_ttl),
        preVote: c.pre_vote,
        confirmLeader: c.confirm_leader,
        durable: c.durable,
        key: c.key_hex ? bytes(c.key_hex) : undefined,
        // Fields added after the first files; absent ones keep the component's defaults.
        admitUnknownPeers: c.admit_unknown_peers ?? undefined,
        maxPeers: c.max_peers ?? undefined,
        maxClockDriftPpm: c.max_clock_drift_ppm ?? undefined,
        incarnation: big(c.incarnation ?? null),
        value: c.value ?? undefined,
        priority: c.priority ?? undefined,
        neverLead: c.never_lead ?? undefined,
        preemptAfter: big(c.preempt_after ?? null),
        observer: c.observer ?? undefined,
        observerPeers: c.observer_peers ?? [],
        seed,
        restored: s.restored
          ? { term: BigInt(s.restored.term), votedFor: s.restored.voted_for ?? undefined }
          : undefined,
      },
      BigInt(s.start_ms),
      { confirm: 'defer' },
    );
    outputs.splice(0);
    s.steps.forEach((step, i) => {
      const at = BigInt(step.at);
      const where = `${file} step ${i} (${step.input.kind} at ${step.at})`;
      assert.equal(apply(node, at, step.input), step.result, where);
      const got = outputs.splice(0).map(output).filter((o) => o !== undefined);
      assert.deepEqual(got, step.outputs, where);
      assert.equal(num(node.pollTimeout()), step.next_deadline, where);
    });
    if (s.final) {
      assert.deepEqual(
        [node.role(), Number(node.term()), str(node.leader()), str(node.votedFor()), str(node.leaderValue())],
        [s.final.role, s.final.term, s.final.leader, s.final.voted_for, s.final.value ?? null],
      );
    }
  });
}
