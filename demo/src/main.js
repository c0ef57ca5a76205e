// The page: loads the wasm module, builds the cluster (one page) or one node (multi-tab), renders
// the live view and wires the controls. `window.tenureDemo` is the hook tests and talks use.
import init, { Node, version, decodeMessage } from '../pkg/tenure_wasm.js';
import { Cluster, SNAPSHOT_MS } from './sim.js';
import { TabNode } from './tabs.js';
import { render, renderLegend, positions, nodeRadius, shownView, stageOrder, focusNode } from './view.js';
import { Tour } from './tour.js';

const params = new URLSearchParams(location.search);
const mode = params.get('mode') === 'tabs' ? 'tabs' : 'sim';
const $ = (id) => document.getElementById(id);

const state = {
  source: null, // a Cluster or a TabNode: both expose view(), inspect(id) and the actions
  selected: null,
  paused: params.get('paused') === '1',
  speed: clampSpeed(Number(params.get('speed') ?? 1)),
  lastFrame: null,
  slowAt: 0,
  /** A recorded snapshot shown instead of the present (history slider), or null. */
  replay: null,
  /** The message whose decoded contents are shown: {seq, from, to, kind, bytes, decoded, ...}. */
  message: null,
};

function clampSpeed(s) {
  return Number.isFinite(s) ? Math.min(10, Math.max(0.1, s)) : 1;
}

function setSpeed(s) {
  state.speed = clampSpeed(s);
  $('speed').value = String(Math.log10(state.speed));
  $('speed-label').textContent = `${state.speed.toFixed(state.speed < 1 ? 2 : 1)}×`;
}

function setPaused(p) {
  if (!p) goLive();
  state.paused = p;
  $('pause').textContent = p ? 'Resume' : 'Pause';
  $('pause').classList.toggle('on', p);
  $('step').disabled = !p;
}

function newCluster(size) {
  if (state.source && state.source.destroy) state.source.destroy();
  const seed = Number(params.get('seed') ?? Math.floor(Math.random() * 2 ** 31));
  state.source = new Cluster(Node, { size, seed, decode: decodeMessage, history: true });
  state.selected = state.source.members()[0];
  state.message = null;
  goLive();
  refresh(true);
}

// ----- the history slider: scrubbing back shows recorded snapshots -------------------------------

function syncScrub() {
  const h = state.source?.history;
  if (!h || !h.length) return;
  const s = $('scrub');
  const min = String(h[0].now - (h[0].now % SNAPSHOT_MS));
  const max = String(Math.ceil(h[h.length - 1].now / SNAPSHOT_MS) * SNAPSHOT_MS);
  if (s.min !== min) s.min = min;
  if (s.max !== max) s.max = max;
  if (!state.replay && s.value !== max) s.value = max;
  const text = state.replay ? `${(state.replay.now / 1000).toFixed(1)} s (past)` : 'live';
  if ($('scrub-label').textContent !== text) {
    $('scrub-label').textContent = text;
    s.setAttribute('aria-valuetext', text);
  }
  $('live').disabled = !state.replay;
  document.body.classList.toggle('replaying', !!state.replay);
}

/** Shows the simulation as it was at `t` (ms); at or past the newest snapshot: live. */
function showAt(t) {
  const h = state.source.history;
  if (!h.length || t >= h[h.length - 1].now) return goLive();
  setPaused(true);
  state.replay = state.source.snapshotAt(t) ?? h[0];
  refresh(true);
}

function goLive() {
  if (!state.replay) return;
  state.replay = null;
  refresh(true);
}

// ----- messages in flight: select one to see it decoded ------------------------------------------

function pickMessage(seq) {
  const m = shownView(state).messages.find((x) => String(x.seq) === String(seq));
  if (!m) return;
  state.message = { ...m, decoded: state.source.decode(m.bytes, m.to) };
  refresh(true);
}

/** Selects the next message still in flight (keyboard: m). */
function nextMessage() {
  const flying = shownView(state).messages.filter((m) => m.fate === 'flying' || m.fate === 'blocked');
  if (!flying.length) return;
  const i = flying.findIndex((m) => m.seq === state.message?.seq);
  pickMessage(flying[(i + 1) % flying.length].seq);
}

/** Renders now (the animation frame also calls this). `full` also rebuilds the slow parts. */
function refresh(full = false) {
  render(state, full);
  if (full && mode === 'sim') syncScrub();
  if (mode === 'tabs' && state.source) {
    const me = state.source.selfView();
    Object.assign(document.body.dataset, { selfId: me.id, selfRole: me.role, selfTerm: String(me.term), selfLeader: me.leader ?? '' });
  }
}

function frame(t) {
  if (state.lastFrame !== null && !state.paused && mode === 'sim') {
    // Never jump more than 100 ms of real time at once (a backgrounded tab would otherwise
    // replay minutes of simulated time in one frame).
    const dt = Math.min(100, t - state.lastFrame);
    state.source.advance(dt * state.speed);
  }
  state.lastFrame = t;
  const full = t - state.slowAt > 100;
  if (full) state.slowAt = t;
  refresh(full);
  requestAnimationFrame(frame);
}

function selectedId() {
  const ids = state.source.view().nodes.map((n) => n.id);
  return ids.includes(state.selected) ? state.selected : null;
}

function wire() {
  const act = (fn) => () => {
    const id = selectedId();
    if (id) fn(id);
    refresh(true);
  };
  const select = (id) => {
    state.selected = id;
    refresh(true);
  };
  const pick = (e) => {
    const el = e.target.closest('[data-id]');
    if (el) select(el.dataset.id);
  };
  $('stage').addEventListener('pointerdown', (e) => {
    const msg = e.target.closest('.msg[data-seq]');
    if (msg && msg.dataset.seq) {
      pickMessage(msg.dataset.seq);
      return;
    }
    // Look the node up before selecting it: selecting re-renders the shape under the pointer.
    const el = e.target.closest('[data-id]');
    pick(e);
    if (el && mode === 'sim' && !state.replay) state.drag = { id: el.dataset.id, sx: e.clientX, sy: e.clientY, active: false };
  });
  // Keyboard: nodes (SVG and table rows) are focusable; Enter or Space selects, arrows move.
  const nodeKeys = (e) => {
    const el = e.target.closest('[data-id]');
    if (!el) return;
    const ids = stageOrder();
    const i = ids.indexOf(el.dataset.id);
    let to = null;
    if (e.key === 'Enter' || e.key === ' ') to = el.dataset.id;
    else if (e.key === 'ArrowRight' || e.key === 'ArrowDown') to = ids[(i + 1) % ids.length];
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') to = ids[(i - 1 + ids.length) % ids.length];
    if (to === null) return;
    e.preventDefault();
    e.stopPropagation();
    select(to);
    if (to !== el.dataset.id) {
      if (el.tagName === 'TR') el.parentElement.querySelector(`tr[data-id="${CSS.escape(to)}"]`)?.focus();
      else focusNode(to);
    }
  };
  $('stage').addEventListener('keydown', nodeKeys);
  $('nodes').addEventListener('keydown', nodeKeys);
  // The skip link after the ring lands on the selected node's first enabled action.
  $('to-node-actions').addEventListener('click', (e) => {
    e.preventDefault();
    const first = [...$('node-controls').querySelectorAll('button, select, input')].find((c) => !c.disabled);
    first?.focus();
    first?.scrollIntoView({ block: 'nearest' });
  });
  // Crossing the narrow width redraws everything at once (nodes, messages and the timeline are
  // drawn at another scale there), even while paused.
  matchMedia('(max-width: 700px)').addEventListener('change', () => refresh(true));
  // "How it works" at the top of the controls opens the explainer and brings it into view.
  $('how-link').addEventListener('click', (e) => {
    e.preventDefault();
    $('explainer').open = true;
    $('explainer').scrollIntoView({ block: 'start' });
    $('explainer').querySelector('summary').focus({ preventScroll: true });
  });
  // Dragging a node partitions: drop it on another node to join that node's group, or on empty
  // space to cut it off into a group of its own.
  const svgPoint = (e) => {
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform($('stage').getScreenCTM().inverse());
    return { x: p.x, y: p.y };
  };
  const dropTarget = (dragged, p) => {
    const nodes = state.source.view().nodes;
    const pos = positions(nodes);
    for (const [id, q] of pos) if (id !== dragged && Math.hypot(q.x - p.x, q.y - p.y) <= nodeRadius(nodes.length) + 6) return id;
    return null;
  };
  addEventListener('pointermove', (e) => {
    const d = state.drag;
    if (!d) return;
    if (!d.active && Math.hypot(e.clientX - d.sx, e.clientY - d.sy) < 12) return;
    d.active = true;
    Object.assign(d, svgPoint(e));
    d.target = dropTarget(d.id, d);
    refresh();
  });
  addEventListener('pointerup', (e) => {
    const d = state.drag;
    state.drag = null;
    if (!d?.active) return;
    const target = dropTarget(d.id, svgPoint(e));
    const ids = state.source.members();
    const groups = Object.fromEntries(ids.map((m) => [m, state.source.groupOf(m)]));
    if (target) groups[d.id] = groups[target];
    else {
      const others = new Set(ids.filter((m) => m !== d.id).map((m) => groups[m]));
      if (others.has(groups[d.id])) groups[d.id] = ['A', 'B', 'C'].find((g) => !others.has(g)) ?? 'C';
    }
    state.source.partition(groups);
    refresh(true);
  });
  $('nodes').addEventListener('pointerdown', pick);
  $('pause').addEventListener('click', () => setPaused(!state.paused));
  $('step').addEventListener('click', () => {
    goLive();
    state.source.step();
    refresh(true);
  });
  $('scrub').addEventListener('input', () => showAt(Number($('scrub').value)));
  $('live').addEventListener('click', goLive);
  $('message-close').addEventListener('click', () => {
    state.message = null;
    refresh(true);
  });
  $('speed').addEventListener('input', () => setSpeed(10 ** Number($('speed').value)));
  const size = $('size');
  for (let n = 3; n <= 9; n++) size.add(new Option(String(n), String(n), n === 5, n === 5));
  $('reset').addEventListener('click', () => newCluster(Number(size.value)));
  size.addEventListener('change', () => newCluster(Number(size.value)));
  $('join').addEventListener('click', () => {
    state.selected = state.source.join() ?? state.selected;
    refresh(true);
  });
  const crashLeader = () => {
    const l = state.source.leaders()[0];
    if (l) {
      state.source.crash(l);
      state.selected = l;
    }
    refresh(true);
  };
  $('crash-leader').addEventListener('click', crashLeader);
  $('restart-all').addEventListener('click', () => {
    for (const n of state.source.view().nodes) if (n.crashed) state.source.restart(n.id, true);
    refresh(true);
  });
  $('open-tab').addEventListener('click', () => {
    const u = new URL(location.href);
    u.searchParams.delete('id');
    window.open(u.href, '_blank', 'noopener'); // noopener: the new tab must not inherit this tab's sessionStorage (its id)
  });
  addEventListener('keydown', (e) => {
    if (mode !== 'sim' || e.target.closest('input, select, textarea') || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === 'm') nextMessage();
    if (state.replay) return; // the past is read-only
    if (e.key === ' ') {
      if (e.target.closest('button, a, summary, [data-id], [tabindex]')) return; // Space activates the focused control
      e.preventDefault();
      setPaused(!state.paused);
    } else if (e.key === 's' && state.paused) {
      state.source.step();
      refresh(true);
    } else if (e.key === 'c') crashLeader();
    else if (e.key === 'h') {
      state.source.heal();
      refresh(true);
    }
  });
  $('auth').addEventListener('change', () => {
    state.source.setAuth($('auth').checked);
    refresh(true);
  });
  $('crash').addEventListener('click', act((id) => state.source.crash(id)));
  $('timeout-now').addEventListener('click', act((id) => {
    const err = state.source.timeoutNow(id);
    if (err) state.source.emit(`time out now refused: ${err}`, 'fault', id);
  }));
  $('restart-durable').addEventListener('click', act((id) => state.source.restart(id, true)));
  $('restart-wiped').addEventListener('click', act((id) => state.source.restart(id, false)));
  $('leave').addEventListener('click', act((id) => state.source.leave(id)));
  $('transfer').addEventListener('click', act((id) => {
    const to = $('transfer-to').value;
    const err = to ? state.source.transfer(id, to) : 'pick a target';
    if (err) state.source.emit(`transfer refused: ${err}`, 'fault', id);
  }));
  $('deny').addEventListener('change', act((id) => state.source.setDenyConfirm(id, $('deny').checked)));
  $('wrong-key').addEventListener('change', act((id) => state.source.setWrongKey(id, $('wrong-key').checked)));
  const slider = (input, label, apply, fmt) => {
    const update = () => {
      const v = Number($(input).value);
      $(label).textContent = fmt(v);
      apply(v);
    };
    $(input).addEventListener('input', update);
  };
  slider('latency', 'latency-label', (v) => (state.source.net.latency = v), (v) => `${v} ms`);
  slider('loss', 'loss-label', (v) => (state.source.net.loss = v / 100), (v) => `${v} %`);
  const linkKey = () => `${$('link-from').value}>${$('link-to').value}`;
  const linkApply = () => {
    const lat = Number($('link-latency').value);
    const loss = Number($('link-loss').value);
    $('link-latency-label').textContent = lat > 0 ? `${lat} ms` : 'global';
    $('link-loss-label').textContent = loss >= 0 ? `${loss} %` : 'global';
    const o = {};
    if (lat > 0) o.latency = lat;
    if (loss >= 0) o.loss = loss / 100;
    if (Object.keys(o).length) state.source.links.set(linkKey(), o);
    else state.source.links.delete(linkKey());
  };
  const linkShow = () => {
    const o = state.source.links.get(linkKey()) ?? {};
    $('link-latency').value = String(o.latency ?? 0);
    $('link-loss').value = String(o.loss === undefined ? -1 : Math.round(o.loss * 100));
    $('link-latency-label').textContent = o.latency ? `${o.latency} ms` : 'global';
    $('link-loss-label').textContent = o.loss !== undefined ? `${Math.round(o.loss * 100)} %` : 'global';
  };
  $('link-latency').addEventListener('input', linkApply);
  $('link-loss').addEventListener('input', linkApply);
  $('link-from').addEventListener('change', linkShow);
  $('link-to').addEventListener('change', linkShow);
  $('groups').addEventListener('click', (e) => {
    const b = e.target.closest('[data-part]');
    if (!b) return;
    const [id, g] = b.dataset.part.split(':');
    const groups = Object.fromEntries(state.source.members().map((m) => [m, state.source.groupOf(m)]));
    groups[id] = g;
    state.source.partition(groups);
    refresh(true);
  });
  const split = () => {
    const ids = state.source.members();
    const leader = state.source.leaders()[0] ?? ids[0];
    const other = ids.find((i) => i !== leader);
    state.source.partition(Object.fromEntries(ids.map((i) => [i, i === leader || i === other ? 'B' : 'A'])));
    refresh(true);
  };
  $('split').addEventListener('click', split);
  $('heal').addEventListener('click', () => {
    state.source.heal();
    refresh(true);
  });
  const selectRole = (role) => {
    const n = state.source.view().nodes.find((x) => x.role === role);
    if (n) select(n.id);
    return n?.id ?? null;
  };
  return new Tour({
    crashLeader: () => {
      goLive();
      crashLeader();
    },
    split: () => {
      goLive();
      split();
    },
    selectFollower: () => selectRole('follower'),
    timeoutNow: () => $('timeout-now').click(),
    selectLeader: () => selectRole('leader'),
    transfer: () => $('transfer').click(),
    rewind: (ms) => showAt(state.source.now - ms),
    pickMessage: nextMessage,
  });
}

async function main() {
  document.body.classList.add(mode);
  $(mode === 'tabs' ? 'mode-tabs' : 'mode-sim').setAttribute('aria-current', 'page');
  await init({ module_or_path: new URL('../pkg/tenure_wasm_bg.wasm', import.meta.url) });
  renderLegend();
  // On a narrow screen the explainer starts folded, so the controls stay near the cluster.
  if (matchMedia('(max-width: 1000px)').matches) $('explainer').open = false;
  const tour = wire();
  setSpeed(state.speed);
  if (mode === 'sim') {
    setPaused(state.paused);
    const size = Math.min(9, Math.max(3, Number(params.get('n') ?? 5)));
    $('size').value = String(size);
    newCluster(size);
  } else {
    setPaused(false);
    $('pause').disabled = true;
    $('timeline-unit').textContent = '(seconds since this tab opened)';
    $('speed').disabled = true; // every tab must run at the same rate: set it with ?speed= in the address
    const tab = new TabNode(Node, {
      cluster: params.get('cluster') ?? 'tabs',
      id: params.get('id') ?? undefined,
      speed: state.speed,
      onChange: () => refresh(true),
      decode: decodeMessage,
    });
    state.source = tab;
    state.selected = tab.id;
    document.title = `${tab.id} — tenure multi-tab`;
  }
  window.tenureDemo = {
    version: version(),
    mode,
    get source() {
      return state.source;
    },
    /** Runs the simulated clock `ms` ahead at once (sim mode) and re-renders. */
    advance(ms) {
      state.source.advance(ms);
      refresh(true);
      return state.source.now;
    },
    pause() {
      setPaused(true);
    },
    resume() {
      setPaused(false);
    },
    setSpeed,
    select(id) {
      state.selected = id;
      refresh(true);
    },
    /** Shows the recorded snapshot at `ms` (the history slider), or live when at the end. */
    showAt,
    goLive,
    pickMessage,
    tour,
    get replay() {
      return state.replay;
    },
    get message() {
      return state.message;
    },
    render: () => refresh(true),
  };
  refresh(true);
  document.body.dataset.ready = '1';
  requestAnimationFrame(frame);
}

main().catch((e) => {
  document.body.dataset.ready = 'error';
  $('summary').textContent = `failed to start: ${e.message}`;
  throw e;
});
