// Rendering of everything but the stage: the node table, the selected node's inspect() or the
// selected message, the event log, the summary and the control states. Works on the plain view
// model that the one-page cluster, its recorded history and the multi-tab node all produce.
import { renderStage, renderTimeline, esc, setHtml, setAttr, secs, ROLE_LABEL, KIND } from './stage.js';

export { renderLegend, positions, nodeRadius, stageOrder, focusNode } from './stage.js';

const $ = (id) => document.getElementById(id);

const rowEls = new Map();

function renderTable(view, selected) {
  const body = $('nodes').tBodies[0];
  const seen = new Set();
  let prev = null;
  for (const n of view.nodes) {
    seen.add(n.id);
    let tr = rowEls.get(n.id);
    if (!tr) {
      tr = document.createElement('tr');
      tr.dataset.id = n.id;
      rowEls.set(n.id, tr);
    }
    const want = prev ? prev.nextSibling : body.firstChild;
    if (want !== tr) body.insertBefore(tr, want);
    prev = tr;
    const notes = [];
    if (n.self) notes.push('this tab');
    if (n.group && n.group !== 'A') notes.push(`group ${n.group}`);
    if (n.votes) notes.push(`votes ${n.votes.count}/${n.votes.needed}: ${n.votes.from.join(' ')}`);
    if (n.denyConfirm) notes.push('denies leadership');
    if (n.wrongKey) notes.push('wrong key');
    if (n.dropped) notes.push(`${n.dropped} dropped`);
    const timer = n.timer === null ? '' : `<span class="bar" title="${n.timerLabel}" role="img" aria-label="${n.timerLabel} ${Math.round(n.timer * 100)}%"><span style="width:${Math.round(n.timer * 100)}%"></span></span>`;
    setAttr(tr, 'data-role', n.role);
    setAttr(tr, 'data-term', String(n.term));
    setAttr(tr, 'data-leader', n.leader ?? '');
    setAttr(tr, 'data-group', n.group ?? 'A');
    setAttr(tr, 'class', n.id === selected ? 'selected' : '');
    // One Tab stop for the whole table (the selected row, else the first); arrows move.
    const stop = view.nodes.some((x) => x.id === selected) ? n.id === selected : n === view.nodes[0];
    if (tr.tabIndex !== (stop ? 0 : -1)) tr.tabIndex = stop ? 0 : -1;
    if (n.id === selected) setAttr(tr, 'aria-current', 'true');
    else if (tr.hasAttribute('aria-current')) tr.removeAttribute('aria-current');
    setHtml(tr, `<th scope="row">${esc(n.id)}</th><td><span class="role-badge ${n.role}">${ROLE_LABEL[n.role] ?? n.role}</span></td>
      <td>${n.term}</td><td>${esc(n.votedFor ?? '—')}</td><td>${esc(n.leader ?? '—')}</td>
      <td>${n.role === 'leader' ? '(sends them)' : n.hbAgo === null ? '—' : `${secs(n.hbAgo)} ago`}</td>
      <td>${timer}</td><td>${esc(notes.join(', '))}</td>`);
  }
  for (const [id, tr] of rowEls) {
    if (!seen.has(id)) {
      tr.remove();
      rowEls.delete(id);
    }
  }
}

let lastLogKey = '';
function renderLog(log, until) {
  const shown = until === null ? log : log.filter((e) => e.at <= until);
  const last = shown[shown.length - 1];
  const key = `${shown.length}:${last?.at ?? 0}:${last?.text ?? ''}`;
  if (key === lastLogKey) return;
  lastLogKey = key;
  $('log').innerHTML = shown
    .slice(-200)
    .reverse()
    .map((e) => `<li class="${e.kind}"><span class="t">${(e.at / 1000).toFixed(3)}s</span>${esc(e.text)}</li>`)
    .join('');
}

let lastMembers = '';
function renderMemberControls(view, selected) {
  const ids = view.nodes.map((n) => n.id);
  // A node cannot hand leadership to itself, nor to a node that is down: the target list offers
  // the other running nodes only, and follows crashes and restarts.
  const targets = view.nodes.filter((n) => n.id !== selected && !n.crashed && n.role !== 'gone').map((n) => n.id);
  const key = `${ids.join(',')}|${selected}|${targets.join(',')}`;
  if (key === lastMembers) return;
  const membersChanged = lastMembers.split('|')[0] !== ids.join(',');
  lastMembers = key;
  const opts = (list, sel) => list.map((i) => `<option value="${esc(i)}"${i === sel ? ' selected' : ''}>${esc(i)}</option>`).join('');
  const cur = $('transfer-to').value;
  $('transfer-to').innerHTML = opts(targets, targets.includes(cur) ? cur : targets[0]);
  if (!membersChanged) return;
  const from = $('link-from').value || ids[0];
  const to = $('link-to').value || ids[1];
  $('link-from').innerHTML = opts(ids, from);
  $('link-to').innerHTML = opts(ids, to);
  $('groups').innerHTML = ids
    .map((i) => `<div class="g" role="group" aria-labelledby="grp-${esc(i)}"><b id="grp-${esc(i)}">${esc(i)}</b>${['A', 'B', 'C']
      .map((g) => `<button type="button" data-part="${esc(i)}:${g}" aria-label="${esc(i)} in group ${g}" aria-pressed="false">${g}</button>`)
      .join('')}</div>`)
    .join('');
}

function disable(idOrEl, off) {
  const el = typeof idOrEl === 'string' ? $(idOrEl) : idOrEl;
  if (el.disabled !== off) el.disabled = off;
}

function renderControls(state, view, past) {
  const sel = view.nodes.find((n) => n.id === state.selected) ?? null;
  const selId = sel ? sel.id : '—';
  if ($('sel-id').textContent !== selId) $('sel-id').textContent = selId;
  const selRole = sel ? `(${sel.role})` : '';
  if ($('sel-role').textContent !== selRole) $('sel-role').textContent = selRole;
  const running = sel && !sel.crashed && sel.role !== 'gone';
  // While showing the past, actions (which act on the present) are off.
  const mine = !past && (state.source.canControl ? sel && state.source.canControl(sel.id) : !!sel);
  disable('crash', !(mine && running));
  disable('timeout-now', !(mine && running && sel.role !== 'leader' && sel.timer !== null));
  disable('restart-durable', !(mine && sel.crashed));
  disable('restart-wiped', !(mine && sel.crashed));
  disable('leave', !(mine && view.nodes.length > 1));
  disable('transfer', !(mine && running && sel.role === 'leader'));
  disable('deny', !mine);
  $('deny').checked = !!sel?.denyConfirm;
  disable('wrong-key', !(mine && state.source.auth));
  $('wrong-key').checked = !!sel?.wrongKey;
  $('auth').checked = !!state.source.auth;
  disable('auth', past);
  disable('join', past || view.nodes.length >= 9);
  disable('crash-leader', past || !view.nodes.some((n) => n.role === 'leader'));
  disable('restart-all', past || !view.nodes.some((n) => n.crashed));
  for (const b of document.querySelectorAll('#groups [data-part]')) {
    const [id, g] = b.dataset.part.split(':');
    const on = (view.nodes.find((n) => n.id === id)?.group ?? 'A') === g;
    b.classList.toggle('on', on);
    setAttr(b, 'aria-pressed', String(on));
    disable(b, past);
  }
  disable('split', past);
  disable('heal', past);
  const clock = view.clock ?? `${(view.now / 1000).toFixed(3)} s`;
  if ($('clock').textContent !== clock) $('clock').textContent = clock;
}

/** The one-line summary. It is a live region: it is written only when its text changes. */
function renderSummary(view) {
  const live = view.nodes.filter((n) => !n.crashed && n.role !== 'gone');
  const leaders = live.filter((n) => n.role === 'leader');
  const maxTerm = Math.max(0, ...view.nodes.map((n) => n.term));
  const down = view.nodes.length - live.length;
  const s = $('summary');
  setAttr(s, 'data-leaders', leaders.map((n) => n.id).join(','));
  setAttr(s, 'data-term', String(maxTerm));
  const who = leaders.length === 0
    ? 'no leader'
    : leaders.map((n) => `leader <b>${esc(n.id)}</b> (term ${n.term})`).join(' and ');
  setHtml(s, `${who} · ${view.nodes.length} nodes${down ? `, ${down} down` : ''} · highest term ${maxTerm}`);
}

/** The selected message in flight, as the core decodes its bytes. */
function renderMessage(state, view) {
  const panel = $('message-panel');
  const m = state.message;
  panel.hidden = !m;
  if (!m) return;
  const now = view.messages.find((x) => x.seq === m.seq);
  const fate = now ? now.fate : m.fate === 'flying' ? 'delivered' : m.fate;
  const k = KIND[m.kind] ?? KIND.unknown;
  const head = `${k.label ?? m.kind}: ${m.from} → ${m.to}`;
  if ($('message-head').textContent !== head) $('message-head').textContent = head;
  const text = JSON.stringify(
    { fate, sent_at_ms: m.sentAt ?? null, deliver_at_ms: m.deliverAt ?? null, bytes: m.bytes.length, decoded: m.decoded },
    // u64 fields (the incarnation) arrive as BigInt, which JSON cannot write: show their digits.
    (key, v) => (v instanceof Uint8Array ? `${v.length} bytes` : typeof v === 'bigint' ? v.toString() : v),
    1,
  );
  if ($('message').textContent !== text) $('message').textContent = text;
}

/** The view the page shows: the live one, or a recorded snapshot while scrubbing back. */
export function shownView(state) {
  return state.replay ?? state.source.view();
}

/** Renders the whole page. `full`: also the slower panels. */
export function render(state, full) {
  if (!state.source) return;
  const past = !!state.replay;
  const view = shownView(state);
  renderStage(view, { selected: state.selected, drag: state.drag, message: state.message?.seq ?? null });
  renderSummary(view);
  renderControls(state, view, past);
  if (!full) return;
  renderMemberControls(view, state.selected);
  renderTable(view, state.selected);
  renderTimeline(view);
  renderLog(state.source.log, past ? view.now : null);
  renderMessage(state, view);
  const id = view.nodes.some((n) => n.id === state.selected) ? state.selected : null;
  const title = id ? `${id}${past ? ` at ${(view.now / 1000).toFixed(1)} s` : ''}` : '— (select a node)';
  if ($('inspect-id').textContent !== title) $('inspect-id').textContent = title;
  const data = id ? (past ? view.inspect?.[id] : state.source.inspect(id)) : null;
  const text = data ? JSON.stringify(data, null, 1) : '';
  if ($('inspect').textContent !== text) $('inspect').textContent = text;
}
