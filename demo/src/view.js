// Rendering: the SVG stage (nodes, links, messages), the timeline, the node table, the selected
// node's inspect(), the event log and the control states. Works on the plain view model that
// both the one-page cluster and the multi-tab node produce.

const $ = (id) => document.getElementById(id);
const W = 720;
const CX = 360;
const CY = 268;
const R = 185;
const NODE_R = 38;

export { NODE_R };

export const KIND = {
  pre_vote: { color: 'var(--pre_vote)', letter: 'P', label: 'pre-vote' },
  pre_vote_reply: { color: 'var(--pre_vote)', letter: 'P', reply: true },
  vote: { color: 'var(--vote)', letter: 'V', label: 'vote request' },
  vote_reply: { color: 'var(--vote)', letter: 'V', reply: true },
  heartbeat: { color: 'var(--heartbeat)', letter: 'H', label: 'heartbeat' },
  heartbeat_ack: { color: 'var(--ack)', letter: 'A', label: 'ack' },
  timeout_now: { color: 'var(--timeout_now)', letter: 'T', label: 'timeout-now' },
  app: { color: 'var(--app)', letter: 'M', label: 'app message' },
  unknown: { color: '#fff', letter: '?', label: 'undecodable' },
};

const ROLE_LABEL = {
  leader: 'LEADER', follower: 'FOLLOWER', candidate: 'CANDIDATE', unclustered: 'UNCLUSTERED', crashed: 'CRASHED', gone: 'CLOSED',
};

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
/** Replaces an element's content only when it changed (a paused page keeps stable elements). */
function setHtml(el, html) {
  if (el._html !== html) {
    el._html = html;
    el.innerHTML = html;
  }
}
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

export function renderLegend() {
  const roles = ['leader', 'candidate', 'follower', 'unclustered', 'crashed']
    .map((r) => `<span><i class="role" style="background:var(--${r === 'crashed' ? 'crashed' : r})${r === 'unclustered' ? ';border-style:dashed' : ''}"></i>${r}</span>`)
    .join('');
  const kinds = ['pre_vote', 'vote', 'heartbeat', 'heartbeat_ack', 'timeout_now']
    .map((k) => `<span><i style="background:${KIND[k].color}">${KIND[k].letter}</i>${KIND[k].label}</span>`)
    .join('');
  $('legend').innerHTML = `${roles}${kinds}<span><i style="background:#fff;border:2px solid var(--vote)">✓</i>reply: ✓ granted, ✗ refused</span>`;
}

export function positions(nodes) {
  const pos = new Map();
  nodes.forEach((n, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / nodes.length;
    pos.set(n.id, { x: CX + R * Math.cos(a), y: CY + R * Math.sin(a) });
  });
  return pos;
}

function nodeSvg(n, p, selected) {
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
  return `<g class="node ${role}${selected ? ' selected' : ''}" data-id="${esc(n.id)}" data-role="${role}" data-term="${n.term}" transform="translate(${p.x.toFixed(1)},${p.y.toFixed(1)})">
    <circle r="56" fill="transparent"/>
    ${selected ? '<circle class="node-select" r="52"/>' : ''}
    <circle class="node-ring" r="45"/>
    ${n.timer !== null ? `<circle class="node-timer" r="45" transform="rotate(-90)" stroke-dasharray="${(timer * circ).toFixed(1)} ${circ.toFixed(1)}"/>` : ''}
    <circle class="node-circle" r="${NODE_R}"/>
    <text class="nid" y="-2">${esc(n.id)}</text>
    <text class="nrole" y="13">${ROLE_LABEL[role] ?? role}</text>
    <text class="nterm" y="-54">term ${n.term}</text>
    <text class="nsub" y="63">${esc(sub.join(' · '))}</text>
    ${flags.length ? `<text class="nsub" y="77" style="font-weight:700">${esc(flags.join(' · '))}</text>` : ''}
    ${group ? `<circle r="11" cx="33" cy="-30" fill="#222"/><text class="ngroup" x="33" y="-26">${group}</text>` : ''}
  </g>`;
}

function msgSvg(m, pos, cut) {
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
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len;
  const uy = dy / len;
  // Start and end at the node's edge; offset sideways so that a→b and b→a do not overlap.
  const sx = a.x + ux * (NODE_R + 8) - uy * 7;
  const sy = a.y + uy * (NODE_R + 8) + ux * 7;
  const ex = b.x - ux * (NODE_R + 8) - uy * 7;
  const ey = b.y - uy * (NODE_R + 8) + ux * 7;
  const x = sx + (ex - sx) * p;
  const y = sy + (ey - sy) * p;
  let letter = k.letter;
  if (k.reply) letter = m.granted ? '✓' : '✗';
  if (mark) letter = mark;
  const fill = k.reply ? '#fff' : k.color;
  const stroke = k.reply ? k.color : '#222';
  return `<g class="msg${k.reply ? ' reply' : ''}${dead ? ' dead' : ''}" data-kind="${m.kind}" transform="translate(${x.toFixed(1)},${y.toFixed(1)})"><circle r="8.5" fill="${fill}" style="stroke:${stroke}"/><text fill="${m.kind === 'vote' || m.kind === 'heartbeat' ? '#fff' : '#111'}">${letter}</text></g>`;
}

function renderStage(view, selected, drag) {
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
  const msgs = view.messages
    .map((m) => msgSvg(m, pos, groupOf.has(m.from) && groupOf.has(m.to) && groupOf.get(m.from) !== groupOf.get(m.to)))
    .join('');
  const nodes = view.nodes.map((n) => nodeSvg(n, pos.get(n.id), n.id === selected)).join('');
  let ghost = '';
  if (drag?.active && pos.has(drag.id)) {
    const a = pos.get(drag.id);
    ghost = `<g class="drag"><line x1="${a.x.toFixed(1)}" y1="${a.y.toFixed(1)}" x2="${drag.x.toFixed(1)}" y2="${drag.y.toFixed(1)}" stroke="#222" stroke-dasharray="5 4"/><circle cx="${drag.x.toFixed(1)}" cy="${drag.y.toFixed(1)}" r="${NODE_R}" fill="none" stroke="#222" stroke-width="2" stroke-dasharray="5 4"/><text x="${drag.x.toFixed(1)}" y="${(drag.y + 4).toFixed(1)}" text-anchor="middle" style="font-size:11px">${drag.target ? `join ${esc(drag.target)}'s group` : 'cut off'}</text></g>`;
  }
  setHtml($('stage'), `<defs><pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#3a3a3a"/><line x1="0" y1="0" x2="0" y2="8" stroke="#777" stroke-width="3"/></pattern></defs>
    <g>${links}</g><g>${nodes}</g><g>${msgs}</g>${ghost}
    <text x="10" y="20" class="axis" style="font-size:12px">${view.clockLabel ?? `sim time ${(view.now / 1000).toFixed(3)} s`}</text>`);
}

function renderTimeline(view) {
  const lanes = [...new Set([...view.nodes.map((n) => n.id), ...view.terms.map((t) => t.id)])];
  const span = 60000;
  const t1 = Math.max(view.now, span);
  const t0 = t1 - span;
  const laneH = 13;
  const h = Math.max(40, 14 + lanes.length * laneH + 12);
  const x = (t) => 48 + ((Math.max(t, t0) - t0) / span) * (W - 58);
  let out = '';
  lanes.forEach((id, i) => {
    const y = 10 + i * laneH;
    out += `<text class="lane-label" x="4" y="${y + 10}">${esc(id)}</text><line x1="48" x2="${W - 10}" y1="${y + 6}" y2="${y + 6}" stroke="#eee"/>`;
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
  svg.setAttribute('viewBox', `0 0 ${W} ${ya + 4}`);
  setHtml(svg, out);
}

function renderTable(view, selected) {
  const rows = view.nodes.map((n) => {
    const notes = [];
    if (n.self) notes.push('this tab');
    if (n.group && n.group !== 'A') notes.push(`group ${n.group}`);
    if (n.denyConfirm) notes.push('denies leadership');
    if (n.wrongKey) notes.push('wrong key');
    if (n.dropped) notes.push(`${n.dropped} dropped`);
    const timer = n.timer === null ? '' : `<span class="bar" title="${n.timerLabel}"><span style="width:${Math.round(n.timer * 100)}%"></span></span>`;
    return `<tr data-id="${esc(n.id)}" data-role="${n.role}" data-term="${n.term}" data-leader="${esc(n.leader ?? '')}" data-group="${n.group ?? 'A'}" class="${n.id === selected ? 'selected' : ''}">
      <td><b>${esc(n.id)}</b></td><td><span class="role-badge ${n.role}">${ROLE_LABEL[n.role] ?? n.role}</span></td>
      <td>${n.term}</td><td>${esc(n.votedFor ?? '—')}</td><td>${esc(n.leader ?? '—')}</td>
      <td>${n.role === 'leader' ? '(sends them)' : n.hbAgo === null ? '—' : `${secs(n.hbAgo)} ago`}</td>
      <td>${timer}</td><td>${esc(notes.join(', '))}</td></tr>`;
  });
  setHtml($('nodes').tBodies[0], rows.join(''));
}

let lastLogKey = '';
function renderLog(view) {
  const log = view.log;
  const key = `${log.length}:${log.length ? log[log.length - 1].at : 0}:${log.length ? log[log.length - 1].text : ''}`;
  if (key === lastLogKey) return;
  lastLogKey = key;
  $('log').innerHTML = log
    .slice(-200)
    .reverse()
    .map((e) => `<li class="${e.kind}"><span class="t">${(e.at / 1000).toFixed(3)}s</span>${esc(e.text)}</li>`)
    .join('');
}

let lastMembers = '';
function renderMemberControls(source, view) {
  const ids = view.nodes.map((n) => n.id);
  const key = ids.join(',');
  if (key === lastMembers) return;
  lastMembers = key;
  const opts = (sel) => ids.map((i) => `<option value="${esc(i)}"${i === sel ? ' selected' : ''}>${esc(i)}</option>`).join('');
  $('transfer-to').innerHTML = opts(null);
  const from = $('link-from').value || ids[0];
  const to = $('link-to').value || ids[1];
  $('link-from').innerHTML = opts(from);
  $('link-to').innerHTML = opts(to);
  $('groups').innerHTML = ids
    .map((i) => `<div class="g"><b>${esc(i)}</b>${['A', 'B', 'C'].map((g) => `<button type="button" data-part="${esc(i)}:${g}">${g}</button>`).join('')}</div>`)
    .join('');
}

function renderControls(state, view) {
  const sel = view.nodes.find((n) => n.id === state.selected) ?? null;
  $('sel-id').textContent = sel ? sel.id : '—';
  $('sel-role').textContent = sel ? `(${sel.role})` : '';
  const running = sel && !sel.crashed && sel.role !== 'gone';
  const mine = state.source.canControl ? sel && state.source.canControl(sel.id) : !!sel;
  $('crash').disabled = !(mine && running);
  $('restart-durable').disabled = !(mine && sel.crashed);
  $('restart-wiped').disabled = !(mine && sel.crashed);
  $('leave').disabled = !(mine && view.nodes.length > 1);
  $('transfer').disabled = !(mine && running && sel.role === 'leader');
  $('deny').disabled = !mine;
  $('deny').checked = !!sel?.denyConfirm;
  $('wrong-key').disabled = !(mine && state.source.auth);
  $('wrong-key').checked = !!sel?.wrongKey;
  $('auth').checked = !!state.source.auth;
  $('join').disabled = view.nodes.length >= 9;
  $('crash-leader').disabled = !view.nodes.some((n) => n.role === 'leader');
  $('restart-all').disabled = !view.nodes.some((n) => n.crashed);
  for (const b of document.querySelectorAll('#groups [data-part]')) {
    const [id, g] = b.dataset.part.split(':');
    b.classList.toggle('on', (view.nodes.find((n) => n.id === id)?.group ?? 'A') === g);
  }
  if (view.clock !== undefined) $('clock').textContent = view.clock;
  else $('clock').textContent = `${(view.now / 1000).toFixed(3)} s`;
}

function renderSummary(view) {
  const live = view.nodes.filter((n) => !n.crashed && n.role !== 'gone');
  const leaders = live.filter((n) => n.role === 'leader');
  const maxTerm = Math.max(0, ...view.nodes.map((n) => n.term));
  const down = view.nodes.length - live.length;
  const s = $('summary');
  s.dataset.leaders = leaders.map((n) => n.id).join(',');
  s.dataset.term = String(maxTerm);
  const who = leaders.length === 0
    ? 'no leader'
    : leaders.map((n) => `leader <b>${esc(n.id)}</b> (term ${n.term})`).join(' and ');
  s.innerHTML = `${who} · ${view.nodes.length} nodes${down ? `, ${down} down` : ''} · highest term ${maxTerm}`;
}

/** Renders the whole page from `state.source.view()`. `full`: also the slower panels. */
export function render(state, full) {
  if (!state.source) return;
  const view = state.source.view();
  renderStage(view, state.selected, state.drag);
  renderSummary(view);
  renderControls(state, view);
  if (!full) return;
  renderMemberControls(state.source, view);
  renderTable(view, state.selected);
  renderTimeline(view);
  renderLog(view);
  const id = view.nodes.some((n) => n.id === state.selected) ? state.selected : null;
  $('inspect-id').textContent = id ?? '— (click a node)';
  const data = id ? state.source.inspect(id) : null;
  $('inspect').textContent = data ? JSON.stringify(data, null, 1) : '';
}
