import { call, list } from './api.js';
import { el, health } from './dom.js';

// problemText says what is wrong with a load balancer's pools, worst first,
// so that the card answers "why is this red" without a click.
function problemText(order, ok, hs, byID) {
  const parts = [];
  for (const id of order) {
    const name = byID.get(id)?.name || id;
    if (!ok(id)) parts.push(`pool ${name} ${byID.get(id)?.enabled === false ? 'disabled' : 'down'}`);
  }
  for (const id of order) {
    const down = (hs.get(id)?.origins || []).filter((o) => o.healthy === false).map((o) => o.name);
    if (down.length) parts.push(`${down.join(', ')} down in pool ${byID.get(id)?.name || id}`);
  }
  return parts.join('; ');
}

// poolOrder lists every pool a load balancer may answer from: its default
// pools in order, then its region and country pools, then the fallback.
export function poolOrder(lb) {
  const order = [...lb.default_pools];
  const add = (id) => { if (id && !order.includes(id)) order.push(id); };
  for (const m of [lb.region_pools, lb.country_pools]) for (const ids of Object.values(m || {})) ids.forEach(add);
  add(lb.fallback_pool);
  return order;
}

// overview: every load balancer with its policy, its pools in order, the
// pool answering now and the health of each; problems first.
export async function overview() {
  const [lbs, ps] = await Promise.all([list('load_balancers'), list('pools')]);
  const byID = new Map(ps.map((p) => [p.id, p]));
  const hs = new Map(await Promise.all(ps.map(async (p) => [p.id, (await call('GET', `/pools/${p.id}/health`)).data])));
  const cards = lbs.map((lb) => {
    const order = poolOrder(lb);
    const ok = (id) => byID.get(id)?.enabled !== false && hs.get(id)?.healthy !== false;
    const now = lb.default_pools.find(ok) || lb.fallback_pool;
    const problem = lb.enabled !== false && order.some((id) => !ok(id) || (hs.get(id)?.origins || []).some((o) => o.healthy === false));
    const role = (id) => {
      if (lb.default_pools.includes(id)) return String(lb.default_pools.indexOf(id) + 1);
      if (id === lb.fallback_pool) return 'fallback';
      return 'geo';
    };
    const rows = order.map((id) => {
      const p = byID.get(id), h = hs.get(id);
      const origins = (h?.origins || []).map((o) => el('li', { 'data-origin': o.name, 'data-healthy': String(o.healthy !== false) },
        `${o.name} (${o.address}) `, health(o.healthy), o.reason ? ` ${o.reason}` : ''));
      return el('tr', { class: id === now ? 'answering' : null, 'data-pool': p?.name || id },
        el('td', { 'data-label': 'order', text: role(id) }),
        el('td', { 'data-label': 'pool' }, el('a', { href: `#pool/${id}`, text: p?.name || id })),
        el('td', { 'data-label': 'health' }, p?.enabled === false ? el('span', { class: 'down', text: 'disabled' }) : health(h?.healthy),
          id === now ? el('strong', { text: ' ← answering now' }) : ''),
        el('td', { 'data-label': 'origins' }, el('ul', { class: 'plain' }, origins)));
    });
    return { problem, node: el('section', { class: 'card' + (problem ? ' problem' : ''), 'data-lb': lb.name, 'aria-label': lb.name },
      el('h2', { text: lb.name }),
      el('p', { class: 'muted', text: `steering ${lb.steering_policy || 'off (failover order)'}${lb.enabled === false ? ' · disabled' : ''}` }),
      problem ? el('p', { class: 'problem-text', text: `Problem: ${problemText(order, ok, hs, byID)}` }) : '',
      el('table', { class: 'stack' },
        el('thead', {}, el('tr', {}, ['order', 'pool', 'health', 'origins'].map((t) => el('th', { scope: 'col', text: t })))),
        el('tbody', {}, rows))) };
  });
  cards.sort((a, b) => Number(b.problem) - Number(a.problem));
  const nodes = [el('h2', { text: 'Load balancers', tabindex: '-1', class: 'page-title' }), ...cards.map((c) => c.node)];
  if (!cards.length) nodes.push(el('p', { text: 'No load balancers yet.' }));
  return { nodes, key: JSON.stringify([lbs, ps, [...hs].map(([id, h]) => [id, h.healthy, h.origins.map((o) => [o.name, o.address, o.healthy, o.reason])])]), refresh: () => 'rerender' };
}
