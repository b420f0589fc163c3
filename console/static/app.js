import { call, list, follow, setToken, token, whenUnauthorized, Problem } from './api.js';

const main = document.getElementById('main');
const login = document.getElementById('login');

// el builds an element; text is set as text, never parsed as HTML.
function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k);
  return e;
}
const pct = (x) => (100 * x).toFixed(1) + '%';
const health = (h) => h === false ? el('span', { class: 'down', text: 'DOWN' }) : el('span', { class: 'up', text: 'up' });

whenUnauthorized(() => { login.hidden = false; document.getElementById('token').focus(); });
login.addEventListener('submit', (ev) => {
  ev.preventDefault();
  setToken(document.getElementById('token').value);
  login.hidden = true;
  route();
});

// Where the page is and what refreshes it on an event.
let refresh = () => {};
follow((name) => refresh(name), (s) => {
  document.getElementById('live').textContent = s === 'live' ? 'live' : 'polling (event stream down)';
});

async function show(render) {
  try {
    await render();
  } catch (e) {
    main.replaceChildren(el('p', { class: 'error', role: 'alert', text: e.message }));
  }
}

// ---------- Overview ----------
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

async function overview() {
  const [lbs, ps] = await Promise.all([list('load_balancers'), list('pools')]);
  const byID = new Map(ps.map((p) => [p.id, p]));
  const hs = new Map(await Promise.all(ps.map(async (p) => [p.id, (await call('GET', `/pools/${p.id}/health`)).data])));
  const cards = lbs.map((lb) => {
    const order = [...lb.default_pools];
    if (lb.fallback_pool && !order.includes(lb.fallback_pool)) order.push(lb.fallback_pool);
    const ok = (id) => byID.get(id)?.enabled !== false && hs.get(id)?.healthy !== false;
    const now = lb.default_pools.find(ok) || lb.fallback_pool;
    const problem = order.some((id) => !ok(id) || (hs.get(id)?.origins || []).some((o) => o.healthy === false));
    const rows = order.map((id, i) => {
      const p = byID.get(id), h = hs.get(id);
      const origins = (h?.origins || []).map((o) => el('li', { 'data-origin': o.name, 'data-healthy': String(o.healthy !== false) },
        `${o.name} (${o.address}) `, health(o.healthy), o.reason ? ` ${o.reason}` : ''));
      return el('tr', { class: id === now ? 'answering' : null, 'data-pool': p?.name || id },
        el('td', { text: id === lb.fallback_pool && !lb.default_pools.includes(id) ? 'fallback' : String(i + 1) }),
        el('td', {}, el('a', { href: `#pool/${id}`, text: p?.name || id })),
        el('td', {}, health(h?.healthy), id === now ? el('strong', { text: ' ← answering now' }) : ''),
        el('td', {}, el('ul', {}, origins)));
    });
    return { problem, node: el('section', { class: 'card' + (problem ? ' problem' : ''), 'data-lb': lb.name },
      el('h2', { text: lb.name }),
      el('p', { class: 'muted', text: `steering ${lb.steering_policy || 'off (failover order)'}${lb.enabled === false ? ' · disabled' : ''}` }),
      problem ? el('p', { class: 'problem-text', role: 'alert', text: `Problem: ${problemText(order, ok, hs, byID)}` }) : '',
      el('div', { class: 'table-wrap' }, el('table', {},
        el('thead', {}, el('tr', {}, el('th', { text: 'order' }), el('th', { text: 'pool' }), el('th', { text: 'health' }), el('th', { text: 'origins' }))),
        el('tbody', {}, rows)))) };
  });
  cards.sort((a, b) => Number(b.problem) - Number(a.problem));
  main.replaceChildren(el('h2', { text: 'Load balancers' }), ...cards.map((c) => c.node));
  if (!cards.length) main.append(el('p', { text: 'No load balancers yet.' }));
}

// ---------- Pool page (origins, health matrix, edits) ----------
async function poolPage(id) {
  const [{ data: pool, etag }, { data: h }] = await Promise.all([call('GET', `/pools/${id}`), call('GET', `/pools/${id}/health`)]);
  const nodes = [];
  for (const o of h.origins) for (const c of o.checks) if (!nodes.some((n) => n.node === c.node)) nodes.push({ node: c.node, region: c.region });
  const matrix = el('table', { id: 'matrix' },
    el('thead', {}, el('tr', {}, el('th', { text: 'origin' }), el('th', { text: 'agreed' }),
      nodes.map((n) => el('th', { text: `${n.node} (${n.region || 'no region'})` })))),
    el('tbody', {}, h.origins.map((o) => el('tr', { 'data-origin': o.name, 'data-healthy': String(o.healthy !== false) },
      el('th', { text: o.name }), el('td', {}, health(o.healthy), o.reason ? ` ${o.reason}` : ''),
      nodes.map((n) => {
        const c = o.checks.find((c) => c.node === n.node);
        if (!c) return el('td', { class: 'muted', text: 'not checked' });
        return el('td', {}, health(c.healthy), c.healthy ? ` ${c.rtt_ms.toFixed(1)} ms` : ` ${c.reason || ''}`);
      })))));
  const status = el('p', { id: 'pool-status', role: 'status', 'aria-live': 'polite' });
  const rows = pool.origins.map((o, i) => el('tr', { 'data-origin': o.name },
    el('th', { text: o.name }), el('td', { text: o.address }), el('td', { text: o.zone || '—' }),
    el('td', {}, el('label', { for: `w${i}`, class: 'sr', text: `Weight of ${o.name}` }),
      el('input', { id: `w${i}`, name: `origins[${i}].weight`, type: 'number', step: 'any', value: String(o.weight) }),
      el('span', { class: 'field-error', id: `e-origins[${i}].weight` })),
    el('td', {}, el('label', { for: `x${i}`, text: `Enabled: ${o.name}` }),
      el('input', { id: `x${i}`, name: `origins[${i}].enabled`, type: 'checkbox', checked: o.enabled }),
      el('span', { class: 'field-error', id: `e-origins[${i}].enabled` }))));
  const form = el('form', { id: 'edit', 'aria-label': 'Edit origins' },
    el('div', { class: 'table-wrap' }, el('table', {},
      el('thead', {}, el('tr', {}, ['origin', 'address', 'zone', 'weight', 'enabled'].map((t) => el('th', { text: t })))),
      el('tbody', {}, rows))),
    el('p', { class: 'field-error', id: 'e-origins' }),
    el('button', { type: 'submit', text: 'Save (If-Match ' + etag + ')' }), status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    for (const e of form.querySelectorAll('.field-error')) e.textContent = '';
    const origins = pool.origins.map((o, i) => ({ ...o,
      weight: Number(document.getElementById(`w${i}`).value), enabled: document.getElementById(`x${i}`).checked }));
    try {
      await call('PATCH', `/pools/${id}`, { origins }, etag);
      status.textContent = 'Saved.';
      route();
    } catch (e) {
      if (!(e instanceof Problem)) throw e;
      if (e.status === 412) {
        status.textContent = 'Conflict: someone changed this pool since you opened it (stale ETag ' + etag + '). Reload to see their change.';
        status.className = 'error';
        status.setAttribute('data-conflict', 'true');
        return;
      }
      for (const fe of e.body.errors || []) {
        const slot = document.getElementById('e-' + fe.path) || document.getElementById('e-origins');
        slot.textContent = ' ' + fe.message;
        slot.setAttribute('role', 'alert');
      }
      status.textContent = e.message;
      status.className = 'error';
    }
  });
  main.replaceChildren(el('h2', { text: `Pool ${pool.name}` }),
    el('p', { class: 'muted', text: `monitor ${pool.monitor || 'none'} · minimum origins ${pool.minimum_origins} · ${pool.enabled ? 'enabled' : 'disabled'} · ${h.healthy === false ? 'DOWN' : 'healthy'}` }),
    el('section', { class: 'card' }, el('h2', { text: 'Origins' }), form),
    el('section', { class: 'card' }, el('h2', { text: 'Health by checking node' }), el('div', { class: 'table-wrap' }, matrix)));
  // Live: an event redraws the matrix, not the form being edited.
  refresh = async () => {
    const { data: h2 } = await call('GET', `/pools/${id}/health`);
    if (JSON.stringify(h2.origins.map((o) => [o.healthy, o.checks.map((c) => c.healthy)])) !== JSON.stringify(h.origins.map((o) => [o.healthy, o.checks.map((c) => c.healthy)])) && !form.contains(document.activeElement)) poolPage(id);
  };
}

// ---------- Explain ----------
async function lbPicker(id) {
  const lbs = await list('load_balancers');
  return el('select', { id }, lbs.map((lb) => el('option', { value: lb.id, text: lb.name })));
}

async function explainPage() {
  const pick = await lbPicker('x-lb');
  const client = el('input', { id: 'x-client', value: '198.51.100.7', required: true });
  const ecs = el('input', { id: 'x-ecs', placeholder: 'e.g. 198.51.100.0/24' });
  const out = el('div', { id: 'x-out', 'aria-live': 'polite' });
  const form = el('form', { 'aria-label': 'Explain a decision' }, el('div', { class: 'row' },
    el('div', {}, el('label', { for: 'x-lb', text: 'Load balancer' }), pick),
    el('div', {}, el('label', { for: 'x-client', text: 'Client address' }), client),
    el('div', {}, el('label', { for: 'x-ecs', text: 'ECS subnet (optional)' }), ecs),
    el('div', {}, el('button', { type: 'submit', text: 'Explain' }))));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams({ client: client.value });
    if (ecs.value) q.set('ecs', ecs.value);
    try {
      const { data } = await call('GET', `/load_balancers/${pick.value}/explain?${q}`);
      out.replaceChildren(drawExplain(data));
    } catch (e) {
      out.replaceChildren(el('p', { class: 'error', role: 'alert', text: e.message + ' ' + (e.body?.errors || []).map((f) => `${f.path}: ${f.message}`).join('; ') }));
    }
  });
  main.replaceChildren(el('h2', { text: 'Explain a decision' }), form, out);
  refresh = () => {};
}

function drawExplain(x) {
  const d = x.decision, c = d.client, a = d.zonal_affinity;
  const set = (n, v) => el('li', {}, el('strong', { text: n + ': ' }), el('span', { id: 'x-set-' + n, text: (v || []).join(', ') || '∅' }));
  return el('ol', { class: 'steps' },
    el('li', {}, el('strong', { text: 'Location. ' }), `Located by ${x.located_by}: `,
      el('span', { id: 'x-location', text: c.known ? [c.zone && `zone ${c.zone}`, c.region && `region ${c.region}`, c.country, c.subdivision, c.continent].filter(Boolean).join(' · ') : 'unknown' }),
      c.subnet ? ` (network ${c.subnet})` : ''),
    el('li', {}, el('strong', { text: 'Candidate pools. ' }), el('div', { class: 'table-wrap' }, el('table', {},
      el('thead', {}, el('tr', {}, ['pool', 'from', 'health', 'healthy origins', 'why'].map((t) => el('th', { text: t })))),
      el('tbody', {}, d.candidates.map((p) => el('tr', { class: p.chosen ? 'answering' : null },
        el('td', { text: p.name + (p.chosen ? ' ✔' : '') }), el('td', { text: p.source }),
        el('td', {}, health(p.enabled && p.healthy)), el('td', { text: `${p.healthy_origins} / min ${p.minimum_origins}` }),
        el('td', { text: p.reason || '' }))))))),
    el('li', {}, el('strong', { text: 'Chosen pool: ' }), el('span', { id: 'x-pool', text: d.pool.name }), ` — ${d.pool.reason}`,
      d.pool.fallback ? ' (fallback)' : '', d.pool.fail_open ? ' (fail open)' : ''),
    el('li', {}, el('strong', { text: 'Zonal affinity. ' }), `${a.spillover}, client zone ${a.client_zone || 'none'}`,
      a.ratio !== undefined ? `, ratio |I|/|C| = ${a.ratio.toFixed(2)} (spillover ratio ${a.spillover_ratio})` : '',
      el('ul', {}, set('A', a.a), set('B', a.b), set('C', a.c), set('I', a.i), set('M', a.m)), el('p', { text: a.result })),
    el('li', {}, el('strong', { text: 'Weights as shares. ' }), `${d.origin_steering.policy}, ${d.origin_steering.family}`,
      el('ul', {}, d.origin_steering.eligible.map((w) => el('li', {}, `${w.name}: weight ${w.weight} → ${pct(w.share)} `, bar(w.share))))),
    el('li', {}, el('strong', { text: 'Records. ' }), el('ul', { id: 'x-records' }, d.records.map((r) => el('li', { text: `${r.type} ${r.value} (${r.origin})` }))),
      `TTL ${d.ttl}`),
    el('li', {}, el('strong', { text: 'ECS scope: ' }), el('span', { id: 'x-scope', text: String(d.ecs_scope) }),
      !d.location_dependent ? ' (the same answer everywhere)'
        : d.ecs_scope ? ` (the answer depends on the location; resolvers may reuse it within a /${d.ecs_scope})`
          : ' (the answer depends on the location; the query carried no ECS subnet, so no scope is echoed)'));
}

function bar(share, after) {
  const b = el('span', { class: 'bar' + (after ? ' after' : ''), 'aria-hidden': 'true' });
  b.style.width = `calc(${share} * var(--bar-max))`;
  return b;
}

// ---------- Traffic preview ----------
// For a sample of client subnets, the share of answers each pool and
// origin gets now (the explain endpoint per subnet) and after an unsaved
// weight edit (the same decisions, the origins' shares recomputed from
// the edited weights: pool choice does not depend on weights).
async function previewPage() {
  const pick = await lbPicker('p-lb');
  const sample = el('textarea', { id: 'p-sample', rows: 5 });
  sample.value = ['198.51.100.0/24', '203.0.113.0/24', '192.0.2.0/24', '2001:db8::/48'].join('\n');
  const out = el('div', { id: 'p-out', 'aria-live': 'polite' });
  const form = el('form', { 'aria-label': 'Traffic preview' }, el('div', { class: 'row' },
    el('div', {}, el('label', { for: 'p-lb', text: 'Load balancer' }), pick),
    el('div', {}, el('label', { for: 'p-sample', text: 'Client subnets, one a line' }), sample),
    el('div', {}, el('button', { type: 'submit', text: 'Preview' }))));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const subnets = sample.value.split('\n').map((s) => s.trim()).filter(Boolean);
    const traces = await Promise.all(subnets.map(async (s) => {
      const addr = s.split('/')[0];
      const q = new URLSearchParams({ client: addr, ecs: s });
      if (addr.includes(':')) q.set('type', 'AAAA');
      return (await call('GET', `/load_balancers/${pick.value}/explain?${q}`)).data.decision;
    }));
    drawPreview(out, traces);
  });
  main.replaceChildren(el('h2', { text: 'Traffic preview' }), form, out);
  refresh = () => {};
}

function drawPreview(out, traces) {
  const n = traces.length;
  const edits = new Map(); // "pool/origin" → weight
  const weights = new Map();
  for (const d of traces) for (const w of d.origin_steering.eligible) weights.set(`${d.pool.name}/${w.name}`, w.weight);
  const shares = (edited) => {
    const pools = new Map(), origins = new Map(), answered = new Map();
    for (const d of traces) {
      pools.set(d.pool.name, (pools.get(d.pool.name) || 0) + 1 / n);
      // A pool with no origin of the family asked for answers no records.
      if (d.origin_steering.eligible.length) answered.set(d.pool.name, (answered.get(d.pool.name) || 0) + 1 / n);
      const el2 = d.origin_steering.eligible.map((w) => ({ name: w.name, w: edited ? (edits.get(`${d.pool.name}/${w.name}`) ?? w.weight) : w.weight, share: w.share }));
      const sum = el2.reduce((s, w) => s + w.w, 0);
      for (const w of el2) {
        const k = `${d.pool.name}/${w.name}`;
        const s = edited ? (sum > 0 ? w.w / sum : 0) : w.share;
        origins.set(k, (origins.get(k) || 0) + s / n);
      }
    }
    // An origin's share is within its pool; the pool's, of all answers.
    for (const [k, v] of origins) origins.set(k, v / answered.get(k.slice(0, k.indexOf('/'))));
    return { pools, origins };
  };
  const table = () => {
    const now = shares(false), after = shares(true);
    return el('div', { class: 'table-wrap' }, el('table', { id: 'p-table' },
      el('thead', {}, el('tr', {}, ['pool / origin', 'share now', 'after edit', 'weight (unsaved edit)'].map((t) => el('th', { text: t })))),
      el('tbody', {},
        [...now.pools].map(([p, s]) => el('tr', { 'data-pool': p }, el('th', { text: `pool ${p}` }),
          el('td', { class: 'now', text: pct(s) }, bar(s)), el('td', { class: 'after', text: pct(after.pools.get(p) || 0) }, bar(after.pools.get(p) || 0, true)), el('td'))),
        [...now.origins].map(([k, s], i) => {
          const input = el('input', { id: `pw${i}`, type: 'number', step: 'any', min: '0', value: String(edits.get(k) ?? weights.get(k)) });
          input.addEventListener('change', () => { edits.set(k, Number(input.value)); redraw(`pw${i}`); });
          return el('tr', { 'data-origin': k }, el('td', { text: k }),
            el('td', { class: 'now', text: pct(s) }, bar(s)),
            el('td', { class: 'after', text: pct(after.origins.get(k) || 0) }, bar(after.origins.get(k) || 0, true)),
            el('td', {}, el('label', { for: `pw${i}`, text: `Weight of ${k}` }), input));
        }))));
  };
  const redraw = (focus) => {
    out.replaceChildren(el('p', { class: 'muted', text: `${n} sample clients. A pool's share is of all answers, an origin's of its pool's answers. The edit is not saved.` }), table());
    if (focus) document.getElementById(focus)?.focus();
  };
  redraw();
}

// ---------- Routing ----------
function route() {
  const [page, arg] = location.hash.slice(1).split('/');
  refresh = () => {};
  switch (page) {
    case 'pool': return show(() => poolPage(arg));
    case 'explain': return show(explainPage);
    case 'preview': return show(previewPage);
    default: return show(async () => { await overview(); refresh = () => show(overview); });
  }
}
window.addEventListener('hashchange', route);
route();
