import { call, Problem } from './api.js';
import { el, when } from './dom.js';

// dnssecCard is a zone's DNSSEC state on its edit page: whether it signs,
// the DS records to hand to the parent zone, its keys, and the rollover,
// one step per click. Signing is turned on and off by the zone's own
// "Sign answers" field; this card only reads, except for the rollover,
// after which it redraws itself with note in its status line.
export async function dnssecCard(id, note = '') {
  const { data: d } = await call('GET', `/zones/${id}/dnssec`);
  const status = el('p', { id: 'dnssec-status', role: 'status', 'aria-live': 'polite', text: note });
  const force = el('input', { type: 'checkbox', id: 'dnssec-force' });
  const step = el('button', { type: 'button', id: 'dnssec-rollover', text: d.keys.length ? 'Take the next rollover step' : 'Make the first key' });
  step.addEventListener('click', async () => {
    status.className = '';
    status.textContent = 'Asking…';
    try {
      const { data: r } = await call('POST', `/zones/${id}/dnssec/rollover`, { force: force.checked });
      const fresh = await dnssecCard(id, `Done: the rollover is now at "${r.rollover.phase}".`);
      card.replaceWith(fresh);
      fresh.querySelector('#dnssec-rollover')?.focus();
    } catch (e) {
      if (!(e instanceof Problem)) throw e;
      status.textContent = `Not taken: ${e.message}`;
      status.className = 'error';
    }
  });
  const keys = d.keys.length ? el('div', { class: 'table-wrap' }, el('table', { class: 'stack', id: 'dnssec-keys' },
    el('thead', {}, el('tr', {}, ['tag', 'role', 'state', 'since', 'algorithm'].map((t) => el('th', { scope: 'col', text: t })))),
    el('tbody', {}, d.keys.map((k) => el('tr', { 'data-tag': String(k.tag), 'data-state': k.state },
      el('td', { 'data-label': 'tag', text: String(k.tag) }), el('td', { 'data-label': 'role', text: k.role }),
      el('td', { 'data-label': 'state', text: k.state }), el('td', { 'data-label': 'since', text: when(k.state_since) }),
      el('td', { 'data-label': 'algorithm', text: String(k.algorithm) }))))))
    : el('p', { class: 'muted', text: 'No keys yet.' });
  const card = el('section', { class: 'card', id: 'dnssec', 'aria-label': 'DNSSEC', 'data-signing': String(d.signing) },
    el('h2', { text: 'DNSSEC' }),
    el('p', { text: d.signing ? 'Signing: answers to queries with the DO bit carry signatures.'
      : d.enabled ? 'Enabled, not signing yet: no active key (the nodes make one; or make it below).'
        : 'Off: turn on "Sign answers (DNSSEC)" above and save to sign this zone.' }),
    d.ds.length ? el('div', {}, el('h3', { text: 'DS records for the parent zone' }),
      el('ul', { class: 'plain', id: 'dnssec-ds' }, d.ds.map((ds) => el('li', {}, el('code', { class: 'wrap', text: ds }))))) : '',
    keys,
    d.rollover ? el('p', { class: 'muted', id: 'dnssec-phase', text: `Rollover: ${d.rollover.phase}; the next step may be taken after ${when(d.rollover.next_step_after)}.` }) : '',
    d.enabled ? el('div', { class: 'actions' }, step, el('label', { class: 'inline' }, force, ' even before the TTLs have run out (force)')) : '',
    status);
  return card;
}
