'use strict'
// tests/vectors: every binding decodes each valid vector, checks the decoded fields, re-encodes
// it to the same bytes, and feeds each invalid vector to a node, checking the drop reason.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { wire, Node, DroppedError } = require('..')
const { parseExact } = require('./exact-json')
const { REPO } = require('./helpers')

const DIR = path.join(REPO, 'tests', 'vectors')
/** @param {string} name */
const load = (name) => {
  const file = path.join(DIR, name)
  return fs.existsSync(file) ? parseExact(fs.readFileSync(file, 'utf8')) : null
}
/** @param {string | null} hex */
const keyOf = (hex) => (hex === null ? null : Buffer.from(hex, 'hex'))

/** The vector's message in the JS shape of wire.decode. @param {any} m */
function expectedMessage(m) {
  switch (m.kind) {
    case 'pre_vote_reply':
    case 'vote_reply':
      return { kind: m.kind, granted: m.granted }
    case 'vote':
      return { kind: m.kind, transfer: m.transfer }
    case 'heartbeat':
      return { kind: m.kind, sentAt: m.sent_at }
    case 'heartbeat_ack':
      return { kind: m.kind, echo: m.echo }
    case 'app':
      return { kind: m.kind, seq: m.seq, payload: Buffer.from(m.payload_hex, 'hex') }
    case 'hello':
      return { kind: m.kind, version: m.version, reply: m.reply }
    default:
      return { kind: m.kind }
  }
}

const messages = load('messages.json')
test('tests/vectors/messages.json: decode, check, re-encode byte for byte', { skip: messages === null && 'no messages.json yet' }, () => {
  assert.ok(messages.length > 0)
  const kinds = new Set()
  for (const v of messages) {
    const key = keyOf(v.key_hex)
    const bytes = Buffer.from(v.hex, 'hex')
    const env = wire.decode(bytes, key, v.receiver)
    kinds.add(env.message.kind)
    assert.deepEqual(
      env,
      {
        cluster: v.envelope.cluster,
        from: v.envelope.from,
        term: v.envelope.term,
        incarnation: v.envelope.incarnation,
        message: expectedMessage(v.envelope.message)
      },
      v.name
    )
    assert.equal(wire.encode(env, key, v.receiver).toString('hex'), v.hex, `${v.name}: re-encoded`)
    if (key) {
      // The tag covers the receiver: the same bytes do not authenticate at another node.
      assert.throws(() => wire.decode(bytes, key, v.receiver + 'x'), { code: 'bad_mac' }, v.name)
    }
  }
  assert.equal(kinds.size, 10, 'every message kind is covered')
})

const invalid = load('invalid.json')
test('tests/vectors/invalid.json: a node drops each with the documented reason', { skip: invalid === null && 'no invalid.json yet' }, () => {
  assert.ok(invalid.length > 0)
  for (const v of invalid) {
    const node = new Node({ id: v.node_id, cluster: v.cluster, bootstrap: [v.node_id, 'n2', 'n3'], key: keyOf(v.key_hex) })
    assert.throws(
      () => node.handleMessage(1, v.from, Buffer.from(v.hex, 'hex')),
      (e) => e instanceof DroppedError && e.code === v.reason,
      `${v.name}: expected ${v.reason}`
    )
    assert.equal(node.inspect().droppedByReason[v.reason], 1, `${v.name}: counted`)
    assert.deepEqual(node.drain(), [], `${v.name}: no outputs`)
  }
})
