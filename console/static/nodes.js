import { call } from './api.js';
import { el, when } from './dom.js';

const STATES = ['serving', 'draining', 'drained', 'stale', 'gone'];

// timer redraws the page every two seconds; one at a time, whatever the
// number of drawings.
let timer = null;

// said is what the last drain or undrain answered, shown for SAID_FOR ms
// by every drawing of the page, whatever started it: the timer and live
// events redraw the page too, and one of them finishing last would
// otherwise wipe the answer the operator is about to read.
let said = { text: '', at: 0 };
const SAID_FOR = 10000;

const secs = (s) => s < 60 ? `${s.toFixed(1)} s` : s < 3600 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;

function lag(v) {
  if (!v.lag.revisions) return '0';
  return `${v.lag.revisions} revision${v.lag.revisions === 1 ? '' : 's'}, ${secs(v.lag.seconds)}`;
}

// bgp says how many sessions are up, the state of each one that is not,
// and the prefixes announced.
function bgp(v) {
  if (!v.bgp.sessions.length) return '–';
  const down = v.bgp.sessions.filter((s) => s.state !== 'established');
  const why = down.length ? ` (${down.map((s) => `${s.peer} ${s.state}`).join(', ')})` : '';
  return `${v.bgp.sessions.length - down.length}/${v.bgp.sessions.length} established${why}; ${v.bgp.announced.length ? v.bgp.announced.join(', ') : 'nothing announced'}`;
}

// store is the server the node writes to and where its follow reads go
// (PostgreSQL only): after a failover, the primary it found. Under the
// name, so that the table keeps its width.
function store(v) {
  return `${v.store.primary || '?'}, follows the ${v.store.follows}`;
}

// drainControls are the drain form of a serving node and the undrain
// button of a drained or draining one (admin: the API answers 403 to
// another token, which is said beside the button).
function drainControls(v, redraw) {
  const msg = el('span', { role: 'status', class: 'delete-status', id: `n-${v.name}-status` });
  const fail = (e) => { msg.textContent = ` ${e.status === 403 ? 'Draining a node needs an admin token (the API answered 403).' : e.message}`; msg.className = 'error'; };
  if (v.drain) {
    const b = el('button', { type: 'button', id: `n-${v.name}-undrain`, text: 'Undrain', 'aria-label': `Undrain node ${v.name}` });
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        await call('DELETE', `/nodes/${encodeURIComponent(v.name)}/drain`);
        redraw(`Node ${v.name} undrained: it announces and serves again within a second.`);
      } catch (e) { b.disabled = false; fail(e); }
    });
    return [b, msg];
  }
  const reason = el('input', { type: 'text', id: `n-${v.name}-reason`, placeholder: 'reason', 'aria-label': `Reason to drain node ${v.name}`, required: true });
  const b = el('button', { type: 'button', id: `n-${v.name}-drain`, text: 'Drain', 'aria-label': `Drain node ${v.name}` });
  b.addEventListener('click', async () => {
    if (!reason.value.trim()) { msg.textContent = ' Say why the node is drained.'; msg.className = 'error'; reason.focus(); return; }
    b.disabled = true;
    try {
      await call('POST', `/nodes/${encodeURIComponent(v.name)}/drain`, { reason: reason.value.trim() });
      redraw(`Node ${v.name} draining: its routes are withdrawn, it answers for its drain grace, then shows drained.`);
    } catch (e) { b.disabled = false; fail(e); }
  });
  return [reason, b, msg];
}

function nodeRow(v, redraw) {
  return el('tr', { 'data-node': v.name, 'data-state': v.state },
    el('td', { 'data-label': 'name', class: 'mono' }, v.name,
      v.store ? el('div', { class: 'muted node-store', text: `store ${store(v)}` }) : ''),
    el('td', { 'data-label': 'region', text: v.region || '–' }),
    el('td', { 'data-label': 'state' }, el('span', { class: `state state-${v.state}`, text: v.state }),
      v.why ? el('span', { class: 'muted', text: ` ${v.why}` }) : ''),
    el('td', { 'data-label': 'version', title: v.commit || '', text: v.version }),
    el('td', { 'data-label': 'revision', text: String(v.revision) }),
    el('td', { 'data-label': 'lag', text: lag(v) }),
    el('td', { 'data-label': 'snapshot age', text: v.snapshot_age == null ? '–' : secs(v.snapshot_age) }),
    el('td', { 'data-label': 'checks', text: `${v.checks.failing} of ${v.checks.origins} failing` }),
    el('td', { 'data-label': 'answers/s', text: v.answers_per_second.toFixed(1) }),
    el('td', { 'data-label': 'listeners', class: 'mono', text: [...v.listeners.udp, ...v.listeners.xdp.map((i) => `xdp:${i}`)].join(' ') || '–' }),
    el('td', { 'data-label': 'BGP', text: bgp(v) }),
    el('td', { 'data-label': 'last seen' }, el('time', { datetime: v.last_seen, text: when(v.last_seen) })),
    el('td', { 'data-label': 'drain' }, drainControls(v, redraw)));
}

// nodesPage shows the fleet (GET /nodes), redrawn every two seconds while
// it is shown, and drains and undrains nodes (admin).
export async function nodesPage(flash) {
  if (flash) said = { text: flash, at: Date.now() };
  const { data: nodes } = await call('GET', '/nodes');
  // Read after the fetch: a redraw begun before a drain was answered (the
  // timer's, an event's) but finished after it still shows what it said.
  if (!flash && Date.now() - said.at < SAID_FOR) flash = said.text;
  const title = el('h2', { text: 'Nodes', tabindex: '-1', class: 'page-title' });
  const counts = STATES.map((s) => [s, nodes.filter((v) => v.state === s).length]).filter(([, n]) => n);
  let redraw = () => {};
  const out = [title];
  if (flash) out.push(el('p', { class: 'notice', id: 'n-flash', role: 'status', text: flash }));
  out.push(el('p', { id: 'n-summary', class: 'muted', text: nodes.length
    ? counts.map(([s, n]) => `${n} ${s}`).join(', ') + '.'
    : 'No node has reported yet.' }));
  out.push(el('section', { class: 'card', 'aria-label': 'Fleet' },
    el('div', { class: 'table-wrap' }, el('table', { class: 'stack', id: 'n-table' },
      el('thead', {}, el('tr', {}, ['name', 'region', 'state', 'version', 'revision', 'lag', 'snapshot age', 'checks', 'answers/s', 'listeners', 'BGP', 'last seen', 'drain']
        .map((t) => el('th', { scope: 'col', text: t })))),
      el('tbody', {}, nodes.map((v) => nodeRow(v, (f) => redraw(f))))))));
  out.push(el('p', { class: 'muted', text: 'A drained node has withdrawn its anycast routes and may be stopped; stale: it lacks a revision of the store for 5 s or more; gone: it has not reported for --node-gone-after.' }));
  // The key leaves out what moves every second (last seen, rates, ages),
  // so that a redraw happens when something an operator reads changed.
  const key = JSON.stringify([flash, nodes.map((v) => [v.name, v.state, v.why, v.version, v.revision, v.lag.revisions, v.checks, v.bgp, v.store, v.drain])]);
  return {
    nodes: out,
    key,
    refresh: () => 'rerender',
    bind: (draw) => {
      redraw = (f) => draw(() => nodesPage(f), 'title');
      clearInterval(timer);
      timer = setInterval(() => {
        if (!location.hash.startsWith('#nodes') || !document.getElementById('n-table')) { clearInterval(timer); return; }
        const a = document.activeElement;
        if (a && a.tagName === 'INPUT' && a.value) return; // a reason being typed
        draw(() => nodesPage());
      }, 2000);
    },
  };
}
