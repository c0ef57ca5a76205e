// Which import keys jco 0.15's transpiled module reads at run time, and which its `.d.ts`
// declares: host.mjs's importObject passes both, and says why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { getCoreModule, importObject } from '../host.mjs';
import { instantiate } from '../out/tenure.js';

const noop = () => {};
const host = {
  send: noop,
  setWakeup: noop,
  persist: noop,
  becameLeader: () => ({ tag: 'ok' }),
  becameFollower: noop,
  confirmLeader: () => 'grant',
  peerJoined: noop,
  peerLeft: noop,
  message: noop,
};
const start = (root) => new root.node.Node(root.node.defaultConfig('a', 'c', 1n), 0n);

test('the unversioned key alone runs the component', async () => {
  const root = await instantiate(getCoreModule, { 'tenure:election/host': host });
  assert.equal(start(root).id(), 'a');
});

test('the versioned key alone does not: the generated JS reads the unversioned name', async () => {
  await assert.rejects(
    async () => instantiate(getCoreModule, { 'tenure:election/host@0.3.0': host }),
    /'imports\.tenure:election\/host' as it is undefined/,
  );
});

test("the generated .d.ts declares the versioned names, so a typed host passes them too", () => {
  const dts = readFileSync(new URL('../out/tenure.d.ts', import.meta.url), 'utf8');
  const declared = /interface ImportObject \{([^}]*)\}/.exec(dts)[1];
  assert.match(declared, /'tenure:election\/host@0\.3\.0'/);
  assert.doesNotMatch(declared, /'tenure:election\/host'/);
  for (const key of Object.keys(importObject(host))) {
    assert.ok(key === 'tenure:election/host' || declared.includes(`'${key}'`), key);
  }
});
