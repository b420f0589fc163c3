import { call, list } from './api.js';
import { el, health, policyName, shownAddress } from './dom.js';
import { REGIONS } from './preview.js';
import { takeFlash } from './edit.js';
import { shiftsCard, tick } from './shifts.js';

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

const steered = (policy) => policy === 'geo' || policy === 'proximity' || policy === 'dynamic_latency' || policy === 'measured_latency';

// poolOrder lists every pool a load balancer may answer from: its default
// pools in order, then its region and country pools, then the fallback.
export function poolOrder(lb) {
  const order = [...lb.default_pools];
  const add = (id) => { if (id && !order.includes(id)) order.push(id); };
  for (const m of [lb.region_pools, lb.country_pools]) for (const ids of Object.values(m || {})) ids.forEach(add);
  add(lb.fallback_pool);
  return order;
}

// mappings says which pool answers each place a steered load balancer
// tells apart, now: for geo its country and region mappings, for
// proximity and dynamic latency each region; every other client gets the
// default pools' answer. The pool comes from the preview endpoint, so it
// is the DNS servers' own decision on their snapshot, not a guess here.
async function mappings(lb, policy) {
  const places = [];
  if (policy === 'geo') {
    for (const [c, ids] of Object.entries(lb.country_pools || {})) places.push({ key: c, client: { country: c }, via: 'country', ids });
    for (const [r, ids] of Object.entries(lb.region_pools || {})) places.push({ key: r, client: { region: r }, via: 'region', ids });
  } else if (policy === 'proximity' || policy === 'dynamic_latency' || policy === 'measured_latency') {
    for (const r of REGIONS) places.push({ key: r, client: { region: r }, via: 'region', ids: lb.default_pools });
  }
  return Promise.all(places.map(async (m) => {
    try {
      const { data } = await call('POST', `/load_balancers/${lb.id}/preview`, { clients: [m.client] });
      const top = [...data.now.pools].sort((a, b) => b.share - a.share)[0];
      // The order the place's clients try the pools in, from the same
      // decision (one place has one, unless random steering draws).
      return { ...m, now: top?.id, nowName: top?.name, order: data.now.orders?.[0]?.pools, ecs: data.uses_ecs, prefer: data.prefer_ecs };
    } catch (e) {
      return { ...m, error: e.message };
    }
  }));
}

// orderText writes a mapping's order as the DNS servers take it: each
// pool with its distance (proximity) or RTT (dynamic latency) from there.
function orderText(m, lb, byID) {
  const name = (id) => byID.get(id)?.name || id;
  if (!m.order) return [...m.ids, ...lb.default_pools.filter((id) => !m.ids.includes(id))].map(name).join(' → ');
  // A pool in both a geo list and the default pools is shown once, at
  // its first place (data-order keeps the order as the API gives it).
  return m.order.filter((p, i) => m.order.findIndex((q) => q.id === p.id) === i).map((p) => p.name + (p.distance_km !== undefined ? ` (${Math.round(p.distance_km).toLocaleString('en')}\u00a0km)`
    : p.rtt_ms !== undefined ? ` (${Math.round(p.rtt_ms)}\u00a0ms)` : p.measured_ms !== undefined ? ` (${Math.round(p.measured_ms)}\u00a0ms measured)` : '')).join(' → ');
}

// clientsText says which clients a mapping's row is about, by whether the
// DNS servers locate this load balancer's queries by their ECS subnet
// (the preview answer's uses_ecs, their own decision).
function clientsText(m) {
  if (m.error) return '';
  return m.ecs ? `with ECS: subnets in ${m.key}; without ECS: resolvers in ${m.key}`
    : `resolvers in ${m.key}; ECS subnets are not used (prefer_ecs ${m.prefer})`;
}

function mappingTable(lb, policy, maps, byID) {
  const head = policy === 'geo' ? 'country or region' : 'clients in region';
  return el('table', { class: 'stack mappings', 'aria-label': `Mappings of ${lb.name}` },
    el('thead', {}, el('tr', {}, [head, policy === 'proximity' ? 'pools (nearest first)' : policy === 'dynamic_latency' ? 'pools (lowest RTT first)' : policy === 'measured_latency' ? 'pools (fastest for real users first)' : 'pools in order', 'answering now'].map((t) => el('th', { scope: 'col', text: t })))),
    el('tbody', {}, maps.map((m) => el('tr', { 'data-mapping': m.key, 'data-now': m.nowName || '', 'data-order': (m.order || []).map((p) => p.name).join(' '), 'data-ecs': String(!!m.ecs) },
      el('td', { 'data-label': head }, `${m.key} (${m.via})`, el('br'), el('span', { class: 'muted clients', text: clientsText(m) })),
      el('td', { 'data-label': 'pools', text: orderText(m, lb, byID) }),
      el('td', { 'data-label': 'answering now' }, m.error ? el('span', { class: 'error', text: m.error }) : el('strong', { text: m.nowName || '—' }))))));
}

// firstSteps walks a newcomer through the first load balancer: a zone, a
// pool (with a monitor, or not), then the load balancer; each step says
// whether it is done and links to the form that does it.
async function firstSteps() {
  const [zones, pools, monitors] = await Promise.all([list('zones'), list('pools'), list('monitors')]);
  const step = (done, title, text, href, label, extra) => el('li', { class: done ? 'done' : null, 'data-step': title },
    el('strong', { text: `${title}${done ? ' ✓' : ''}. ` }), text, ' ',
    done ? el('span', { class: 'muted', text: done }) : el('a', { href, class: 'button', text: label }), extra || '');
  return el('section', { class: 'card', id: 'first-steps', 'aria-label': 'First steps' },
    el('h2', { text: 'No load balancers yet: the first one in three steps' }),
    el('ol', { class: 'steps' },
      step(zones.length && `zone ${zones.map((z) => z.name).join(', ')}`, 'Zone', 'The domain delegated to glb, with its nameservers (the glbd nodes) and any static records.', '#edit/zones?back=overview', 'Create a zone'),
      step(pools.length && `pool ${pools.map((p) => p.name).join(', ')}`, 'Pool', 'The servers that answer, with their weights. A monitor checks them; without one they are not checked and always count as up.', '#edit/pools?back=overview', 'Create a pool',
        monitors.length ? '' : el('span', {}, ' ', el('a', { href: '#edit/monitors?back=overview', text: 'Create a monitor first' }))),
      step(false, 'Load balancer', 'A name in the zone answered from the pools: default pools in order, a fallback, and steering (geo, proximity, latency...).', '#edit/load_balancers?back=overview', 'Create a load balancer')),
    el('p', { class: 'muted' }, 'The same from a shell: ', el('code', { text: 'glbctl apply -f glb.yaml' }),
      ' applies a file of zones, pools and load balancers (docs/glbctl.md), and everything here is the REST API at ',
      el('a', { href: '/api/v1/openapi.json', text: '/api/v1' }), ' (docs/api.md), e.g. ',
      el('code', { text: 'curl -X POST /api/v1/zones -d \'{"name": "glb.example.com", ...}\'' }), '.'));
}

// overview: every load balancer with its policy, its pools in order, the
// pool answering now and the health of each; problems first.
export async function overview() {
  const [lbs, ps, shifts, safety] = await Promise.all([list('load_balancers'), list('pools'),
    call('GET', '/shifts?status=active,scheduled&per_page=1000').then((r) => r.data),
    // Safety rules that health changes broke after a shift started.
    call('GET', '/safety').then((r) => r.data, () => [])]);
  // A pool shifted for a load balancer does not serve it.
  const active = shifts.filter((sh) => sh.status === 'active');
  const shiftFor = (lb, id) => active.find((sh) => sh.target.pool === id && (!(sh.load_balancers || []).length || sh.load_balancers.includes(lb.id)));
  const shiftedFor = (lb, id) => !!shiftFor(lb, id);
  const byID = new Map(ps.map((p) => [p.id, p]));
  const hs = new Map(await Promise.all(ps.map(async (p) => [p.id, (await call('GET', `/pools/${p.id}/health`)).data])));
  const maps = new Map(await Promise.all(lbs.filter((lb) => lb.enabled !== false && steered(policyName(lb)))
    .map(async (lb) => [lb.id, await mappings(lb, policyName(lb))])));
  const cards = lbs.map((lb) => {
    const order = poolOrder(lb);
    // A shifted pool was moved away on purpose: not a problem (red) but
    // a deliberate state (amber) with its reason.
    const up = (id) => byID.get(id)?.enabled !== false && hs.get(id)?.healthy !== false;
    const ok = (id) => up(id) && !shiftedFor(lb, id);
    const now = lb.default_pools.find(ok) || lb.fallback_pool;
    const policy = policyName(lb);
    const broken = safety.filter((h) => h.load_balancer === lb.id);
    const problem = broken.length > 0 || lb.enabled !== false && order.some((id) => !up(id) || (hs.get(id)?.origins || []).some((o) => o.healthy === false));
    const shiftedHere = order.map((id) => [id, shiftFor(lb, id)]).filter(([, sh]) => sh);
    const role = (id) => {
      if (lb.default_pools.includes(id)) return String(lb.default_pools.indexOf(id) + 1);
      if (id === lb.fallback_pool) return 'fallback';
      return 'mapped';
    };
    const rows = order.map((id) => {
      const p = byID.get(id), h = hs.get(id);
      const origins = (h?.origins || []).map((o) => el('li', { 'data-origin': o.name, 'data-healthy': String(o.healthy !== false), 'data-state': o.state || '' },
        `${o.name} (${shownAddress(o.address)}) `, health(o.healthy, o.state === 'not_checked'), o.reason ? ` ${o.reason}` : ''));
      return el('tr', { class: id === now ? 'answering' : null, 'data-pool': p?.name || id },
        el('td', { 'data-label': 'order', text: role(id) }),
        el('td', { 'data-label': 'pool' }, el('a', { href: `#pool/${id}`, text: p?.name || id })),
        el('td', { 'data-label': 'health' }, p?.enabled === false ? el('span', { class: 'down', text: 'disabled' }) : health(h?.healthy, !p?.monitor && !p?.monitors?.length),
          shiftedFor(lb, id) ? el('span', { class: 'shifted', text: ` shifted away (deliberate: ${shiftFor(lb, id).reason})` }) : '',
          id === now ? el('strong', { text: steered(policy) ? ' ← answering unmapped clients now' : ' ← answering now' }) : ''),
        el('td', { 'data-label': 'origins' }, el('ul', { class: 'plain' }, origins)));
    });
    return { problem, node: el('section', { class: 'card' + (problem ? ' problem' : shiftedHere.length ? ' deliberate' : ''), 'data-lb': lb.name, 'aria-label': lb.name },
      el('h2', { text: lb.name }),
      el('p', { class: 'muted', text: `steering ${policy}${policy === 'off' ? ' (default pools in order)' : ''}${lb.enabled === false ? ' · disabled' : ''}` }),
      problem ? el('p', { class: 'problem-text', text: `Problem: ${problemText(order, up, hs, byID)}` }) : '',
      shiftedHere.map(([id, sh]) => el('p', { class: 'shift-text', 'data-shifted': byID.get(id)?.name || id,
        text: `Shifted (deliberate): pool ${byID.get(id)?.name || id} is moved away, reason “${sh.reason}”, until ${new Date(sh.expires_at).toISOString().slice(0, 16).replace('T', ' ')} UTC` })),
      broken.map((h) => el('p', { class: 'problem-text', 'data-safety': h.rule, text: `Safety rule ${h.rule} no longer holds: ${h.message} (${h.minimum})` })),
      el('table', { class: 'stack' },
        el('thead', {}, el('tr', {}, ['order', 'pool', 'health', 'origins'].map((t) => el('th', { scope: 'col', text: t })))),
        el('tbody', {}, rows)),
      maps.get(lb.id)?.length ? el('div', { class: 'table-wrap' }, el('h3', { text: policy === 'geo' ? 'Where each mapping is answered from now' : 'Each region, answered from now' }),
        mappingTable(lb, policy, maps.get(lb.id), byID)) : '') };
  });
  cards.sort((a, b) => Number(b.problem) - Number(a.problem));
  let redraw = () => {};
  // Global rules (no load balancer of their own) above every card.
  const global = safety.filter((h) => !h.load_balancer).map((h) => el('p', { class: 'problem-text', 'data-safety': h.rule,
    text: `Global safety rule ${h.rule} no longer holds: ${h.message} (limit ${h.minimum}; load balancers ${(h.load_balancers || []).join(', ')})` }));
  // The load balancers (problems first) come before the shifts and their
  // form; an empty node leads with the guide to its first load balancer,
  // so that on a phone it is what the newcomer sees first.
  const nodes = [el('h2', { text: 'Load balancers', tabindex: '-1', class: 'page-title' }), ...global,
    ...(cards.length ? [] : [await firstSteps()]), ...cards.map((c) => c.node), shiftsCard(shifts, () => redraw(), ps, lbs)];
  const notice = takeFlash();
  if (notice) nodes.splice(1, 0, el('p', { class: 'notice', id: 'flash', role: 'status', text: notice }));
  return { nodes, key: JSON.stringify([lbs, ps, safety, shifts.map((sh) => [sh.id, sh.status, sh.revision]), [...hs].map(([id, h]) => [id, h.healthy, h.origins.map((o) => [o.name, o.address, o.healthy, o.reason, o.state])]), [...maps]]),
    refresh: () => 'rerender',
    bind: (draw) => { redraw = () => draw(() => overview(), null); tick(redraw); } };
}
