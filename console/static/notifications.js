import { call } from './api.js';
import { el, field, showFieldErrors, when } from './dom.js';

const EVENTS = ['origin_health', 'pool_health', 'failover', 'shift', 'config', 'dnssec', 'node', 'rollout'];
// What each event is, in words; the identifier the API takes beside it.
const EVENT_WORDS = {
  origin_health: 'an origin goes down or comes back', pool_health: 'a pool goes down or comes back',
  failover: 'a load balancer answers from another pool', shift: 'a shift starts, ends or expires',
  config: 'the configuration changes', dnssec: 'a DNSSEC rollover step', node: 'a node joins or goes silent',
  rollout: 'a rollout steps, pauses, resumes, rolls back, is aborted or completes',
};
const DEFAULT_EVENTS = ['origin_health', 'pool_health', 'failover'];
const FORMATS = ['standard', 'slack', 'pagerduty'];

// host shows a receiver without its path: a Slack webhook's path is its
// credential.
function host(u) {
  try { const x = new URL(u); return x.protocol + '//' + x.host + (x.pathname.length > 1 ? '/…' : ''); } catch { return '(hidden)'; }
}

// notificationsPage: the subscriptions, a form to add one (its signing
// secret shown once), and for one subscription (#notifications/<id>) its
// delivery log and the test button.
export async function notificationsPage(arg) {
  if (arg) return deliveriesPage(arg);
  let subs;
  try {
    ({ data: subs } = await call('GET', '/notifications?per_page=1000'));
  } catch (e) {
    if (e.status !== 403) throw e;
    // A write token: subscriptions make every node send requests to a
    // URL, a privilege of its own.
    return { nodes: [el('h2', { text: 'Notifications', tabindex: '-1', class: 'page-title' }),
      el('p', { id: 'n-forbidden', class: 'error', role: 'alert', text: e.message + '. Subscriptions make every node send requests to their URL: reading and changing them needs a token with the integrations scope (or admin).' })],
    refresh: () => undefined };
  }
  const name = el('input', { type: 'text', autocomplete: 'off', placeholder: 'oncall' });
  const url = el('input', { type: 'url', autocomplete: 'off', placeholder: 'https://hooks.example.com/glb' });
  const format = el('select', {}, FORMATS.map((f) => el('option', { value: f, text: f })));
  const key = el('input', { type: 'password', autocomplete: 'off' });
  // A wrapper of its own: .field's display would override hidden, and
  // the key would show for the standard format.
  const keyField = el('div', { id: 'n-routing-key-row', hidden: true }, field('n-routing-key', 'PagerDuty routing key', key));
  const showKey = () => { keyField.hidden = format.value !== 'pagerduty'; };
  format.addEventListener('change', showKey);
  const boxes = EVENTS.map((e) => el('label', { class: 'check', for: 'n-ev-' + e },
    el('input', { type: 'checkbox', value: e, id: 'n-ev-' + e, checked: DEFAULT_EVENTS.includes(e), onchange: () => chosenText() }),
    ` ${EVENT_WORDS[e]} `, el('code', { class: 'muted', text: e })));
  // Which events will be sent, said in full, so that a default unticked
  // by a stray click is seen before adding.
  const chosen = el('p', { id: 'n-chosen', class: 'muted', role: 'status' });
  const chosenText = () => {
    const on = boxes.map((b) => b.querySelector('input')).filter((i) => i.checked).map((i) => i.value);
    chosen.textContent = on.length ? `Sent: ${on.length} event${on.length === 1 ? '' : 's'} (${on.join(', ')}).` : 'No event chosen: the subscription would receive nothing.';
  };
  chosenText();
  const rest = el('p', { id: 'n-form-error', class: 'error', role: 'alert' });
  const secret = el('div', { id: 'n-secret', role: 'status' });
  const form = el('form', { id: 'n-form', 'aria-label': 'Add a subscription', novalidate: true },
    el('div', { class: 'row' },
      el('div', {}, field('n-name', 'Name', name)),
      el('div', {}, field('n-url', 'URL', url)),
      el('div', {}, field('n-format', 'Format', format)),
      el('div', {}, keyField)),
    el('fieldset', { id: 'n-events', 'aria-describedby': 'n-events-error' }, el('legend', { text: 'Events (the first three ticked by default)' }), boxes,
      el('span', { class: 'field-error', id: 'n-events-error', role: 'alert' })), chosen,
    el('button', { type: 'submit', id: 'n-submit', text: 'Add subscription' }), rest, secret);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { name: name.value.trim(), url: url.value.trim(), format: format.value,
      events: boxes.map((b) => b.querySelector('input')).filter((i) => i.checked).map((i) => i.value) };
    if (format.value === 'pagerduty') body.routing_key = key.value;
    try {
      const { data } = await call('POST', '/notifications', body);
      // The form starts again for the next subscription.
      name.value = ''; url.value = ''; key.value = ''; format.value = 'standard'; showKey();
      for (const b of boxes) { const i = b.querySelector('input'); i.checked = DEFAULT_EVENTS.includes(i.value); }
      chosenText();
      showFieldErrors(form, [], () => null, rest);
      // The secret is in this page only: a redraw drops it.
      const copied = el('span', { id: 'n-copy-status', role: 'status', class: 'muted' });
      const copy = el('button', { type: 'button', id: 'n-copy-secret', text: 'Copy the secret', onclick: async () => {
        try { await navigator.clipboard.writeText(data.secret); copied.textContent = ' Copied.'; } catch { copied.textContent = ' The browser refused the clipboard: select the secret and copy it.'; }
      } });
      secret.replaceChildren(data.secret
        ? el('p', {}, `Signing secret of ${data.name}, shown this once: give it to the receiver now. `, el('code', { id: 'n-secret-value', text: data.secret }), ' ', copy, copied)
        : el('p', { text: `Subscription ${data.name} added.` }));
      tbody.prepend(row(data));
      empty.hidden = true;
    } catch (e) {
      const placed = showFieldErrors(form, e.body?.errors, (p) => p.startsWith('events') ? 'n-events' : p === 'routing_key' ? 'n-routing-key' : 'n-' + p, rest);
      if (!placed && !rest.textContent) rest.textContent = e.message;
    }
  });

  const row = (s) => el('tr', { 'data-notification': s.id, 'data-name': s.name },
    el('td', { 'data-label': 'name' }, el('a', { href: '#notifications/' + s.id, text: s.name })),
    el('td', { 'data-label': 'format', text: s.format }),
    el('td', { 'data-label': 'events', text: s.events.join(', ') }),
    el('td', { 'data-label': 'url', text: host(s.url) }),
    el('td', { 'data-label': 'actions' },
      el('button', { type: 'button', class: 'test', text: 'Send test', onclick: async (ev) => {
        ev.target.disabled = true;
        try { await call('POST', `/notifications/${s.id}/test`); location.hash = 'notifications/' + s.id; } catch (e) { rest.textContent = e.message; ev.target.disabled = false; }
      } }),
      ' ',
      el('button', { type: 'button', class: 'delete', text: 'Delete', onclick: async (ev) => {
        if (!confirm(`Delete subscription ${s.name} and its pending deliveries?`)) return;
        try { await call('DELETE', `/notifications/${s.id}`); ev.target.closest('tr').remove(); empty.hidden = tbody.rows.length > 0; } catch (e) { rest.textContent = e.message; }
      } })));
  const tbody = el('tbody', {}, subs.map(row));
  const empty = el('p', { id: 'n-empty', class: 'muted', hidden: subs.length > 0,
    text: 'No subscriptions yet: nothing is sent anywhere. Failovers, health changes and shifts are still in the audit log; add a subscription below to be told.' });
  return {
    nodes: [el('h2', { text: 'Notifications', tabindex: '-1', class: 'page-title' }),
      el('p', { text: 'Events sent to a URL as they happen: standard (signed JSON), Slack or PagerDuty. Secrets are shown once, when a subscription is added.' }),
      el('p', { class: 'muted', id: 'n-outbound', text: 'The nodes send only to public addresses: a receiver on a loopback, private, link-local or shared address is refused unless the nodes were started with --outbound-allow naming it.' }),
      el('table', { id: 'n-table', class: 'stack' },
        el('thead', {}, el('tr', {}, ['name', 'format', 'events', 'url', ''].map((t) => el('th', { scope: 'col', text: t })))), tbody),
      empty,
      el('h3', { text: 'Add a subscription' }), form],
    // The list changes only by this page's own hand: no redraw (it would
    // drop a secret being copied).
    refresh: () => undefined,
  };
}

async function deliveriesPage(id) {
  const [{ data: sub }, { data: log, info }] = await Promise.all([
    call('GET', `/notifications/${encodeURIComponent(id)}`),
    call('GET', `/notifications/${encodeURIComponent(id)}/deliveries?per_page=100`)]);
  const status = el('p', { id: 'd-status', role: 'status' });
  const rows = log.map((d) => el('tr', { 'data-seq': String(d.seq), 'data-status': d.status, 'data-type': d.event.type },
    el('td', { 'data-label': 'time' }, el('time', { datetime: d.event.time, text: when(d.event.time) })),
    el('td', { 'data-label': 'event', text: d.event.type }),
    el('td', { 'data-label': 'summary', text: d.event.data.summary }),
    el('td', { 'data-label': 'status', class: 'status ' + d.status, text: d.status }),
    el('td', { 'data-label': 'attempts', text: String(d.attempts) }),
    el('td', { 'data-label': 'last answer', text: (d.last_status_code ? String(d.last_status_code) : '') + (d.last_error ? ' ' + d.last_error : '') }),
    el('td', { 'data-label': 'next attempt' }, d.next_attempt_at ? el('time', { datetime: d.next_attempt_at, text: when(d.next_attempt_at) }) : '')));
  return {
    key: JSON.stringify(log.map((d) => [d.seq, d.status, d.attempts])),
    nodes: [el('h2', { text: `Deliveries to ${sub.name}`, tabindex: '-1', class: 'page-title' }),
      el('p', {}, el('a', { href: '#notifications', text: '← all subscriptions' }), ` ${sub.format}, ${sub.events.join(', ')}, ${host(sub.url)}`),
      el('button', { type: 'button', id: 'd-test', text: 'Send a test event', onclick: async (ev) => {
        ev.target.disabled = true;
        try { await call('POST', `/notifications/${sub.id}/test`); status.textContent = 'Test event queued.'; } catch (e) { status.textContent = e.message; }
        ev.target.disabled = false;
      } }), status,
      log.length ? el('table', { id: 'd-table', class: 'stack' },
        el('thead', {}, el('tr', {}, ['time', 'event', 'summary', 'status', 'attempts', 'last answer', 'next attempt'].map((t) => el('th', { scope: 'col', text: t })))),
        el('tbody', {}, rows)) : el('p', { id: 'd-empty', text: 'Nothing sent yet.' }),
      el('p', { id: 'd-count', text: `${info?.total_count ?? log.length} ${(info?.total_count ?? log.length) === 1 ? 'delivery' : 'deliveries'}, newest first.` })],
    // Attempts happen without any event of the stream: the page looks
    // again every 2 s while it is shown (a redraw of another page's
    // generation draws nothing).
    refresh: () => 'rerender',
    bind: (redraw) => setTimeout(() => redraw(() => deliveriesPage(id)), 2000),
  };
}
