import { call, Problem } from './api.js';
import { el, field, showFieldErrors, when } from './dom.js';

// left says how long until t, as an operator reads a countdown.
export function left(t, now = Date.now()) {
  let s = Math.max(0, Math.round((new Date(t) - now) / 1000));
  const d = Math.floor(s / 86400); s -= d * 86400;
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  return (d ? `${d}d ` : '') + (d || h ? `${h}h ` : '') + (d || h || m ? `${m}m ` : '') + `${s}s`;
}

// named shows a pool by its name where it has one other than its id.
const named = (pools, id) => {
  const p = pools.find((x) => x.id === id);
  return p && p.name && p.name !== id ? `${p.name} (${id})` : id;
};
const target = (sh, pools = []) => sh.target.pool ? `pool ${named(pools, sh.target.pool)}`
  : sh.target.origin ? `origin ${named(pools, sh.target.origin.split('/')[0])}/${sh.target.origin.split('/').slice(1).join('/')}`
    : `zone ${sh.target.zone}`;

// resolve turns what was typed (an id or a name) into an object's id, as
// glbctl does: an id wins, then a unique name; an ambiguous name is an
// error listing the ids. Unknown input is left for the API to refuse.
export function resolve(items, typed, nameOf = (x) => x.name) {
  if (items.some((x) => x.id === typed)) return { id: typed };
  const by = items.filter((x) => nameOf(x) === typed || nameOf(x) === typed.replace(/\.$/, ''));
  if (by.length > 1) return { error: `${by.length} are named ${typed}: use an id (${by.map((x) => x.id).join(', ')})` };
  return { id: by.length ? by[0].id : typed };
}

// The countdowns tick once a second in place, without redrawing the page;
// when one reaches its time, onDue redraws it (nothing is written when a
// shift expires, so no event would).
let ticker = null;
export function tick(onDue) {
  clearInterval(ticker);
  ticker = setInterval(() => {
    const cs = document.querySelectorAll('.countdown[data-at]');
    if (!cs.length) { clearInterval(ticker); return; }
    let due = false;
    for (const c of cs) {
      const ms = new Date(c.dataset.at) - Date.now();
      if (ms <= 0) due = true;
      c.textContent = `${c.dataset.what} in ${left(c.dataset.at)}`;
    }
    // Not under a form being filled in: the next tick tries again.
    const a = document.activeElement;
    if (due && !(a && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName))) { clearInterval(ticker); onDue(); }
  }, 1000);
}

// shiftsCard lists the active and scheduled shifts, each with a countdown
// to its start or expiry and a button that ends it, and a form that
// starts one. Pools and load balancers (pools, lbs) let the form take
// names as well as ids.
export function shiftsCard(shifts, redraw, pools = [], lbs = []) {
  const rows = shifts.map((sh) => {
    const scheduled = sh.status === 'scheduled';
    const at = scheduled ? sh.starts_at : sh.expires_at;
    const what = scheduled ? 'starts' : 'ends';
    const end = el('button', { type: 'button', class: 'end-shift', 'data-shift': sh.id, text: 'End now',
      'aria-label': `End the shift of ${target(sh, pools)} now` });
    end.addEventListener('click', async () => {
      end.disabled = true;
      try { await call('DELETE', `/shifts/${sh.id}`); redraw(); } catch (e) { end.disabled = false; end.after(el('span', { class: 'error', role: 'alert', text: ` ${e.message}` })); }
    });
    return el('tr', { 'data-shift': sh.id, 'data-status': sh.status },
      el('td', { 'data-label': 'target', text: target(sh, pools) }),
      el('td', { 'data-label': 'load balancers', text: (sh.load_balancers || []).map((id) => lbs.find((l) => l.id === id)?.name || id).join(', ') || 'all' }),
      el('td', { 'data-label': 'reason', text: sh.reason + ((sh.overridden || []).length ? ' (safety rules overridden)' : '') }),
      el('td', { 'data-label': 'until' }, el('span', { class: 'countdown', 'data-at': at, 'data-what': what, title: when(at), text: `${what} in ${left(at)}` })),
      el('td', { 'data-label': 'end' }, end));
  });
  const kind = el('select', {}, ['pool', 'origin', 'zone'].map((k) => el('option', { value: k, text: k })));
  const what = el('input', { type: 'text', autocomplete: 'off', placeholder: 'e.g. web-eu', required: true, list: 's-targets' });
  const targets = el('datalist', { id: 's-targets' }, pools.flatMap((p) => [
    el('option', { value: p.name || p.id }),
    ...(p.origins || []).map((o) => el('option', { value: `${p.name || p.id}/${o.name}` }))]));
  const lbNames = el('input', { type: 'text', autocomplete: 'off', placeholder: 'all' });
  const reason = el('input', { type: 'text', autocomplete: 'off', required: true });
  const duration = el('input', { type: 'text', autocomplete: 'off', value: '1h', required: true });
  const override = el('input', { type: 'checkbox', id: 's-override' });
  const status = el('p', { id: 's-status', role: 'status' });
  const form = el('form', { id: 's-form', 'aria-label': 'Start a shift', novalidate: true },
    el('div', { class: 'row' },
      el('div', {}, field('s-kind', 'Move traffic away from a', kind)),
      el('div', { class: 'grow' }, field('s-target', 'Target (pool, pool/origin or zone label)', what), targets),
      el('div', {}, field('s-lbs', 'Load balancers (names or ids, comma-separated)', lbNames)),
      el('div', { class: 'grow' }, field('s-reason', 'Reason', reason)),
      el('div', {}, field('s-duration', 'Duration (90s, 2h, 3d)', duration))),
    el('div', { class: 'actions' },
      el('label', { for: 's-override', class: 'inline' }, override, ' Override safety rules (admin)'),
      el('button', { type: 'submit', id: 's-submit', text: 'Start shift' })),
    status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.textContent = '';
    const wrong = [];
    let typed = what.value.trim();
    if (kind.value === 'pool' || kind.value === 'origin') {
      const [p, ...rest] = kind.value === 'origin' ? typed.split('/') : [typed];
      const r = resolve(pools, p);
      if (r.error) wrong.push({ path: 'target', message: r.error });
      typed = [r.id, ...rest].join('/');
    }
    const ids = lbNames.value.split(',').map((s) => s.trim()).filter(Boolean).map((n) => {
      const r = resolve(lbs, n);
      if (r.error) wrong.push({ path: 'load_balancers', message: r.error });
      return r.id;
    });
    if (wrong.length) {
      showFieldErrors(form, wrong, (p) => p === 'target' ? 's-target' : 's-lbs', status);
      status.className = 'error';
      return;
    }
    const body = { target: { [kind.value]: typed }, reason: reason.value, duration: duration.value.trim() };
    if (ids.length) body.load_balancers = ids;
    if (override.checked) body.override = true;
    try {
      await call('POST', '/shifts', body);
      showFieldErrors(form, [], () => null, null);
      redraw();
    } catch (e) {
      if (!(e instanceof Problem)) throw e;
      const slot = (p) => p.startsWith('target') ? 's-target' : p === 'reason' ? 's-reason' :
        p === 'duration' || p === 'expires_at' ? 's-duration' : p.startsWith('load_balancers') ? 's-lbs' : null;
      showFieldErrors(form, e.body.errors, slot, status);
      const harms = (e.body.safety || []).map((h) => `${h.rule} on ${h.name}: ${h.message}`);
      status.textContent = [e.message, ...harms, status.textContent].filter(Boolean).join(' — ');
      status.className = 'error';
    }
  });
  return el('section', { class: 'card', id: 'shifts', 'aria-label': 'Shifts' },
    el('h2', { text: 'Shifts' }),
    rows.length
      ? el('table', { class: 'stack', id: 's-table' },
        el('thead', {}, el('tr', {}, ['target', 'load balancers', 'reason', 'until', 'end'].map((t) => el('th', { scope: 'col', text: t })))),
        el('tbody', {}, rows))
      : el('p', { class: 'muted', text: 'No shift in force or scheduled.' }),
    form);
}
