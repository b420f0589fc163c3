import { call, list } from './api.js';
import { el, health, pct, bar, field, showFieldErrors } from './dom.js';

export async function lbPicker(id, label, selected) {
  const lbs = await list('load_balancers');
  const s = el('select', {}, lbs.map((lb) => el('option', { value: lb.id, text: lb.name, selected: lb.id === selected })));
  return { lbs, node: field(id, label, s), select: s };
}

// explainPage: pick a load balancer, type a client and an optional ECS
// subnet, and see the decision step by step.
// #explain?lb=<id or name>&client=<address>&ecs=<subnet>&type=AAAA fills
// the form and explains at once, so that a decision can be linked to.
export async function explainPage(arg = '') {
  const given = new URLSearchParams(arg);
  const lbs0 = given.get('lb');
  const pick = await lbPicker('x-lb', 'Load balancer');
  if (lbs0) pick.select.value = (pick.lbs.find((l) => l.id === lbs0 || l.name === lbs0) || {}).id || pick.select.value;
  const client = el('input', { type: 'text', value: given.get('client') || '198.51.100.7', required: true, autocomplete: 'off' });
  const ecs = el('input', { type: 'text', placeholder: 'e.g. 198.51.100.0/24', autocomplete: 'off', value: given.get('ecs') || '' });
  const type = el('select', {}, ['A', 'AAAA'].map((t) => el('option', { value: t, text: t, selected: (given.get('type') || 'A').toUpperCase() === t })));
  const link = el('a', { id: 'x-link', hidden: true, text: 'Link to this decision' });
  const out = el('div', { id: 'x-out', 'aria-live': 'polite' });
  const formError = el('p', { class: 'error', role: 'alert' });
  const form = el('form', { 'aria-label': 'Explain a decision', novalidate: true }, el('div', { class: 'row' },
    el('div', {}, pick.node),
    el('div', {}, field('x-client', 'Client address', client)),
    el('div', {}, field('x-ecs', 'ECS subnet (optional)', ecs)),
    el('div', {}, field('x-type', 'Query type', type)),
    el('div', {}, el('button', { type: 'submit', id: 'x-submit', text: 'Explain' }))), formError);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams({ client: client.value.trim(), type: type.value });
    if (ecs.value.trim()) q.set('ecs', ecs.value.trim());
    try {
      const { data } = await call('GET', `/load_balancers/${pick.select.value}/explain?${q}`);
      showFieldErrors(form, [], () => null, formError);
      out.replaceChildren(drawExplain(data));
      const deep = new URLSearchParams({ lb: pick.select.value, client: client.value.trim() });
      if (ecs.value.trim()) deep.set('ecs', ecs.value.trim());
      if (type.value !== 'A') deep.set('type', type.value);
      link.href = `#explain?${deep}`;
      link.hidden = false;
      // The address shows the decision, without a redraw.
      history.replaceState(null, '', link.href);
    } catch (e) {
      showFieldErrors(form, e.body?.errors, (p) => ({ client: 'x-client', ecs: 'x-ecs', type: 'x-type' })[p], formError);
      if (!e.body?.errors?.length) formError.textContent = e.message;
      out.replaceChildren();
    }
  });
  return {
    nodes: [el('h2', { text: 'Explain a decision', tabindex: '-1', class: 'page-title' }), form, el('p', {}, link), out],
    // A deep link explains once the form is on the page.
    bind() { if (given.get('client')) form.requestSubmit(); },
  };
}

function drawExplain(x) {
  const d = x.decision, c = d.client, a = d.zonal_affinity;
  const set = (n, v) => el('li', {}, el('strong', { text: n + ': ' }), el('span', { id: 'x-set-' + n, text: (v || []).join(', ') || '∅' }));
  // Safety rules a health change broke after a shift started: not
  // refused then, shown now.
  const safety = (d.safety || []).length ? el('p', { id: 'x-safety', class: 'problem-text' },
    el('strong', { text: 'Safety rule no longer holds: ' }), d.safety.map((h) => `${h.rule}: ${h.message} (${h.minimum})`).join('; ')) : '';
  return el('div', {}, safety, el('ol', { class: 'steps' },
    el('li', {}, el('strong', { text: 'Location. ' }), `Located by ${x.located_by}: `,
      el('span', { id: 'x-location', text: (c.known ? [c.zone && `zone ${c.zone}`, c.region && `region ${c.region}`, c.country, c.subdivision, c.continent].filter(Boolean).join(' · ') : 'unknown') + (c.asn ? ` · AS${c.asn}` : '') }),
      c.subnet ? ` (network ${c.subnet})` : '',
      (x.ignored || []).length ? el('ul', { id: 'x-ignored', class: 'ignored' }, x.ignored.map((i) => el('li', { 'data-what': i.what },
        el('strong', { text: `Ignored ${i.what === 'ecs' ? 'ECS' : 'location'}: ` }), i.reason))) : ''),
    el('li', {}, el('strong', { text: 'Candidate pools. ' }), el('table', { class: 'stack' },
      el('thead', {}, el('tr', {}, ['pool', 'from', 'health', 'healthy origins', 'why'].map((t) => el('th', { scope: 'col', text: t })))),
      el('tbody', {}, d.candidates.map((p) => el('tr', { class: p.chosen ? 'answering' : null },
        el('td', { 'data-label': 'pool', text: p.name + (p.chosen ? ' ✔' : '') }), el('td', { 'data-label': 'from', text: p.source }),
        el('td', { 'data-label': 'health' }, health(p.enabled && p.healthy)), el('td', { 'data-label': 'healthy origins', text: `${p.healthy_origins} / min ${p.minimum_origins}` }),
        el('td', { 'data-label': 'why', text: p.reason || '' })))))),
    d.measured ? el('li', { id: 'x-measured', 'data-level': d.measured.level }, el('strong', { text: 'Real user measurements. ' }),
      `Level ${d.measured.level}${d.measured.group ? ' ' + d.measured.group : ''}: ${d.measured.reason}`,
      d.measured.pools.length ? el('ul', {}, d.measured.pools.map((p) => el('li', { 'data-pool': p.pool,
        text: `${p.name}: median ${p.median_ms.toFixed(1)} ms, p75 ${p.p75_ms.toFixed(1)} ms, ${p.samples} samples${p.counted ? '' : ' (under min_samples)'}` }))) : '') : '',
    el('li', {}, el('strong', { text: 'Chosen pool: ' }), el('span', { id: 'x-pool', text: d.pool.name }), ` — ${d.pool.reason}`,
      d.pool.fallback ? ' (fallback)' : '', d.pool.fail_open ? ' (fail open)' : ''),
    el('li', {}, el('strong', { text: 'Zonal affinity. ' }), `${a.spillover}, client zone ${a.client_zone || 'none'}`,
      a.ratio !== undefined ? `, ratio |I|/|C| = ${a.ratio.toFixed(2)} (spillover ratio ${a.spillover_ratio})` : '',
      el('ul', {}, set('A', a.a), set('B', a.b), set('C', a.c), set('I', a.i), set('M', a.m)), el('p', { text: a.result }),
      el('dl', { class: 'legend', 'aria-label': 'What the sets are' },
        el('dt', { text: 'A' }), el('dd', { text: 'original eligible: the chosen pool\'s healthy, enabled origins of weight > 0' }),
        el('dt', { text: 'B' }), el('dd', { text: 'zonal-match test set: every configured origin of the chosen pool, healthy or not' }),
        el('dt', { text: 'C' }), el('dd', { text: 'zonal matched: the members of B in the client\'s zone (empty: no zonal match, M = A)' }),
        el('dt', { text: 'I' }), el('dd', { text: 'intersection A ∩ C: healthy origins in the client\'s zone' }),
        el('dt', { text: 'M' }), el('dd', { text: 'modified eligible: what the answer is drawn from, by the spillover setting' }))),
    el('li', {}, el('strong', { text: 'Weights as shares. ' }), `${d.origin_steering.policy}, ${d.origin_steering.family}`,
      el('ul', {}, d.origin_steering.eligible.map((w) => el('li', {}, `${w.name}: weight ${+w.weight.toFixed(4)}` +
        (w.configured_weight != null ? ` (${w.configured_weight} as configured, moved by its load ${w.load})` : w.load != null ? ` (load ${w.load})` : '') +
        ` → ${pct(w.share)} `, bar(w.share))),
      (d.origin_steering.overloaded || []).map((o) => el('li', { class: 'muted', text: `${o.name}: left out, its feeds report load ${o.load} (at or above by_load.high)` })))),
    el('li', {}, el('strong', { text: 'Records. ' }), el('ul', { id: 'x-records' }, d.records.map((r) => el('li', { text: `${r.type} ${r.value} (${r.origin})` }))),
      `TTL ${d.ttl}`),
    el('li', {}, el('strong', { text: 'ECS scope: ' }), el('span', { id: 'x-scope', text: String(d.ecs_scope) }),
      el('span', { id: 'x-scope-why', text: scopeNote(x, d) }))));
}

// scopeNote says why the ECS scope is what it is: a subnet the query
// carried but the decision set aside is not "no subnet".
function scopeNote(x, d) {
  if (!d.location_dependent) return ' (the same answer everywhere)';
  if (d.ecs_scope) return ` (the answer depends on the location; resolvers may reuse it within a /${d.ecs_scope})`;
  const ig = (x.ignored || []).find((i) => i.what === 'ecs');
  if (x.ecs && ig) {
    return ig.setting
      ? ` (the answer depends on the location, but the query's ECS subnet ${x.ecs} was not used (${ig.setting}, see above): the resolver's address located the client, and scope 0 lets resolvers reuse the answer for all their clients)`
      : ` (the answer depends on the location, but the query's ECS subnet ${x.ecs} opted out with source prefix 0, so no scope is echoed)`;
  }
  return ' (the answer depends on the location; the query carried no ECS subnet, so no scope is echoed)';
}
