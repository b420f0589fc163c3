// A load balancer's versions, on its page: every write that changed it, a
// pool it used or such a pool's monitor, newest first, each with a
// rollback behind a second click. The rollback writes that version's
// load balancer, pools and monitors back in one call, audited as such.
import { call, Problem } from './api.js';
import { el, when } from './dom.js';
import { changes as fieldChanges } from './audit.js';

const SHOWN = 20;
// done is the last rollback's message, shown once by the redrawn page.
let done = '';

function changes(v) {
  const what = v.changes.map((c) => `${c.action} ${c.kind.replace(/s$/, '').replace('_', ' ')} ${c.id}`).join(', ');
  return v.rollback_to ? `rollback to version ${v.rollback_to}: ${what}` : what;
}

// byKey indexes a version's objects (or the stored ones) by kind/id.
function byKey(o) {
  const m = new Map();
  if (o.load_balancer) m.set(`load_balancers/${o.load_balancer.id}`, o.load_balancer);
  for (const p of o.pools || []) m.set(`pools/${p.id}`, p);
  for (const x of o.monitors || []) m.set(`monitors/${x.id}`, x);
  return m;
}

// diffLines says, field by field, what differs between two sets of
// objects (kind/id → object), as the audit log words a change; keys
// limits the objects compared.
function diffLines(from, to, keys) {
  const out = [];
  for (const k of keys) {
    const a = from.get(k), b = to.get(k);
    const who = `${k.split('/')[0].replace(/s$/, '').replace('_', ' ')} ${(b || a)?.name || k.split('/')[1]}`;
    if (!a && b) { out.push(`${who}: created`); continue; }
    if (a && !b) { out.push(`${who}: deleted`); continue; }
    for (const c of fieldChanges(a, b)) out.push(`${who}: ${c}`);
  }
  return out;
}

const list = (lines, cls) => el('ul', { class: `plain changes ${cls}` }, lines.slice(0, 12).map((c) => el('li', { text: c })),
  lines.length > 12 ? el('li', { text: `… and ${lines.length - 12} more` }) : null);

// versionsCard shows the versions of load balancer id (named name).
export async function versionsCard(id, name) {
  const base = `/load_balancers/${encodeURIComponent(id)}/versions`;
  const { data: vs, info } = await call('GET', `${base}?per_page=${SHOWN}`);
  // Each version's objects, to say what each write changed (against the
  // version before it) and what a rollback would write (against now).
  const objs = new Map(await Promise.all(vs.map(async (v) => [v.version, byKey((await call('GET', `${base}/${v.version}`)).data)])));
  const before = async (n) => objs.get(n) || (n >= 1 ? byKey((await call('GET', `${base}/${n}`)).data) : new Map());
  const what = new Map(await Promise.all(vs.map(async (v) => [v.version,
    diffLines(await before(v.version - 1), objs.get(v.version), v.changes.map((c) => `${c.kind}/${c.id}`))])));
  const msg = el('p', { id: 'versions-status', role: 'status', 'aria-live': 'polite', text: done });
  done = '';
  const rows = vs.map((v, i) => {
    const cell = el('td');
    if (i > 0) {
      const sure = el('button', { type: 'button', class: 'danger rollback-confirm', hidden: true, text: `Yes, roll ${name} back to version ${v.version}` });
      const ask = el('button', { type: 'button', class: 'rollback', text: `Roll back to ${v.version}…`,
        'aria-label': `Roll back to version ${v.version}` });
      ask.addEventListener('click', async () => {
        msg.className = '';
        // The diff the rollback would apply: each object of the version
        // against the one stored now.
        const at = objs.get(v.version);
        const now = new Map();
        await Promise.all([...at.keys()].map(async (k) => {
          try { now.set(k, (await call('GET', `/${k}`)).data); } catch (e) { if (!(e instanceof Problem) || e.status !== 404) throw e; }
        }));
        const lines = diffLines(now, at, [...at.keys()]);
        msg.replaceChildren(`This writes ${name}, its pools and their monitors back as they were at version ${v.version}; pools it uses now but did not then are left as they are. `,
          lines.length ? el('span', {}, 'It would change:', list(lines, 'rollback-diff')) : el('span', { class: 'rollback-diff', text: 'Nothing would change: everything already stands as then.' }));
        sure.hidden = false;
        sure.focus();
      });
      sure.addEventListener('click', async () => {
        sure.disabled = true;
        try {
          // If-Match names the version seen, by its revision.
          const r = await call('POST', `/load_balancers/${encodeURIComponent(id)}/versions/${v.version}/rollback`, undefined, `"${v.revision}"`);
          done = r.data.changes.length
            ? `Rolled back to version ${v.version}: version ${r.data.version} wrote ${r.data.changes.map((c) => `${c.kind}/${c.id}`).join(', ')}.`
            : `Nothing to write: everything already stood as at version ${v.version}.`;
          window.dispatchEvent(new HashChangeEvent('hashchange'));
        } catch (e) {
          if (!(e instanceof Problem)) throw e;
          sure.disabled = false;
          const fields = (e.body.errors || []).map((fe) => `${fe.path}: ${fe.message}`);
          msg.textContent = `Not rolled back: ${e.message}${fields.length ? ` (${fields.join('; ')})` : ''}`;
          msg.className = 'error';
        }
      });
      cell.append(el('div', { class: 'actions' }, ask, sure));
    }
    return el('tr', { 'data-version': String(v.version) },
      el('td', { text: String(v.version) }), el('td', { text: when(v.time) }), el('td', { text: v.actor }),
      el('td', {}, changes(v), what.get(v.version)?.length ? list(what.get(v.version), 'version-diff') : ''), cell);
  });
  const more = info.total_count > SHOWN ? el('p', { class: 'muted', text: `The ${SHOWN} newest of ${info.total_count}; glbctl versions and the API list them all.` }) : '';
  return el('section', { class: 'card', id: 'versions', 'aria-label': 'Versions' },
    el('h2', { text: 'Versions' }),
    el('p', { class: 'muted hint', text: 'Every change to this load balancer, a pool it uses or a monitor of such a pool, from the audit log.' }),
    el('div', { class: 'table-wrap' }, el('table', { id: 'versions-table' },
      el('thead', {}, el('tr', {}, ['Version', 'Time', 'Actor', 'Changes', ''].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, rows))),
    more, msg);
}
