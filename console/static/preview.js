import { call, Problem } from './api.js';
import { el, pct, bar, field, showFieldErrors, when } from './dom.js';
import { lbPicker } from './explain.js';
import { poolOrder } from './overview.js';

export const REGIONS = ['WNAM', 'ENAM', 'WEU', 'EEU', 'NSAM', 'SSAM', 'OC', 'ME', 'NAF', 'SAF', 'SAS', 'SEAS', 'NEAS'];
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

// parseSample reads one client a line: a subnet (or a single address), a
// region code, or a two-letter country code. The API checks each.
export function parseSample(text) {
  return text.split('\n').map((s) => s.trim()).filter(Boolean).map((s) => {
    if (s.includes('/')) return { subnet: s };
    if (s.includes(':')) return { subnet: s + '/128' };
    if (IPV4.test(s)) return { subnet: s + '/32' };
    const u = s.toUpperCase();
    if (!REGIONS.includes(u) && /^[A-Z]{2}$/.test(u)) return { country: u };
    return { region: u };
  });
}

// sharesByKey flattens a Shares to "pool id" and "pool id/origin" → share.
function sharesByKey(sh) {
  const m = new Map();
  for (const p of sh?.pools || []) {
    m.set(p.id, p.share);
    for (const o of p.origins) m.set(`${p.id}/${o.name}`, o.share);
  }
  return m;
}

function shareCell(cls, v, after) {
  if (v === undefined) return el('td', { class: cls, 'data-label': after ? 'after edit' : 'now', text: '—' });
  return el('td', { class: cls, 'data-label': after ? 'after edit' : 'now' }, el('span', { class: 'num', text: pct(v) }), bar(v, after));
}

// previewPage: for a load balancer and a sample of clients (subnets,
// regions or countries), the share of answers each pool and origin gets
// now and after an unsaved edit of weights and enabled flags, both
// computed by the API's preview (the DNS path's decision).
export async function previewPage() {
  const pick = await lbPicker('p-lb', 'Load balancer');
  const sample = el('textarea', { rows: 6, spellcheck: 'false' });
  sample.value = ['198.51.100.0/24', '203.0.113.0/24', 'WEU', 'ENAM', 'JP'].join('\n');
  const type = el('select', {}, ['A', 'AAAA'].map((t) => el('option', { value: t, text: t })));
  const allRegions = el('button', { type: 'button', id: 'p-regions', text: 'Sample: all regions' });
  allRegions.addEventListener('click', () => { sample.value = REGIONS.join('\n'); sample.focus(); });
  // Real traffic: the queries every node sampled in the last hour stand
  // for the clients instead of the list.
  const real = el('input', { type: 'checkbox', id: 'p-real' });
  real.addEventListener('change', () => { sample.disabled = real.checked; allRegions.disabled = real.checked; });
  const out = el('div', { id: 'p-out', 'aria-live': 'polite' });
  const formError = el('p', { class: 'error', role: 'alert' });
  const form = el('form', { id: 'p-form', 'aria-label': 'Traffic preview', novalidate: true }, el('div', { class: 'row' },
    el('div', {}, pick.node),
    el('div', { class: 'grow' }, field('p-sample', 'Clients: subnets, regions (WEU) or countries (FR), one a line', sample), allRegions,
      el('label', { for: 'p-real', class: 'inline' }, real, ' Real traffic instead: the queries sampled in the last hour')),
    el('div', {}, field('p-type', 'Query type', type)),
    el('div', {}, el('button', { type: 'submit', id: 'p-submit', text: 'Preview' }))), formError);

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const clients = real.checked ? null : parseSample(sample.value);
    const lbID = pick.select.value;
    try {
      const [{ data: now }, { data: lb }, { data: shifts }] = await Promise.all([
        call('POST', `/load_balancers/${lbID}/preview`, { ...asked(clients), type: type.value }),
        call('GET', `/load_balancers/${lbID}`),
        call('GET', '/shifts?status=active&per_page=1000')]);
      const ps = await Promise.all(poolOrder(lb).map(async (id) => (await call('GET', `/pools/${id}`)).data));
      // The shifts in force for this load balancer: a pool at 0 % says a
      // shift is why, rather than look like an outage.
      const shifted = new Map(shifts.filter((sh) => sh.target.pool && (!(sh.load_balancers || []).length || sh.load_balancers.includes(lbID)))
        .map((sh) => [sh.target.pool, sh]));
      showFieldErrors(form, [], () => null, formError);
      out.replaceChildren(...editor(lbID, clients, type.value, now, ps, shifted));
    } catch (e) {
      if (!(e instanceof Problem)) throw e;
      const lines = sample.value.split('\n').map((s) => s.trim()).filter(Boolean);
      const errs = (e.body.errors || []).map((fe) => {
        const m = /^clients\[(\d+)\]/.exec(fe.path);
        return m ? { path: 'clients', message: `line ${Number(m[1]) + 1} (${lines[m[1]]}): ${fe.message}` } : fe;
      });
      const merged = [];
      for (const fe of errs) {
        const same = merged.find((x) => x.path === fe.path);
        if (same) same.message += '; ' + fe.message; else merged.push({ ...fe });
      }
      showFieldErrors(form, merged, (p) => ({ clients: 'p-sample', type: 'p-type' })[p], formError);
      if (!merged.length) formError.textContent = e.message;
      out.replaceChildren();
    }
  });
  return {
    nodes: [el('h2', { text: 'Traffic preview', tabindex: '-1', class: 'page-title' }), form, out],
    refresh: (name) => {
      if (name !== 'revision' || !out.firstChild) return;
      const n = document.getElementById('p-stale');
      if (n) n.hidden = false;
    },
  };
}

// asked is the sample part of a preview's body: the clients listed, or
// the real traffic when there is no list.
const asked = (clients) => (clients ? { clients } : { sample: 'real' });

// editor draws the shares now beside the shares after the unsaved edit,
// with the edit's controls in the same rows.
function editor(lbID, clients, qtype, now, ps, shifted = new Map()) {
  // edits: pool id → { enabled, weights: Map(origin → value), enabled: Map(origin → bool) }
  const edit = new Map(ps.map((p) => [p.id, { enabled: p.enabled, weight: new Map(), on: new Map() }]));
  let after = null;
  const nowShares = sharesByKey(now.now);
  const status = el('p', { id: 'p-edit-status', role: 'status', 'aria-live': 'polite' });
  const editError = el('p', { class: 'error', id: 'p-edit-error', role: 'alert' });

  function patches() {
    const pools = {};
    for (const p of ps) {
      const e = edit.get(p.id), patch = {};
      if (e.enabled !== p.enabled) patch.enabled = e.enabled;
      if (e.weight.size || e.on.size) {
        patch.origins = p.origins.map((o) => {
          const w = e.weight.get(o.name);
          return { ...o, weight: w === undefined ? o.weight : (w.trim() !== '' && !isNaN(Number(w)) ? Number(w) : w), enabled: e.on.get(o.name) ?? o.enabled };
        });
      }
      if (Object.keys(patch).length) pools[p.id] = patch;
    }
    return pools;
  }

  const tbody = el('tbody');
  function draw() {
    const afterShares = after ? sharesByKey(after) : null;
    const rows = [];
    const known = new Set(ps.map((p) => p.id));
    const extra = [...nowShares.keys(), ...(afterShares?.keys() || [])].filter((k) => !k.includes('/') && !known.has(k));
    ps.forEach((p, pi) => {
      const e = edit.get(p.id);
      const on = el('input', { type: 'checkbox', checked: e.enabled });
      on.addEventListener('change', () => { e.enabled = on.checked; update(); });
      rows.push(el('tr', { class: 'pool-row', 'data-pool': p.name },
        el('th', { scope: 'row', 'data-label': 'pool' }, `pool ${p.name}`,
          shifted.has(p.id) ? el('span', { class: 'shifted', 'data-shifted': 'true', text: ` shifted away (deliberate: “${shifted.get(p.id).reason}”): the shift is why it answers none` }) : ''),
        shareCell('now', nowShares.get(p.id) ?? 0, false), shareCell('after', afterShares ? (afterShares.get(p.id) ?? 0) : undefined, true),
        el('td', { 'data-label': 'edit' }, field(`pe${pi}`, `Pool ${p.name} enabled`, on, { short: 'pool enabled' }))));
      p.origins.forEach((o, oi) => {
        const k = `${p.id}/${o.name}`;
        const w = el('input', { type: 'text', inputmode: 'decimal', size: 5, value: e.weight.get(o.name) ?? String(o.weight), autocomplete: 'off' });
        w.addEventListener('change', () => { e.weight.set(o.name, w.value); update(); });
        const oon = el('input', { type: 'checkbox', checked: e.on.get(o.name) ?? o.enabled });
        oon.addEventListener('change', () => { e.on.set(o.name, oon.checked); update(); });
        rows.push(el('tr', { 'data-origin': `${p.name}/${o.name}` },
          el('td', { 'data-label': 'origin', class: 'origin-name', text: `${p.name} / ${o.name}` }),
          shareCell('now', nowShares.get(k) ?? 0, false), shareCell('after', afterShares ? (afterShares.get(k) ?? 0) : undefined, true),
          el('td', { 'data-label': 'edit', class: 'edit-cell' },
            field(`pw${pi}-${oi}`, `Weight of ${p.name} / ${o.name}`, w, { short: 'weight' }), field(`pn${pi}-${oi}`, `Enabled: ${p.name} / ${o.name}`, oon, { short: 'enabled' }))));
      });
    });
    for (const id of extra) rows.push(el('tr', { 'data-pool-id': id }, el('th', { scope: 'row', text: `pool ${id}` }),
      shareCell('now', nowShares.get(id) ?? 0, false), shareCell('after', afterShares ? (afterShares.get(id) ?? 0) : undefined, true), el('td')));
    const nr = [now.now.no_records, after?.no_records];
    if (nr[0] || nr[1]) rows.push(el('tr', { 'data-pool': '(no records)' }, el('th', { scope: 'row', text: `no ${qtype} record` }),
      shareCell('now', nr[0], false), shareCell('after', after ? nr[1] : undefined, true), el('td')));
    const focused = document.activeElement?.id;
    tbody.replaceChildren(...rows);
    if (focused) document.getElementById(focused)?.focus();
  }

  async function update() {
    const pools = patches();
    status.textContent = 'Computing…';
    if (!Object.keys(pools).length) {
      after = null;
      draw();
      showFieldErrors(editForm, [], () => null, editError);
      status.textContent = 'No unsaved edit.';
      return;
    }
    try {
      const { data } = await call('POST', `/load_balancers/${lbID}/preview`, { ...asked(clients), type: qtype, edits: { pools } });
      after = data.after;
      draw();
      showFieldErrors(editForm, [], () => null, editError);
      status.textContent = `${data.summary ? data.summary + '. ' : ''}The after column shows the unsaved edit. Nothing is saved.`;
    } catch (e) {
      if (!(e instanceof Problem)) throw e;
      showFieldErrors(editForm, e.body.errors, (path) => {
        const m = /^edits\.pools\.([^.]+)\.(?:origins\[(\d+)\]\.(weight|enabled)|(enabled))/.exec(path);
        if (!m) return null;
        const pi = ps.findIndex((p) => p.id === m[1]);
        if (m[4]) return `pe${pi}`;
        return m[3] === 'weight' ? `pw${pi}-${m[2]}` : `pn${pi}-${m[2]}`;
      }, editError);
      status.textContent = `The edit is not valid: ${e.message}`;
    }
  }

  const editForm = el('form', { id: 'p-edit', 'aria-label': 'Unsaved edit', novalidate: true },
    el('table', { id: 'p-table', class: 'stack' },
      el('thead', {}, el('tr', {}, ['pool / origin', 'share of answers now', 'after the unsaved edit', 'unsaved edit'].map((t) => el('th', { scope: 'col', text: t })))),
      tbody),
    editError,
    el('div', { class: 'actions' },
      el('button', { type: 'submit', id: 'p-apply', text: 'Preview the edit' }),
      el('button', { type: 'button', id: 'p-reset', text: 'Reset the edit', onclick: () => {
        for (const e of edit.values()) { e.weight.clear(); e.on.clear(); }
        for (const p of ps) edit.get(p.id).enabled = p.enabled;
        update();
      } })),
    status);
  editForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    // Enter in a weight field: take what is typed before computing.
    const a = document.activeElement;
    if (a && a.form === editForm && a.type === 'text') a.dispatchEvent(new Event('change'));
    else update();
  });
  draw();
  const place = (clients || []).filter((c) => !c.subnet).length;
  const smp = now.sample;
  const what = smp ? `${smp.queries.toLocaleString('en')} real ${now.type} queries sampled since ${when(smp.since)} from ${smp.subnets.toLocaleString('en')} subnets${smp.left ? ` (${smp.left.toLocaleString('en')} from rarer subnets left out)` : ''}`
    : `${now.clients} sample clients (${now.clients - place} subnets, ${place} regions or countries), ${now.type} questions`;
  return [
    el('p', { class: 'muted', id: 'p-summary', text: `${what}, revision ${now.revision}. Shares are of all answers; an origin's is the share of answers whose first record it is.` }),
    el('p', { id: 'p-stale', class: 'notice', hidden: true, text: 'The configuration changed since this preview: Preview again to see it.' }),
    editForm,
  ];
}
