// The SVG stage (nodes, links, messages in flight) and the leaders-by-term timeline. Node elements
// persist between frames (only their content changes), so keyboard focus stays on a node while the
// animation runs.

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
export const W = 720;
const CX = 360;
const CY = 270;
export const NODE_R = 38;

export const KIND = {
  pre_vote: { color: 'var(--pre_vote)', letter: 'P', label: 'pre-vote' },
  pre_vote_reply: { color: 'var(--pre_vote)', letter: 'P', reply: true, label: 'pre-vote reply' },
  vote: { color: 'var(--vote)', letter: 'V', label: 'vote request' },
  vote_reply: { color: 'var(--vote)', letter: 'V', reply: true, label: 'vote reply' },
  heartbeat: { color: 'var(--heartbeat)', letter: 'H', label: 'heartbeat' },
  heartbeat_ack: { color: 'var(--ack)', letter: 'A', label: 'ack' },
  timeout_now: { color: 'var(--timeout_now)', letter: 'T', label: 'timeout-now' },
  app: { color: 'var(--app)', letter: 'M', label: 'app message' },
  unknown: { color: '#fff', letter: '?', label: 'undecodable' },
};

export const ROLE_LABEL = {
  leader: 'LEADER', follower: 'FOLLOWER', candidate: 'CANDIDATE', unclustered: 'UNCLUSTERED', crashed: 'CRASHED', gone: 'CLOSED',
};

export const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/** Replaces an element's content only when it changed (a paused page keeps stable elements). */
export function setHtml(el, html) {
  if (el._html !== html) {
    el._html = html;
    el.innerHTML = html;
  }
}

/** Sets an attribute only when it changed (every set is a DOM mutation, even to the same value). */
export function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

export const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Ring radius and node scale by cluster size: with 7–9 nodes they shrink so labels never touch. */
function layout(count) {
  if (count >= 8) return { r: 205, k: 0.8 };
  if (count === 7) return { r: 200, k: 0.9 };
  return { r: 185, k: 1 };
}

export function positions(nodes) {
  const { r } = layout(nodes.length);
  const pos = new Map();
  nodes.forEach((n, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / nodes.length;
    pos.set(n.id, { x: CX + r * Math.cos(a), y: CY + r * Math.sin(a) });
  });
  return pos;
}

/** How much larger nodes are drawn on a narrow screen, where the stage itself is drawn at about
 * two thirds of its size: without it their labels would be 8 px tall. */
const NARROW_GROW = 1.4;

/** The scale of a node's drawing: the layout's, grown on a narrow screen. */
function nodeScale(count) {
  return layout(count).k * (narrow.matches ? NARROW_GROW : 1);
}

/** The radius (in stage units) within which a point is on a node. */
export function nodeRadius(count) {
  return NODE_R * nodeScale(count);
}

/** Font size for a node id so that it fits inside the circle (tab ids are 7 characters). */
function idFontSize(id) {
  return Math.min(17, Math.floor((2 * NODE_R - 14) / (0.8 * id.length)));
}

function nodeInner(n, selected, many) {
  const role = n.role;
  const circ = 2 * Math.PI * 45;
  const timer = n.timer === null ? 0 : n.timer;
  const sub = [];
  if (n.votedFor) sub.push(`voted ${n.votedFor}`);
  if (n.hbAgo !== null && role !== 'leader' && !n.crashed) sub.push(`hb ${secs(n.hbAgo)} ago`);
  const flags = [];
  if (n.denyConfirm) flags.push('denies leadership');
  if (n.wrongKey) flags.push('WRONG KEY');
  const group = n.group && n.group !== 'A' ? n.group : null;
  // With many nodes each fact gets its own short line instead of one long one.
  const lines = many ? [...sub, ...flags] : [sub.join(' · '), flags.join(' · ')].filter(Boolean);
  const tally = n.votes
    ? `<g class="tally"><rect x="-30" y="20" width="60" height="15" rx="3"/><text y="31">votes ${n.votes.count}/${n.votes.needed}</text></g>`
    : '';
  // Shapes go in the focusable button, text beside it: the labels are drawn for the eye, and the
  // button's aria-label says the same to a screen reader.
  const shapes = `<circle r="56" fill="transparent"/>
    ${selected ? '<circle class="node-select" r="52"/>' : ''}
    <circle class="node-ring" r="45"/>
    ${n.timer !== null ? `<circle class="node-timer" r="45" transform="rotate(-90)" stroke-dasharray="${(timer * circ).toFixed(1)} ${circ.toFixed(1)}"/>` : ''}
    <circle class="node-circle" r="${NODE_R}"/>`;
  const labels = `<text class="nid" y="-2" style="font-size:${idFontSize(n.id)}px">${esc(n.id)}</text>
    <text class="nrole" y="13">${ROLE_LABEL[role] ?? role}</text>
    ${tally}
    <text class="nterm" y="-54">term ${n.term}</text>
    ${lines.map((l, i) => `<text class="nsub${i >= sub.length && many ? ' flag' : ''}" y="${63 + 13 * i}">${esc(l)}</text>`).join('')}
    ${group ? `<circle r="11" cx="33" cy="-30" fill="#222"/><text class="ngroup" x="33" y="-26">${group}</text>` : ''}`;
  return { shapes, labels };
}

/** What a screen reader says for a node. */
function nodeLabel(n) {
  const parts = [n.id, n.role, `term ${n.term}`];
  if (n.votes) parts.push(`${n.votes.count} of ${n.votes.needed} votes`);
  if (n.leader && n.role !== 'leader') parts.push(`follows ${n.leader}`);
  if (n.group && n.group !== 'A') parts.push(`partition group ${n.group}`);
  return parts.join(', ');
}

function msgSvg(m, pos, cut, selectedMsg) {
  const a = pos.get(m.from);
  const b = pos.get(m.to);
  if (!a || !b) return '';
  const k = KIND[m.kind] ?? KIND.unknown;
  let p = m.progress;
  let dead = false;
  let mark = null;
  if (m.fate === 'lost' || m.fate === 'lost-done') {
    // Lost in the network: it vanishes half-way.
    if (p > 0.5) return '';
    dead = p > 0.35;
  } else if (m.fate === 'blocked' || (m.fate === 'flying' && cut)) {
    p = Math.min(p, 0.5);
    dead = p >= 0.5;
    if (dead) mark = '✗';
  } else if (m.fate === 'rejected' || m.fate === 'dropped') {
    dead = true;
    mark = '✗';
  } else if (m.fate === 'delivered') {
    return '';
  }
  const nr = NODE_R * (narrow.matches ? NARROW_GROW : 1) + 8;
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len;
  const uy = dy / len;
  // Start and end at the node's edge; offset sideways so that a→b and b→a do not overlap.
  const sx = a.x + ux * nr - uy * 7;
  const sy = a.y + uy * nr + ux * 7;
  const ex = b.x - ux * nr - uy * 7;
  const ey = b.y - uy * nr + ux * 7;
  const x = sx + (ex - sx) * p;
  const y = sy + (ey - sy) * p;
  let letter = k.letter;
  if (k.reply) letter = m.granted ? '✓' : '✗';
  if (mark) letter = mark;
  const fill = k.reply ? '#fff' : k.color;
  const stroke = k.reply ? k.color : '#222';
  const sel = selectedMsg !== null && m.seq === selectedMsg;
  // On a narrow screen the stage is drawn smaller: messages grow to stay readable.
  const grow = narrow.matches ? ' scale(1.6)' : '';
  return `<g class="msg${k.reply ? ' reply' : ''}${dead ? ' dead' : ''}${sel ? ' selected' : ''}" data-seq="${esc(m.seq ?? '')}" data-kind="${m.kind}" transform="translate(${x.toFixed(1)},${y.toFixed(1)})${grow}"><circle class="hit" r="13"/>${sel ? '<circle class="msg-select" r="13"/>' : ''}<circle r="8.5" fill="${fill}" style="stroke:${stroke}"/><text fill="${m.kind === 'vote' || m.kind === 'heartbeat' ? '#fff' : '#111'}">${letter}</text></g>`;
}

let layers = null;
const nodeEls = new Map();

// On a narrow screen the stage shows only the ring (every layout fits in x 98–622), so that the
// nodes are drawn as large as the width allows.
const narrow = matchMedia('(max-width: 700px)');
const CROP = { x: 98, w: 524 };
function fitStage() {
  // (Grown nodes: the top node's term label reaches above y = 0.)
  const box = narrow.matches ? `${CROP.x} -24 ${CROP.w} 564` : `0 0 ${W} 540`;
  setAttr($('stage'), 'viewBox', box);
  if (layers) setAttr(layers.clock, 'x', String(narrow.matches ? CROP.x + 4 : 10));
}
narrow.addEventListener('change', fitStage);

/** Builds the stage's fixed layers once. */
function initStage() {
  const svg = $('stage');
  svg.innerHTML = `<defs><pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#3a3a3a"/><line x1="0" y1="0" x2="0" y2="8" stroke="#777" stroke-width="3"/></pattern></defs>
    <g id="st-links"></g><g id="st-nodes"></g><g id="st-msgs"></g><g id="st-ghost"></g>
    <text id="st-clock" x="10" y="20" class="axis" style="font-size:12px"></text>`;
  layers = { links: $('st-links'), nodes: $('st-nodes'), msgs: $('st-msgs'), ghost: $('st-ghost'), clock: $('st-clock') };
  fitStage();
}

function renderNodes(view, selected, pos) {
  // With many nodes, or grown on a narrow screen, each fact gets a short line of its own.
  const many = view.nodes.length >= 7 || narrow.matches;
  const k = nodeScale(view.nodes.length);
  const seen = new Set();
  let prev = null;
  for (const n of view.nodes) {
    seen.add(n.id);
    let g = nodeEls.get(n.id);
    if (!g) {
      g = document.createElementNS(SVG, 'g');
      g.dataset.id = n.id;
      g.innerHTML = '<g class="hit" tabindex="-1" role="button"></g><g class="labels" aria-hidden="true"></g>';
      nodeEls.set(n.id, g);
    }
    // Keep the order of the view (append moves an existing element; focus survives a move only
    // when nothing moves, which is the common case).
    const want = prev ? prev.nextSibling : layers.nodes.firstChild;
    if (want !== g) layers.nodes.insertBefore(g, want);
    prev = g;
    const p = pos.get(n.id);
    const isSel = n.id === selected;
    setAttr(g, 'class', `node ${n.role}${isSel ? ' selected' : ''}`);
    setAttr(g, 'data-role', n.role);
    setAttr(g, 'data-term', String(n.term));
    setAttr(g, 'transform', `translate(${p.x.toFixed(1)},${p.y.toFixed(1)})${k !== 1 ? ` scale(${k})` : ''}`);
    const [hit, labels] = g.children;
    // One Tab stop for the ring (the selected node, else the first): arrows move between nodes,
    // so Tab leaves the ring at once, towards the controls.
    const stop = view.nodes.some((x) => x.id === selected) ? isSel : n === view.nodes[0];
    setAttr(hit, 'tabindex', stop ? '0' : '-1');
    setAttr(hit, 'aria-label', nodeLabel(n));
    setAttr(hit, 'aria-pressed', String(isSel));
    const inner = nodeInner(n, isSel, many);
    setHtml(hit, inner.shapes);
    setHtml(labels, inner.labels);
  }
  for (const [id, g] of nodeEls) {
    if (!seen.has(id)) {
      g.remove();
      nodeEls.delete(id);
    }
  }
}

/** Draws the stage for `view`. */
export function renderStage(view, { selected, drag, message }) {
  if (!layers) initStage();
  const pos = positions(view.nodes);
  const groupOf = new Map(view.nodes.map((n) => [n.id, n.group ?? 'A']));
  let links = '';
  for (let i = 0; i < view.nodes.length; i++) {
    for (let j = i + 1; j < view.nodes.length; j++) {
      const a = pos.get(view.nodes[i].id);
      const b = pos.get(view.nodes[j].id);
      const cut = groupOf.get(view.nodes[i].id) !== groupOf.get(view.nodes[j].id);
      links += `<line class="link${cut ? ' cut' : ''}" x1="${a.x.toFixed(1)}" y1="${a.y.toFixed(1)}" x2="${b.x.toFixed(1)}" y2="${b.y.toFixed(1)}"/>`;
    }
  }
  setHtml(layers.links, links);
  renderNodes(view, selected, pos);
  const msgs = view.messages
    .map((m) => msgSvg(m, pos, groupOf.has(m.from) && groupOf.has(m.to) && groupOf.get(m.from) !== groupOf.get(m.to), message))
    .join('');
  setHtml(layers.msgs, msgs);
  let ghost = '';
  if (drag?.active && pos.has(drag.id)) {
    const a = pos.get(drag.id);
    ghost = `<line x1="${a.x.toFixed(1)}" y1="${a.y.toFixed(1)}" x2="${drag.x.toFixed(1)}" y2="${drag.y.toFixed(1)}" stroke="#222" stroke-dasharray="5 4"/><circle cx="${drag.x.toFixed(1)}" cy="${drag.y.toFixed(1)}" r="${NODE_R}" fill="none" stroke="#222" stroke-width="2" stroke-dasharray="5 4"/><text x="${drag.x.toFixed(1)}" y="${(drag.y + 4).toFixed(1)}" text-anchor="middle" style="font-size:11px">${drag.target ? `join ${esc(drag.target)}'s group` : 'cut off'}</text>`;
  }
  setHtml(layers.ghost, ghost);
  const clock = view.clockLabel ?? `sim time ${(view.now / 1000).toFixed(3)} s`;
  if (layers.clock.textContent !== clock) layers.clock.textContent = clock;
}

/** The node ids in stage order (for arrow-key movement). */
export function stageOrder() {
  return [...nodeEls.keys()];
}

export function focusNode(id) {
  nodeEls.get(id)?.querySelector('.hit').focus();
}

export function renderTimeline(view) {
  const lanes = [...new Set([...view.nodes.map((n) => n.id), ...view.terms.map((t) => t.id)])];
  const span = 60000;
  const t1 = Math.max(view.now, span);
  const t0 = t1 - span;
  const laneH = 13;
  // On a narrow screen the timeline is drawn in fewer units, so that its labels keep their size.
  const TW = narrow.matches ? 380 : W;
  const x = (t) => 48 + ((Math.max(t, t0) - t0) / span) * (TW - 58);
  let out = '';
  lanes.forEach((id, i) => {
    const y = 10 + i * laneH;
    out += `<text class="lane-label" x="4" y="${y + 10}">${esc(id.length > 7 ? `…${id.slice(-6)}` : id)}</text><line x1="48" x2="${TW - 10}" y1="${y + 6}" y2="${y + 6}" stroke="#eee"/>`;
  });
  for (const t of view.terms) {
    const end = t.end ?? view.now;
    if (end < t0) continue;
    const i = lanes.indexOf(t.id);
    const y = 10 + i * laneH;
    const xa = x(t.start);
    const w = Math.max(2, x(end) - xa);
    out += `<g class="seg" data-term="${t.term}" data-id="${esc(t.id)}"><rect x="${xa.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${laneH - 2}" rx="2"/>${w > 26 ? `<text x="${(xa + 3).toFixed(1)}" y="${y + 9}">T${t.term}</text>` : ''}</g>`;
  }
  const ya = 10 + lanes.length * laneH + 10;
  for (let s = Math.ceil(t0 / 10000) * 10000; s <= t1; s += 10000) {
    out += `<text class="axis" x="${x(s).toFixed(1)}" y="${ya}" text-anchor="middle">${s / 1000}s</text>`;
  }
  const svg = $('timeline');
  setAttr(svg, 'viewBox', `0 0 ${TW} ${ya + 4}`);
  setHtml(svg, out);
}

export function renderLegend() {
  const roles = ['leader', 'candidate', 'follower', 'unclustered', 'crashed']
    .map((r) => `<span><i class="role" style="background:var(--${r === 'crashed' ? 'crashed' : r})${r === 'unclustered' ? ';border-style:dashed' : ''}"></i>${r}</span>`)
    .join('');
  const kinds = ['pre_vote', 'vote', 'heartbeat', 'heartbeat_ack', 'timeout_now']
    .map((k) => `<span><i style="background:${KIND[k].color}">${KIND[k].letter}</i>${KIND[k].label}</span>`)
    .join('');
  $('legend').innerHTML = `${roles}${kinds}<span><i style="background:#fff;border:2px solid var(--vote)">✓</i>reply: ✓ granted, ✗ refused</span>`;
}
