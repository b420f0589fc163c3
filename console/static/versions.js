// A load balancer's versions, on its page: every write that changed it, a
// pool it used or such a pool's monitor, newest first, each with a
// rollback behind a second click. The rollback writes that version's
// load balancer, pools and monitors back in one call, audited as such.
import { call, Problem } from './api.js';
import { el, when } from './dom.js';

const SHOWN = 20;
// done is the last rollback's message, shown once by the redrawn page.
let done = '';

function changes(v) {
  const what = v.changes.map((c) => `${c.action} ${c.kind.replace(/s$/, '').replace('_', ' ')} ${c.id}`).join(', ');
  return v.rollback_to ? `rollback to version ${v.rollback_to}: ${what}` : what;
}

// versionsCard shows the versions of load balancer id (named name).
export async function versionsCard(id, name) {
  const { data: vs, info } = await call('GET', `/load_balancers/${encodeURIComponent(id)}/versions?per_page=${SHOWN}`);
  const msg = el('p', { id: 'versions-status', role: 'status', 'aria-live': 'polite', text: done });
  done = '';
  const rows = vs.map((v, i) => {
    const cell = el('td');
    if (i > 0) {
      const sure = el('button', { type: 'button', class: 'danger rollback-confirm', hidden: true, text: `Yes, roll ${name} back to version ${v.version}` });
      const ask = el('button', { type: 'button', class: 'rollback', text: `Roll back to ${v.version}…`,
        'aria-label': `Roll back to version ${v.version}` });
      ask.addEventListener('click', () => {
        sure.hidden = false;
        msg.className = '';
        msg.textContent = `This writes ${name}, its pools and their monitors back as they were at version ${v.version}; pools it uses now but did not then are left as they are.`;
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
      el('td', { text: changes(v) }), cell);
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
