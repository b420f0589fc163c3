import { call, list } from './api.js';
import { el, field, when, shownAddress } from './dom.js';

const KINDS = ['', 'zones', 'monitors', 'pools', 'load_balancers', 'networks', 'tokens', 'health'];
const PER_PAGE = 25;
// Members every write moves; a change lists what else moved.
const BOOKKEEPING = new Set(['revision', 'modified_on', 'created_on', 'serial']);

const show = (v) => v === undefined ? '(none)' : v === '' ? '(empty)' : typeof v === 'string' ? v : JSON.stringify(v);

// changes lists what differs between two versions of an object, member
// by member; arrays of named objects (a pool's origins) are matched by
// name, so an added or removed origin reads as such.
export function changes(before, after, path = '') {
  const out = [];
  const named = (a) => Array.isArray(a) && a.length > 0 && a.every((x) => x && typeof x === 'object' && typeof x.name === 'string');
  if (named(before) || named(after)) {
    const b = new Map((before || []).map((x) => [x.name, x])), a = new Map((after || []).map((x) => [x.name, x]));
    for (const [n, x] of a) {
      if (!b.has(n)) out.push(`${path} + ${n}${x.address ? ` (${shownAddress(x.address)})` : ''}`);
      else out.push(...changes(b.get(n), x, `${path}[${n}]`));
    }
    for (const n of b.keys()) if (!a.has(n)) out.push(`${path} − ${n}`);
    return out;
  }
  const obj = (v) => v && typeof v === 'object' && !Array.isArray(v);
  if (obj(before) && obj(after)) {
    for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (!path && BOOKKEEPING.has(k)) continue;
      out.push(...changes(before[k], after[k], path ? `${path}.${k}` : k));
    }
    return out;
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) out.push(`${path}: ${show(before)} → ${show(after)}`);
  return out;
}

// auditPage: the recent changes (who, what, when), newest first, with
// filters by kind and actor, paged.
export async function auditPage(arg) {
  const q = new URLSearchParams(arg || '');
  const page = Number(q.get('page') || 1);
  const kind = el('select', {}, KINDS.map((k) => el('option', { value: k, text: k || 'everything', selected: k === (q.get('kind') || '') })));
  const actor = el('input', { type: 'text', value: q.get('actor') || '', autocomplete: 'off', placeholder: 'e.g. ci' });
  const form = el('form', { id: 'a-filter', 'aria-label': 'Filter the audit log', novalidate: true }, el('div', { class: 'row' },
    el('div', {}, field('a-kind', 'Kind', kind)),
    el('div', {}, field('a-actor', 'Actor (token name)', actor)),
    el('div', {}, el('button', { type: 'submit', id: 'a-submit', text: 'Filter' }))));
  const go = (p) => {
    const n = new URLSearchParams();
    if (kind.value) n.set('kind', kind.value);
    if (actor.value.trim()) n.set('actor', actor.value.trim());
    if (p > 1) n.set('page', String(p));
    location.hash = 'audit' + (n.toString() ? '/' + n : '');
  };
  form.addEventListener('submit', (ev) => { ev.preventDefault(); go(1); });

  const api = new URLSearchParams({ page: String(page), per_page: String(PER_PAGE) });
  if (q.get('kind')) api.set('kind', q.get('kind'));
  if (q.get('actor')) api.set('actor', q.get('actor'));
  const [{ data: entries, info }, ps] = await Promise.all([call('GET', `/audit?${api}`), list('pools')]);
  const poolName = new Map(ps.map((p) => [p.id, p.name]));

  const rows = entries.map((e) => {
    let object = e.object_id, what;
    const after = e.after, before = e.before;
    if (e.kind === 'health') {
      const [pool, origin] = e.object_id.split('/');
      object = `${poolName.get(pool) || pool} / ${origin}`;
      what = after?.healthy ? 'up' : `down${after?.reason ? ': ' + after.reason : ''}`;
    } else if (e.kind === 'shifts') {
      // Its target and reason, not "ended_at: null → …" under an id.
      const sh = after || before || {}, t = sh.target || {};
      const target = t.pool ? `pool ${poolName.get(t.pool) || t.pool}` : t.origin ? `origin ${t.origin}` : `zone ${t.zone}`;
      object = `shift of ${target}`;
      const verb = { create: 'started', start: 'started', end: 'ended', expire: 'expired', delete: 'deleted' }[e.action] || e.action;
      what = `${verb}: ${target} shifted away, reason “${sh.reason || ''}”`;
    } else {
      const o = after || before || {};
      object = o.name || o.cidr || o.description || e.object_id;
      if (e.action === 'create') what = 'created';
      else if (e.action === 'delete') what = 'deleted';
      else {
        const list = changes(before, after);
        what = list.length ? el('ul', { class: 'plain changes' }, list.slice(0, 8).map((c) => el('li', { text: c })),
          list.length > 8 ? el('li', { text: `… and ${list.length - 8} more` }) : null) : 'no visible change';
      }
    }
    return el('tr', { 'data-audit': String(e.id), 'data-kind': e.kind, 'data-action': e.action },
      el('td', { 'data-label': 'when' }, el('time', { datetime: e.time, text: when(e.time) })),
      el('td', { 'data-label': 'who', class: 'actor', text: e.actor + (e.method ? ` (${e.method})` : '') }),
      el('td', { 'data-label': 'action', text: e.kind === 'health' ? 'health' : `${e.action} ${e.kind.replace(/s$/, '').replace('_', ' ')}` }),
      el('td', { 'data-label': 'object', class: 'object', text: object }),
      el('td', { 'data-label': 'change', class: 'what' }, what));
  });
  const pages = Math.max(1, info?.total_pages || 1);
  const pager = el('nav', { class: 'actions', 'aria-label': 'Audit log pages' },
    el('button', { type: 'button', id: 'a-newer', text: 'Newer', disabled: page <= 1, onclick: () => go(page - 1) }),
    el('span', { text: ` page ${page} of ${pages} (${info?.total_count ?? entries.length} entries) ` }),
    el('button', { type: 'button', id: 'a-older', text: 'Older', disabled: page >= pages, onclick: () => go(page + 1) }));
  const table = el('table', { id: 'a-table', class: 'stack' },
    el('thead', {}, el('tr', {}, ['when', 'who', 'action', 'object', 'change'].map((t) => el('th', { scope: 'col', text: t })))),
    el('tbody', {}, rows));
  return {
    key: JSON.stringify([arg, entries.map((e) => e.id), info]),
    nodes: [el('h2', { text: 'Audit log', tabindex: '-1', class: 'page-title' }), form,
      entries.length ? table : el('p', { text: 'No changes recorded that match.' }), pager],
    // The newest page follows the log; an older page stays put.
    refresh: () => (page === 1 ? 'rerender' : undefined),
  };
}
