// Multi-tab mode: this tab runs ONE node; the tabs of one browser talk over a BroadcastChannel.
// Protocol bytes travel exactly as they would over UDP (every tab sees every message, so every
// tab can animate the whole cluster, but only the addressee feeds it to its node). Tabs find each
// other with `hello`, and share a small status line so that every tab can draw every node.
import { TIMING, CLUSTER_ID } from './sim.js';

const STATUS_MS = 250;
const GONE_AFTER_MS = 2500;
const HELLO_MS = 1500;

function randomId() {
  const letters = 'abcdefghijkmnpqrstuvwxyz';
  let s = '';
  for (let i = 0; i < 3; i++) s += letters[Math.floor(Math.random() * letters.length)];
  return `tab-${s}`;
}

export class TabNode {
  constructor(Node, { cluster = 'tabs', id, speed = 1, onChange = () => {}, decode = null }) {
    this.Node = Node;
    this.decodeFn = decode;
    this.skew = 0; // how far "time out now" moved this node's clock ahead (see Cluster.clockOf)
    this.seq = 0;
    this.id = id ?? sessionStorage.getItem('tenure-tab-id') ?? randomId();
    sessionStorage.setItem('tenure-tab-id', this.id);
    this.speed = speed;
    this.onChange = onChange;
    this.t0 = performance.now();
    this.wall0 = Date.now();
    this.auth = false;
    this.net = { latency: 150, jitter: 50, loss: 0 };
    this.links = new Map();
    this.peers = new Map(); // id -> last status
    this.inFlight = [];
    this.log = [];
    this.terms = [];
    this.denyConfirm = false;
    this.node = null;
    this.disk = JSON.parse(sessionStorage.getItem(`tenure-disk-${cluster}`) ?? 'null');
    this.diskKey = `tenure-disk-${cluster}`;
    this.lastHeartbeat = null;
    this.timerStart = 0;
    this.timerDeadline = null;
    this.timer = null;
    this.channel = new BroadcastChannel(`tenure-demo-${cluster}`);
    this.channel.onmessage = (e) => this.receive(e.data);
    this.startNode(true);
    this.post({ t: 'hello', id: this.id });
    this.intervals = [
      setInterval(() => this.postStatus(), STATUS_MS),
      setInterval(() => this.post({ t: 'hello', id: this.id }), HELLO_MS),
    ];
    addEventListener('pagehide', () => this.post({ t: 'bye', id: this.id }));
    this.emit(`this tab is node ${this.id}; open more tabs with the same address to add nodes`, 'member', this.id);
  }

  /** This node's clock: ms since the tab opened, times the speed factor. */
  get now() {
    return Math.floor((performance.now() - this.t0) * this.speed) + this.skew;
  }

  wallAt() {
    return Date.now() - this.wall0;
  }

  post(msg) {
    this.channel.postMessage(msg);
  }

  emit(text, kind = 'info', id = this.id, share = true) {
    const entry = { at: this.wallAt(), text, kind, id };
    this.log.push(entry);
    if (this.log.length > 500) this.log.shift();
    if (share) this.post({ t: 'log', wall: Date.now(), text, kind, id });
  }

  members() {
    return [this.id, ...[...this.peers.values()].filter((p) => p.role !== 'gone').map((p) => p.id)].sort();
  }

  canControl(id) {
    return id === this.id;
  }

  groupOf() {
    return 'A';
  }

  leaders() {
    return this.view().nodes.filter((n) => n.role === 'leader').map((n) => n.id);
  }

  // ----- the node -----------------------------------------------------------------------------

  startNode(keepDisk) {
    if (!keepDisk) {
      this.disk = null;
      sessionStorage.removeItem(this.diskKey);
    }
    this.node = new this.Node(
      { id: this.id, cluster: CLUSTER_ID, bootstrap: this.members(), ...TIMING, durable: true },
      { now: this.now, restored: this.disk },
    );
    this.lastHeartbeat = null;
    this.schedule();
  }

  flush() {
    if (!this.node) return;
    for (;;) {
      const out = this.node.pollOutput();
      if (out === null) break;
      if (out.type === 'send') this.send(out.to, out.bytes);
      else if (out.type === 'persist') {
        this.disk = { term: out.term, votedFor: out.votedFor };
        sessionStorage.setItem(this.diskKey, JSON.stringify(this.disk));
      } else if (out.event === 'confirm_leader') {
        if (this.denyConfirm) this.emit(`${this.id} won term ${out.term}; its host denied leadership`, 'deny');
        this.node.confirmLeader(this.now, out.term, !this.denyConfirm);
      } else if (out.event === 'became_leader') {
        this.emit(`${this.id} became leader of term ${out.term}`, 'leader');
        this.startTerm(this.id, out.term, this.wallAt());
        this.post({ t: 'lead', id: this.id, term: out.term, wall: Date.now() });
      } else if (out.event === 'became_follower') {
        this.endTerm(this.id, this.wallAt());
        this.post({ t: 'unlead', id: this.id, wall: Date.now() });
        this.emit(`${this.id} follows ${out.leader ?? 'nobody yet'} in term ${out.term}`, 'follower');
      } else if (out.event === 'peer_joined' || out.event === 'peer_left') {
        this.emit(`${this.id}: ${out.peer} ${out.event === 'peer_joined' ? 'entered' : 'left'} its view`, 'member', this.id, false);
      }
    }
    this.schedule();
    this.postStatus();
    this.onChange();
  }

  schedule() {
    clearTimeout(this.timer);
    const t = this.node?.pollTimeout();
    if (t !== this.timerDeadline) {
      this.timerDeadline = t ?? null;
      this.timerStart = this.now;
    }
    if (t === undefined) return;
    const delay = Math.max(0, (t - this.now) / this.speed);
    this.timer = setTimeout(() => {
      if (!this.node) return;
      this.node.handleTimeout(this.now);
      this.flush();
    }, delay + 1);
  }

  send(to, bytes) {
    let info;
    try {
      info = this.node.decodeMessage(bytes);
    } catch {
      info = { kind: 'unknown', term: 0 };
    }
    const delay = Math.max(1, this.net.latency + (Math.random() * 2 - 1) * this.net.jitter);
    const msg = {
      t: 'msg', seq: `${this.id}-${++this.seq}`, from: this.id, to, bytes, kind: info.kind, term: info.term, granted: info.granted,
      sentWall: Date.now(), delayReal: delay / this.speed, lost: Math.random() < this.net.loss,
    };
    this.track(msg);
    this.post(msg);
  }

  track(msg) {
    this.inFlight.push(msg);
    if (this.inFlight.length > 300) this.inFlight.shift();
  }

  receive(m) {
    if (m.t === 'hello') {
      this.sawPeer(m.id);
      if (!m.reply) this.post({ t: 'hello', id: this.id, reply: true });
    } else if (m.t === 'msg') {
      this.sawPeer(m.from);
      this.track(m);
      if (m.to === this.id && !m.lost) {
        setTimeout(() => this.deliver(m), m.delayReal);
      }
    } else if (m.t === 'status') {
      const known = this.peers.has(m.id) && this.peers.get(m.id).role !== 'gone';
      this.peers.set(m.id, { ...m, seenAt: performance.now() });
      if (!known) this.sawPeer(m.id);
    } else if (m.t === 'bye') {
      const p = this.peers.get(m.id);
      if (p) p.role = 'gone';
      this.endTerm(m.id, Date.now() - this.wall0);
      this.emit(`${m.id}'s tab was closed`, 'fault', m.id, false);
    } else if (m.t === 'log') {
      this.log.push({ at: m.wall - this.wall0, text: m.text, kind: m.kind, id: m.id });
      if (this.log.length > 500) this.log.shift();
    } else if (m.t === 'lead') {
      this.startTerm(m.id, m.term, m.wall - this.wall0);
    } else if (m.t === 'unlead') {
      this.endTerm(m.id, m.wall - this.wall0);
    } else if (m.t === 'leave') {
      if (m.id !== this.id && this.node) {
        try {
          this.node.leave(this.now, m.id);
        } catch {
          // not in the view
        }
        this.peers.delete(m.id);
        this.flush();
      }
    }
  }

  sawPeer(id) {
    if (id === this.id) return;
    if (!this.peers.has(id)) this.peers.set(id, { id, role: 'follower', term: 0, seenAt: performance.now() });
    if (this.node && !this.node.view.includes(id)) {
      this.node.join(this.now, id);
      this.flush();
    }
  }

  deliver(m) {
    if (!this.node) return;
    try {
      this.node.handleMessage(this.now, m.from, m.bytes);
      if (m.kind === 'heartbeat') this.lastHeartbeat = this.now;
    } catch {
      // dropped and counted by the node (see inspect().droppedByReason)
    }
    this.flush();
  }

  startTerm(id, term, at) {
    if (!this.terms.some((t) => t.id === id && t.term === term)) this.terms.push({ term, id, start: at, end: null });
  }

  endTerm(id, at) {
    for (const t of this.terms) if (t.id === id && t.end === null) t.end = at;
  }

  postStatus() {
    this.post({ t: 'status', ...this.selfView() });
  }

  // ----- actions (this tab's own node only) ---------------------------------------------------

  crash(id) {
    if (id !== this.id || !this.node) return;
    clearTimeout(this.timer);
    this.node.free();
    this.node = null;
    this.timerDeadline = null;
    this.endTerm(this.id, this.wallAt());
    this.post({ t: 'unlead', id: this.id, wall: Date.now() });
    this.emit(`${this.id} crashed`, 'fault');
    this.postStatus();
  }

  restart(id, durable) {
    if (id !== this.id || this.node) return;
    this.startNode(durable);
    this.emit(`${this.id} restarted${durable ? ` with its durable state (term ${this.disk?.term ?? 0})` : ' with its disk wiped'}`, 'fault');
    this.flush();
  }

  leave(id) {
    if (id !== this.id) return;
    this.post({ t: 'leave', id: this.id });
    this.crash(id);
    this.emit(`${this.id} left the cluster: the other tabs withdrew it from their views`, 'member');
  }

  transfer(from, to) {
    if (from !== this.id || !this.node) return 'only this tab\'s node can be controlled here';
    try {
      this.node.transferLeadership(this.now, to);
    } catch (e) {
      return `${e.code}: ${e.message}`;
    }
    this.emit(`${this.id} hands leadership to ${to}`, 'member');
    this.flush();
    return null;
  }

  /** Fires this tab's election timer now (see Cluster.timeoutNow). Returns null, or why not. */
  timeoutNow(id) {
    if (id !== this.id || !this.node) return 'only this tab\'s running node can time out here';
    if (this.node.role === 'leader') return `${id} leads: it has no election timer`;
    const deadline = this.node.pollTimeout();
    if (deadline === undefined || deadline === null) return `${id} has no election timer armed`;
    const jump = Math.max(0, deadline - this.now);
    this.skew += jump;
    this.emit(`${id}'s election timer fires now (${(jump / 1000).toFixed(1)} s early)`, 'fault');
    this.node.handleTimeout(this.now);
    this.flush();
    return null;
  }

  decode(bytes) {
    try {
      return this.decodeFn ? this.decodeFn(bytes) : { error: 'no decoder' };
    } catch (e) {
      return { error: e.code ?? 'error', message: e.message };
    }
  }

  setDenyConfirm(id, on) {
    if (id !== this.id) return;
    this.denyConfirm = on;
    this.emit(on ? `${this.id}'s host will deny leadership when asked` : `${this.id}'s host confirms leadership again`, 'fault');
  }

  setWrongKey() {}
  setAuth() {}
  join() {
    return null;
  }
  partition() {}
  heal() {}
  step() {}
  advance() {}

  destroy() {
    for (const i of this.intervals) clearInterval(i);
    clearTimeout(this.timer);
    this.channel.close();
  }

  // ----- what the page shows ------------------------------------------------------------------

  selfView() {
    const n = this.node;
    const now = this.now;
    const v = {
      id: this.id, self: true, crashed: !n, role: n ? n.role : 'crashed', term: n ? n.term : (this.disk?.term ?? 0),
      votedFor: n ? (n.votedFor ?? null) : null, leader: n ? (n.leader ?? null) : null, group: 'A',
      denyConfirm: this.denyConfirm, wrongKey: false, hbAgo: this.lastHeartbeat === null ? null : now - this.lastHeartbeat,
      timer: null, timerLabel: null, dropped: 0,
    };
    if (n && this.timerDeadline !== null) {
      const span = Math.max(1, this.timerDeadline - this.timerStart);
      v.timer = Math.min(1, Math.max(0, (now - this.timerStart) / span));
      v.timerLabel = n.role === 'leader' ? 'next heartbeat' : 'election timer';
    }
    if (n) {
      const i = n.inspect();
      v.dropped = Object.values(i.droppedByReason).reduce((a, b) => a + b, 0);
      if (n.role === 'candidate') v.votes = { count: i.votesCount, needed: i.quorum, from: i.votesGranted };
    }
    return v;
  }

  view() {
    const nowWall = Date.now();
    const nodes = [this.selfView()];
    for (const p of this.peers.values()) {
      const stale = performance.now() - p.seenAt > GONE_AFTER_MS;
      nodes.push({ ...p, self: false, role: stale ? 'gone' : p.role, crashed: p.crashed || stale || p.role === 'gone', timer: stale ? null : p.timer ?? null });
    }
    nodes.sort((a, b) => (a.id < b.id ? -1 : 1));
    this.inFlight = this.inFlight.filter((m) => nowWall - m.sentWall < m.delayReal + 400);
    const messages = this.inFlight.map((m) => {
      const progress = Math.min(1, (nowWall - m.sentWall) / Math.max(1, m.delayReal));
      let fate = m.lost ? 'lost' : progress >= 1 ? 'delivered' : 'flying';
      if (!m.lost && progress >= 1 && nodes.find((n) => n.id === m.to)?.crashed) fate = 'dropped';
      return { ...m, progress, fate };
    });
    const at = this.wallAt();
    return {
      now: at,
      clock: `node clock ${(this.now / 1000).toFixed(1)} s (×${this.speed})`,
      clockLabel: `this tab is ${this.id} · real time ×${this.speed}`,
      nodes,
      messages,
      terms: this.terms,
      log: this.log,
    };
  }

  inspect(id) {
    if (id !== this.id) {
      const p = this.peers.get(id);
      return p ? { note: `${id} runs in another tab; open that tab for its full inspect()`, lastStatus: p } : null;
    }
    return this.node ? this.node.inspect() : { id: this.id, crashed: true, durableStateOnDisk: this.disk };
  }
}
