// Staged rollouts: a pool's weights moving to new values in steps, or a
// load balancer's default pool order, answered for a growing share of
// the queries. Every
// node takes the step from its clock, so the page counts down to the next
// step and redraws then (nothing is written when a step begins); pause,
// resume and abort are the events an operator writes.
import { call, Problem } from './api.js';
import { bar, el, when } from './dom.js';
import { left, tick } from './shifts.js';

const ACTIVE = new Set(['scheduled', 'running', 'paused']);

// change is what the rollout moves: origin weights, or the default pool
// order (the percent is then the share of queries answered with it).
function change(r) {
  if (r.load_balancer) {
    return `default_pools ${(r.from_default_pools || []).join(', ')} → ${r.default_pools.join(', ')}`;
  }
  return Object.keys(r.weights).sort().map((n) => `${n} ${r.from?.[n]} → ${r.weights[n]}`).join(', ');
}

function target(r) {
  return r.load_balancer ? `load balancer ${r.load_balancer}` : `pool ${r.pool}`;
}

// progress is the step in force of how many, how far the weights are,
// and when the next step comes.
function progress(r) {
  if (r.current_step === undefined || r.current_step === null) {
    return el('span', { text: r.end_reason ? `${r.status}: ${r.end_reason}` : r.status });
  }
  const n = r.steps.length, k = Math.min(r.current_step + 1, n);
  const kids = [el('span', { class: 'step', text: r.current_step < 0 ? `starts ${when(r.starts_at)}` : `step ${k} of ${n}, ${r.percent} %` }),
    bar((r.percent || 0) / 100)];
  if (r.next_step_at) {
    const what = r.current_step + 1 >= n ? 'completes' : 'next step';
    kids.push(el('span', { class: 'countdown muted', 'data-at': r.next_step_at, 'data-what': what, text: ` ${what} in ${left(r.next_step_at)}` }));
  }
  return el('span', {}, ...kids);
}

// actions are the buttons of the events r's state allows; each answers
// in msg and redraws.
function actions(r, msg, redraw) {
  const act = (name, label, cls) => {
    const b = el('button', { type: 'button', class: `${cls} rollout-${name}`, text: label, 'aria-label': `${label} rollout ${r.id}` });
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        await call('POST', `/rollouts/${encodeURIComponent(r.id)}/${name}`, {}, `"${r.revision}"`);
        redraw();
      } catch (e) {
        if (!(e instanceof Problem)) throw e;
        b.disabled = false;
        msg.textContent = `Not done: ${e.message}`;
        msg.className = 'error';
      }
    });
    return b;
  };
  if (!ACTIVE.has(r.status)) return '';
  return el('div', { class: 'actions' },
    r.status === 'paused' ? act('resume', 'Resume', '') : act('pause', 'Pause', ''),
    act('abort', 'Abort', 'danger'));
}

// rolloutsTable lists rollouts, with progress, state and actions.
function rolloutsTable(list, redraw, id) {
  const msg = el('p', { id: `${id}-status`, role: 'status', 'aria-live': 'polite' });
  const rows = list.map((r) => el('tr', { 'data-rollout': r.id, 'data-status': r.status },
    el('td', {}, el('code', { text: r.id.slice(0, 8) })), el('td', { class: 'state', text: r.status }),
    el('td', { class: 'target', text: target(r) }), el('td', { class: 'progress' }, progress(r)), el('td', { class: 'change', text: change(r) }),
    el('td', { text: r.reason }), el('td', {}, actions(r, msg, redraw))));
  return [el('div', { class: 'table-wrap' }, el('table', { id: `${id}-table` },
    el('thead', {}, el('tr', {}, ['Rollout', 'State', 'Target', 'Progress', 'Change', 'Reason', ''].map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, rows))), msg];
}

let redraw = () => {};

// rolloutsPage lists every rollout, the unended first.
export async function rolloutsPage() {
  const { data } = await call('GET', '/rollouts?per_page=1000');
  const list = [...data.filter((r) => ACTIVE.has(r.status)), ...data.filter((r) => !ACTIVE.has(r.status)).reverse()];
  const body = list.length ? rolloutsTable(list, () => redraw(), 'rollouts')
    : [el('p', { class: 'muted', text: 'No rollouts. glbctl apply --staged or POST /api/v1/rollouts starts one.' })];
  return { key: JSON.stringify(list),
    nodes: [el('h2', { text: 'Rollouts', tabindex: '-1', class: 'page-title' }),
      el('section', { class: 'card', id: 'rollouts', 'aria-label': 'Rollouts' }, ...body)],
    refresh: () => 'rerender',
    bind: (draw) => { redraw = () => draw(() => rolloutsPage(), null); tick(redraw); } };
}

// rolloutsCard shows, on a load balancer's page, the unended rollouts of
// its order and of the pools it uses ('' when none).
export async function rolloutsCard(lb) {
  const used = new Set([...(lb.default_pools || []), lb.fallback_pool, ...Object.values(lb.region_pools || {}).flat(),
    ...Object.values(lb.country_pools || {}).flat()]);
  const { data } = await call('GET', '/rollouts?status=scheduled,running,paused&per_page=1000');
  const list = data.filter((r) => used.has(r.pool) || r.load_balancer === lb.id);
  if (!list.length) return '';
  const again = () => window.dispatchEvent(new HashChangeEvent('hashchange'));
  tick(again);
  return el('section', { class: 'card', id: 'lb-rollouts', 'aria-label': 'Rollouts' },
    el('h2', { text: 'Rollouts under way' }), ...rolloutsTable(list, again, 'lb-rollouts'),
    el('p', { class: 'muted hint' }, el('a', { href: '#rollouts', text: 'Every rollout' })));
}
