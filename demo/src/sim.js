// A whole tenure cluster in one page: N wasm nodes over a simulated network with a simulated clock.
// No DOM here: the page renders `cluster.view()`; tests and the benchmark drive it directly.

/** Timers 10× the library defaults (150–300 ms election timeout, 50 ms heartbeat), to be watchable. */
export const TIMING = { electionTimeoutMin: 1500, electionTimeoutMax: 3000, heartbeatInterval: 500 };
export const CLUSTER_ID = 'demo';
const KEY = 'the-demo-cluster-key';
const WRONG_KEY = 'a-key-nobody-else-has';
/** The history slider's resolution (simulated ms between recorded snapshots) and depth. */
export const SNAPSHOT_MS = 100;
export const HISTORY_LEN = 600;

/** Small deterministic PRNG (mulberry32), so that a `?seed=` replays the same run. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Cluster {
  /**
   * @param {typeof import('../pkg/tenure_wasm.js').Node} Node the wasm class
   * @param {{size?: number, seed?: number, decode?: (bytes: Uint8Array, key?: Uint8Array, receiver?: string) => object, history?: boolean}} opts
   *   `decode`: the module's `decodeMessage` (shows a message in flight as the core reads it);
   *   `history`: record a snapshot every SNAPSHOT_MS for the history slider (the page does; the
   *   benchmark does not, so that it measures the cluster alone)
   */
  constructor(Node, { size = 5, seed = 1, decode = null, history = false } = {}) {
    this.Node = Node;
    this.decodeFn = decode;
    /** Recorded view snapshots, oldest first, one per SNAPSHOT_MS of simulated time. */
    this.history = [];
    this.nextSnapshot = history ? 0 : Infinity;
    this.random = rng(seed);
    this.now = 0;
    this.seq = 0;
    this.auth = false;
    this.net = { latency: 150, jitter: 50, loss: 0 };
    /** Per-link overrides, key "a>b": {latency?, loss?}. */
    this.links = new Map();
    /** Partition group per node id ("A" when absent): messages only flow within a group. */
    this.groups = new Map();
    /** @type {Map<string, any>} */
    this.nodes = new Map();
    this.inFlight = [];
    this.log = [];
    this.terms = []; // {term, id, start, end}
    this.listeners = new Set();
    this.counter = 0;
    for (let i = 0; i < size; i++) this.counter++, this.nodes.set(`n${this.counter}`, this.blank(`n${this.counter}`));
    for (const id of this.nodes.keys()) this.start(id, false);
    this.emit(`cluster of ${size} started: ${this.members().join(', ')}`);
    if (history) this.record();
  }

  /**
   * A node's own clock. Nodes never compare instants with each other (every deadline and echo is
   * local), so each may have its own origin: `skew` is how far this node's clock runs ahead of the
   * simulation's. "Time out now" moves it forward to the node's election deadline.
   */
  clockOf(s) {
    return this.now + s.skew;
  }

  blank(id) {
    return {
      id, node: null, crashed: false, disk: null, denyConfirm: false, wrongKey: false,
      timerStart: 0, timerDeadline: null, lastHeartbeat: null, lastRole: 'unclustered', lastTerm: 0,
      sent: 0, received: 0, dropped: 0, skew: 0,
    };
  }

  members() {
    return [...this.nodes.keys()];
  }

  alive() {
    return [...this.nodes.values()].filter((n) => n.node);
  }

  onLog(fn) {
    this.listeners.add(fn);
  }

  emit(text, kind = 'info', id = null) {
    const entry = { at: this.now, text, kind, id };
    this.log.push(entry);
    if (this.log.length > 500) this.log.shift();
    for (const fn of this.listeners) fn(entry);
  }

  // ----- node lifecycle -----------------------------------------------------------------------

  start(id, keepDisk) {
    const s = this.nodes.get(id);
    if (!keepDisk) s.disk = null;
    const config = { id, cluster: CLUSTER_ID, bootstrap: this.members(), ...TIMING, durable: true };
    if (this.auth) config.key = s.wrongKey ? WRONG_KEY : KEY;
    s.node = new this.Node(config, { seed: Math.floor(this.random() * 2 ** 32), now: this.clockOf(s), restored: s.disk });
    s.crashed = false;
    s.lastRole = s.node.role;
    s.lastTerm = s.node.term;
    s.lastHeartbeat = null;
    this.noteTimer(s);
  }

  crash(id) {
    const s = this.nodes.get(id);
    if (!s?.node) return;
    this.endTerm(id);
    s.node.free();
    s.node = null;
    s.crashed = true;
    s.timerDeadline = null;
    this.emit(`${id} crashed`, 'fault', id);
  }

  restart(id, durable = true) {
    const s = this.nodes.get(id);
    if (!s || s.node) return;
    const disk = durable ? s.disk : null;
    this.start(id, durable);
    this.emit(
      durable
        ? `${id} restarted with its durable state (term ${disk?.term ?? 0}, vote ${disk?.votedFor ?? 'none'})`
        : `${id} restarted with its disk wiped (term 0): it may vote twice in a term`,
      'fault',
      id,
    );
  }

  /** Adds a node: it starts with everyone as bootstrap and every running node joins it. */
  join() {
    if (this.nodes.size >= 9) return null;
    this.counter++;
    let id = `n${this.counter}`;
    while (this.nodes.has(id)) id = `n${++this.counter}`;
    this.nodes.set(id, this.blank(id));
    this.start(id, false);
    for (const s of this.alive()) {
      if (s.id !== id) {
        s.node.join(this.clockOf(s), id);
        this.flush(s);
      }
    }
    this.emit(`${id} joined: every node now counts ${this.nodes.size} members`, 'member', id);
    return id;
  }

  /** Removes a node for good: the others `leave` it (quorum shrinks) and it stops. */
  leave(id) {
    const s = this.nodes.get(id);
    if (!s || this.nodes.size <= 1) return;
    this.endTerm(id);
    if (s.node) s.node.free();
    this.nodes.delete(id);
    this.groups.delete(id);
    for (const o of this.alive()) {
      try {
        o.node.leave(this.clockOf(o), id);
      } catch {
        // already not a member of that node's view
      }
      this.flush(o);
    }
    this.emit(`${id} left: the others withdrew it from their views (quorum shrinks)`, 'member', id);
  }

  transfer(from, to) {
    const s = this.nodes.get(from);
    if (!s?.node) return `${from} is not running`;
    try {
      s.node.transferLeadership(this.clockOf(s), to);
    } catch (e) {
      return `${e.code}: ${e.message}`;
    }
    this.emit(`${from} hands leadership to ${to}`, 'member', from);
    this.flush(s);
    return null;
  }

  /**
   * Makes `id`'s election timer fire now, as if its random timeout had been as short as possible:
   * its clock jumps to its deadline and the core handles the timeout (a pre-vote or an election).
   * Returns null, or why not.
   */
  timeoutNow(id) {
    const s = this.nodes.get(id);
    if (!s?.node) return `${id} is not running`;
    if (s.node.role === 'leader') return `${id} leads: it has no election timer`;
    const deadline = s.node.pollTimeout();
    if (deadline === undefined || deadline === null) return `${id} has no election timer armed`;
    const jump = Math.max(0, deadline - this.clockOf(s));
    s.skew += jump;
    this.emit(`${id}'s election timer fires now (${(jump / 1000).toFixed(1)} s early)`, 'fault', id);
    s.node.handleTimeout(this.clockOf(s));
    this.flush(s);
    return null;
  }

  /** Decodes a message in flight to `to` with the module's decoder (in authenticated mode the
   * cluster key and the receiver's id, which the tag covers). */
  decode(bytes, to) {
    if (!this.decodeFn) return { error: 'no decoder' };
    try {
      return this.decodeFn(bytes, this.auth ? new TextEncoder().encode(KEY) : undefined, to);
    } catch (e) {
      return { error: e.code ?? 'error', message: e.message };
    }
  }

  setDenyConfirm(id, on) {
    const s = this.nodes.get(id);
    s.denyConfirm = on;
    this.emit(on ? `${id}'s host will deny leadership when asked` : `${id}'s host confirms leadership again`, 'fault', id);
  }

  /** Authenticated mode: every node restarts (durable state kept) with the shared key. */
  setAuth(on) {
    this.auth = on;
    for (const s of this.nodes.values()) {
      if (s.node) {
        this.endTerm(s.id);
        s.node.free();
        s.node = null;
        this.start(s.id, true);
      }
    }
    this.emit(on ? 'authenticated mode: every node restarted with the shared key' : 'authentication off: nodes restarted without a key', 'fault');
  }

  setWrongKey(id, on) {
    const s = this.nodes.get(id);
    s.wrongKey = on;
    if (this.auth && s.node) {
      this.endTerm(id);
      s.node.free();
      s.node = null;
      this.start(id, true);
    }
    this.emit(on ? `${id} now has a wrong key: its messages fail the MAC check` : `${id} has the right key again`, 'fault', id);
  }

  partition(groups) {
    this.groups = new Map(Object.entries(groups));
    const by = {};
    for (const id of this.members()) (by[this.groupOf(id)] ??= []).push(id);
    this.emit(`partition: ${Object.values(by).map((g) => g.join(' ')).join(' | ')}`, 'fault');
  }

  heal() {
    this.groups = new Map();
    this.emit('partition healed', 'fault');
  }

  groupOf(id) {
    return this.groups.get(id) ?? 'A';
  }

  linkOf(from, to) {
    const o = this.links.get(`${from}>${to}`) ?? {};
    return { latency: o.latency ?? this.net.latency, loss: o.loss ?? this.net.loss };
  }

  // ----- outputs ------------------------------------------------------------------------------

  flush(s) {
    if (!s.node) return;
    // Outputs are acted on in order; a confirm answer produces more outputs, so loop until empty.
    for (;;) {
      const out = s.node.pollOutput();
      if (out === null) break;
      this.act(s, out);
      if (!s.node) return;
    }
    this.noteTimer(s);
    this.noteRole(s);
  }

  act(s, out) {
    if (out.type === 'send') {
      this.send(s, out.to, out.bytes);
    } else if (out.type === 'persist') {
      s.disk = { term: out.term, votedFor: out.votedFor };
    } else if (out.event === 'confirm_leader') {
      const grant = !s.denyConfirm;
      if (!grant) this.emit(`${s.id} won term ${out.term}; its host denied leadership`, 'deny', s.id);
      s.node.confirmLeader(this.clockOf(s), out.term, grant);
    } else if (out.event === 'became_leader') {
      this.emit(`${s.id} became leader of term ${out.term}`, 'leader', s.id);
      this.terms.push({ term: out.term, id: s.id, start: this.now, end: null });
    } else if (out.event === 'became_follower') {
      this.endTerm(s.id);
      this.emit(`${s.id} follows ${out.leader ?? 'nobody yet'} in term ${out.term}`, 'follower', s.id);
    } else if (out.event === 'peer_joined' || out.event === 'peer_left') {
      this.emit(`${s.id}: ${out.peer} ${out.event === 'peer_joined' ? 'entered' : 'left'} its view`, 'member', s.id);
    } else if (out.event === 'message') {
      this.emit(`${s.id} received ${out.payload.length} bytes from ${out.sender}`, 'info', s.id);
    }
  }

  endTerm(id) {
    for (const t of this.terms) if (t.id === id && t.end === null) t.end = this.now;
  }

  send(s, to, bytes) {
    let info;
    try {
      // As the receiver reads it, with the sender's key (its tag is made for `to`).
      info = this.decodeFn
        ? this.decodeFn(bytes, this.auth ? new TextEncoder().encode(s.wrongKey ? WRONG_KEY : KEY) : undefined, to)
        : s.node.decodeMessage(bytes);
    } catch {
      info = { kind: 'unknown', term: 0 };
    }
    const link = this.linkOf(s.id, to);
    const delay = Math.max(1, Math.round(link.latency + (this.random() * 2 - 1) * this.net.jitter));
    const lost = this.random() < link.loss;
    s.sent++;
    this.inFlight.push({
      seq: ++this.seq, from: s.id, to, bytes, kind: info.kind, term: info.term, granted: info.granted,
      sentAt: this.now, deliverAt: this.now + delay, lost, fate: lost ? 'lost' : 'flying',
    });
  }

  /** The node's next deadline on the simulation's clock, or null. */
  deadlineOf(s) {
    const t = s.node?.pollTimeout();
    return t === undefined || t === null ? null : t - s.skew;
  }

  noteTimer(s) {
    const t = this.deadlineOf(s);
    if (t !== s.timerDeadline) {
      s.timerDeadline = t;
      s.timerStart = this.now;
    }
  }

  noteRole(s) {
    s.lastRole = s.node.role;
    s.lastTerm = s.node.term;
  }

  // ----- the clock ----------------------------------------------------------------------------

  /** The instant of the next thing to happen, or Infinity. */
  nextEventAt() {
    let next = Infinity;
    for (const m of this.inFlight) if (m.fate === 'flying' || m.fate === 'lost') next = Math.min(next, m.deliverAt);
    for (const s of this.nodes.values()) {
      const t = this.deadlineOf(s);
      if (t !== null) next = Math.min(next, Math.max(t, this.now));
    }
    return next;
  }

  /** Processes everything due at `this.now`. */
  processDue() {
    const due = this.inFlight.filter((m) => m.deliverAt <= this.now && (m.fate === 'flying' || m.fate === 'lost'));
    due.sort((a, b) => a.deliverAt - b.deliverAt || a.seq - b.seq);
    for (const m of due) this.deliver(m);
    for (const s of this.nodes.values()) {
      const t = this.deadlineOf(s);
      if (t !== null && t <= this.now) {
        s.node.handleTimeout(this.clockOf(s));
        this.flush(s);
      }
    }
    // Keep finished messages a little while so the page can show them landing or being dropped.
    this.inFlight = this.inFlight.filter((m) => m.fate === 'flying' || m.fate === 'lost' || this.now - m.deliverAt < 400);
  }

  deliver(m) {
    if (m.fate === 'lost') {
      m.fate = 'lost-done';
      return;
    }
    const dst = this.nodes.get(m.to);
    if (this.groupOf(m.from) !== this.groupOf(m.to)) {
      m.fate = 'blocked';
      return;
    }
    if (!dst?.node) {
      m.fate = 'dropped';
      return;
    }
    m.fate = 'delivered';
    dst.received++;
    try {
      dst.node.handleMessage(this.clockOf(dst), m.from, m.bytes);
      if (m.kind === 'heartbeat') dst.lastHeartbeat = this.now;
    } catch (e) {
      m.fate = 'rejected';
      m.reason = e.code;
      dst.dropped++;
    }
    this.flush(dst);
  }

  /** Runs the simulation until `until` (ms), event by event. */
  advanceTo(until) {
    for (let guard = 0; guard < 1_000_000; guard++) {
      const next = Math.min(this.nextEventAt(), this.nextSnapshot);
      if (next > until) break;
      this.now = Math.max(this.now, next);
      this.processDue();
      if (this.now >= this.nextSnapshot) this.record();
    }
    this.now = Math.max(this.now, until);
    this.processDue();
  }

  /** Records the current view (with every node's inspect()) for the history slider. */
  record() {
    const v = this.view();
    v.terms = v.terms.map((t) => ({ ...t }));
    v.log = null; // the log is append-only: the page filters it by time
    v.inspect = Object.fromEntries(this.members().map((id) => [id, this.inspect(id)]));
    this.history.push(v);
    if (this.history.length > HISTORY_LEN) this.history.shift();
    this.nextSnapshot = (Math.floor(this.now / SNAPSHOT_MS) + 1) * SNAPSHOT_MS;
  }

  /** The latest snapshot taken at or before `t`, or null. */
  snapshotAt(t) {
    let found = null;
    for (const v of this.history) {
      if (v.now > t) break;
      found = v;
    }
    return found;
  }

  advance(ms) {
    this.advanceTo(this.now + ms);
  }

  /** Jumps to the next event and processes it (pause/step). */
  step() {
    const next = this.nextEventAt();
    if (next === Infinity) return;
    this.now = Math.max(this.now, next);
    this.processDue();
    if (this.now >= this.nextSnapshot) this.record();
  }

  // ----- what the page shows ------------------------------------------------------------------

  nodeView(s) {
    const n = s.node;
    const base = {
      id: s.id, crashed: !n, role: n ? n.role : 'crashed', term: n ? n.term : (s.disk?.term ?? 0),
      votedFor: n ? (n.votedFor ?? null) : null, leader: n ? (n.leader ?? null) : null,
      group: this.groupOf(s.id), denyConfirm: s.denyConfirm, wrongKey: this.auth && s.wrongKey,
      hbAgo: s.lastHeartbeat === null ? null : this.now - s.lastHeartbeat, timer: null,
      timerLabel: null, sent: s.sent, received: s.received, dropped: s.dropped, votes: null,
    };
    if (n && n.role === 'candidate') {
      // The tally of the campaign in progress, as the core counts it (self included).
      const i = n.inspect();
      base.votes = { count: i.votesCount, needed: i.quorum, from: i.votesGranted };
    }
    if (n && s.timerDeadline !== null) {
      const span = Math.max(1, s.timerDeadline - s.timerStart);
      base.timer = Math.min(1, Math.max(0, (this.now - s.timerStart) / span));
      base.timerLabel = n.role === 'leader' ? 'next heartbeat' : 'election timer';
    }
    return base;
  }

  view() {
    return {
      now: this.now,
      nodes: [...this.nodes.values()].map((s) => this.nodeView(s)),
      messages: this.inFlight.map((m) => ({
        ...m, progress: Math.min(1, Math.max(0, (this.now - m.sentAt) / Math.max(1, m.deliverAt - m.sentAt))),
        age: this.now - m.deliverAt,
      })),
      terms: this.terms,
      log: this.log,
    };
  }

  inspect(id) {
    const s = this.nodes.get(id);
    if (!s) return null;
    if (!s.node) return { id, crashed: true, durableStateOnDisk: s.disk };
    return s.node.inspect();
  }

  /** Leaders among running nodes. */
  leaders() {
    return this.alive().filter((s) => s.node.isLeader).map((s) => s.id);
  }
}
