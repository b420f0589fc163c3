import { call } from './api.js';
import { el } from './dom.js';

// The pool page's monitor group section: for each origin, what each
// monitor of the pool's group sees over the checking nodes, and the part
// that monitor plays in the decision. A pool with one monitor has no
// section: its health matrix already is that monitor's view.

const ROLE = (m) => (m.must_be_healthy ? 'must be healthy' : m.monitoring_only ? 'monitoring only, never counts' : 'one of the others');

// monitorLabels names each monitor of the group by its type and check
// (ids are opaque), falling back to the id when it cannot be read.
export async function monitorLabels(group) {
  const out = new Map();
  await Promise.all((group || []).map(async (g) => {
    try {
      const { data: m } = await call('GET', `/monitors/${g.monitor}`);
      const what = m.type === 'tcp' ? `tcp :${m.port}` : `${m.type} ${m.method || 'GET'} ${m.path || '/'}${m.port ? ` :${m.port}` : ''}`;
      out.set(g.monitor, m.description ? `${m.description} (${what})` : what);
    } catch {
      out.set(g.monitor, g.monitor);
    }
  }));
  return out;
}

function view(v) {
  const nodes = v.nodes_up + v.nodes_down;
  const of = (k) => ` on ${k} of ${nodes} node${nodes === 1 ? '' : 's'}`;
  const shown = {
    up: [el('span', { class: 'up', text: 'up' }), of(v.nodes_up)],
    down: [el('span', { class: 'down', text: 'DOWN' }), of(v.nodes_down)],
    mixed: [el('span', { class: 'down', text: 'mixed' }), `: up on ${v.nodes_up}, down on ${v.nodes_down}`],
  }[v.state] || [el('span', { class: 'unchecked', text: 'not checked' })];
  return [...shown, v.reason ? ` · ${v.reason}` : ''];
}

// monitorsTable: origin × monitor of the group, each cell that monitor's
// view of that origin; null for a pool without a group.
export function monitorsTable(h, labels) {
  const group = h.monitors || [];
  if (group.length === 0) return null;
  return el('table', { id: 'monitors' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'origin' }), el('th', { scope: 'col', text: 'agreed' }),
      group.map((g) => el('th', { scope: 'col', 'data-monitor': g.monitor },
        labels.get(g.monitor) || g.monitor, el('br'), el('span', { class: 'muted', text: ROLE(g) }))))),
    el('tbody', {}, h.origins.map((o) => el('tr', { 'data-origin': o.name },
      el('th', { scope: 'row', text: o.name }),
      el('td', { 'data-state': o.state || '' }, el('span', { class: o.healthy === false ? 'down' : 'up', text: o.healthy === false ? 'DOWN' : 'up' })),
      group.map((g, i) => {
        const v = (o.monitors || [])[i] || { monitor: g.monitor, state: 'not_checked', nodes_up: 0, nodes_down: 0 };
        return el('td', { 'data-monitor': g.monitor, 'data-state': v.state }, view(v));
      })))));
}

// monitorsKey is what the section shows, to tell whether a redraw is needed.
export const monitorsKey = (h) => JSON.stringify([h.monitors, h.origins.map((o) => [o.healthy, o.monitors])]);
