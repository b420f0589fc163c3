import { call, list, Problem } from './api.js';
import { el, field, showFieldErrors, when } from './dom.js';

// The record types a grant may name, as pools.TSIGUpdateTypes lists them.
const TYPES = ['A', 'AAAA', 'CNAME', 'TXT', 'MX', 'CAA', 'NS', 'DS', 'SRV', 'SVCB', 'HTTPS'];
const MATCHES = [
  ['acme-challenge', '_acme-challenge.<name> (ACME)'],
  ['exact', 'the name itself'],
  ['subtree', 'the name and below'],
];
// Sample data for the nsupdate example, by type.
const SAMPLE = {
  A: '192.0.2.1', AAAA: '2001:db8::1', CNAME: 'target.example.net.', TXT: '"token"', MX: '10 mail.example.net.',
  CAA: '0 issue "letsencrypt.org"', NS: 'ns1.example.net.', DS: '12345 13 2 <digest>', SRV: '10 5 443 target.example.net.',
  SVCB: '1 . alpn=h2', HTTPS: '1 . alpn=h2',
};


const owner = (g) => g.match === 'acme-challenge' ? `_acme-challenge.${g.name}` : g.name;

// dnsServer is where this node's fleet answers DNS, as nsupdate's server
// line takes it ("HOST [PORT]"): the zone's nameserver names often do not
// resolve yet in a set-up being tried, a listener's address does. A
// serving node listening on the host this page came from is preferred; a
// wildcard listener is reached at that host. null: no node reports one.
export function dnsServer(nodes, pageHost) {
  const addrs = nodes.filter((n) => n.state === 'serving').flatMap((n) => n.listeners?.udp || []);
  const split = (a) => {
    const i = a.lastIndexOf(':');
    let host = i < 0 ? a : a.slice(0, i);
    const port = i < 0 ? '53' : a.slice(i + 1);
    host = host.replace(/^\[|\]$/g, '');
    if (host === '' || host === '0.0.0.0' || host === '::') host = pageHost.replace(/^\[|\]$/g, '');
    return { host, port };
  };
  const all = addrs.map(split);
  const pick = all.find((a) => a.host === pageHost.replace(/^\[|\]$/g, '')) || all[0];
  if (!pick) return null;
  return pick.port === '53' ? pick.host : `${pick.host} ${pick.port}`;
}

// nsupdateCommand is a command line that adds a record the key's first
// grant allows, sent to server (dnsServer's), else to the zone's first
// nameserver.
export function nsupdateCommand(key, secret, zones, server) {
  const g = key.grants[0];
  const z = zones.find((x) => x.id === g.zone);
  const type = g.types.includes('TXT') ? 'TXT' : g.types[0];
  return [
    `nsupdate -y ${key.algorithm}:${key.name}:${secret} <<'EOF'`,
    `server ${server || z?.nameservers?.[0] || '<a glb nameserver>'}`,
    `zone ${z?.name || g.zone}`,
    `update add ${owner(g)} 60 ${type} ${SAMPLE[type]}`,
    'send',
    'EOF',
  ].join('\n');
}

// copyButton copies the text of the element with id target, and says
// whether it could (a browser may refuse the clipboard to a page).
function copyButton(id, target, what) {
  const said = el('span', { id: id + '-status', role: 'status', class: 'muted' });
  const b = el('button', { type: 'button', id, text: `Copy ${what}` });
  b.addEventListener('click', async () => {
    const t = document.getElementById(target);
    const text = t.value ?? t.textContent;
    try {
      await navigator.clipboard.writeText(text);
      said.textContent = ` Copied ${what}.`;
    } catch {
      if (t.select) t.select();
      said.textContent = ` The browser refused the clipboard: ${t.select ? 'the text is selected, press Ctrl+C' : 'select it and press Ctrl+C'}.`;
    }
  });
  return [b, said];
}

// secretCard shows a new key's secret; done redraws the page once the
// card is closed, when the keys changed while it was open.
function secretCard(shown, zones, server, done) {
  const { key, secret } = shown;
  const cmd = nsupdateCommand(key, secret, zones, server);
  return el('section', { class: 'card secret', id: 'k-secret', 'aria-labelledby': 'k-secret-title' },
    el('h2', { id: 'k-secret-title', tabindex: '-1', text: `Secret of key ${key.name}: copy it now` }),
    el('p', { class: 'notice', text: 'glb shows this secret once. Leave or reload this page and it is gone: a lost secret means a new key.' }),
    el('div', { class: 'form-row' }, field('k-secret-value', `Secret (${key.algorithm}, base64)`,
      el('input', { type: 'text', readonly: true, value: secret, spellcheck: 'false', autocomplete: 'off', class: 'mono' }))),
    el('div', { class: 'actions' }, copyButton('k-copy-secret', 'k-secret-value', 'secret')),
    el('p', {}, 'An update with this key, as nsupdate (bind9-dnsutils) sends it:'),
    el('pre', { id: 'k-nsupdate', class: 'command', tabindex: '0', 'aria-label': 'nsupdate command', text: cmd }),
    el('div', { class: 'actions' }, copyButton('k-copy-command', 'k-nsupdate', 'command'),
      el('button', { type: 'button', id: 'k-done', text: 'I have copied it', onclick: (ev) => {
        const card = ev.target.closest('section');
        const stale = card.querySelector('#k-stale');
        card.remove();
        if (stale) done();
      } })));
}

// grantRow is the editor of one grant; remove drops it from the form.
function grantRow(i, zones, remove) {
  const p = `k-g${i}`;
  const zone = el('select', {}, zones.map((z) => el('option', { value: z.id, text: z.name })));
  const name = el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'www.glb.example.com', required: true });
  const match = el('select', {}, MATCHES.map(([v, t]) => el('option', { value: v, text: t })));
  const boxes = TYPES.map((t) => el('label', { class: 'inline type' },
    el('input', { type: 'checkbox', value: t, checked: t === 'TXT', 'data-type': t }), ` ${t} `));
  const types = el('fieldset', { id: `${p}-types`, class: 'types', 'aria-describedby': `${p}-types-error` },
    el('legend', { text: 'Record types it may change' }), boxes,
    el('span', { class: 'field-error', id: `${p}-types-error`, role: 'alert' }));
  const row = el('fieldset', { class: 'group grant', 'data-grant': String(i) },
    el('legend', { text: `Grant ${i + 1}` }),
    el('div', { class: 'row' },
      el('div', {}, field(`${p}-zone`, 'Zone', zone)),
      el('div', { class: 'grow' }, field(`${p}-name`, 'Name (inside the zone)', name)),
      el('div', {}, field(`${p}-match`, 'Matches', match))),
    types,
    el('div', { class: 'actions' }, el('button', { type: 'button', class: 'remove-grant', text: `Remove grant ${i + 1}`, onclick: () => remove(row) })));
  row.grant = () => ({ zone: zone.value, name: name.value.trim(), match: match.value,
    types: boxes.map((b) => b.querySelector('input')).filter((c) => c.checked).map((c) => c.value) });
  return row;
}

function createForm(zones, redraw) {
  const name = el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'acme', required: true });
  const alg = el('select', {}, ['hmac-sha256', 'hmac-sha512'].map((a) => el('option', { value: a, text: a })));
  const grants = el('div', { id: 'k-grants-list' });
  const grantsError = el('p', { class: 'field-error', id: 'k-grants-error', role: 'alert' });
  const status = el('p', { id: 'k-status', role: 'status' });
  let n = 0;
  const rows = () => [...grants.querySelectorAll('fieldset.grant')];
  const add = () => {
    grants.append(grantRow(n++, zones, (row) => { row.remove(); }));
  };
  add();
  const form = el('form', { id: 'k-form', 'aria-label': 'New TSIG key', novalidate: true },
    el('div', { class: 'row' },
      el('div', { class: 'grow' }, field('k-name', 'Key name (as clients sign with it)', name)),
      el('div', {}, field('k-alg', 'Algorithm', alg))),
    grants, grantsError,
    el('div', { class: 'actions' },
      el('button', { type: 'button', id: 'k-add-grant', text: 'Add a grant', onclick: add }),
      el('button', { type: 'submit', id: 'k-submit', text: 'Create key' })),
    status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { name: name.value.trim(), algorithm: alg.value, grants: rows().map((r) => r.grant()) };
    status.textContent = '';
    status.className = '';
    try {
      const { data } = await call('POST', '/tsig_keys', body);
      const { secret, ...key } = data;
      redraw({ revealed: { key, secret } }, 'secret');
    } catch (e) {
      if (!(e instanceof Problem)) throw e;
      // grants[i] is the i-th row on screen, whatever its legend says.
      const ids = rows().map((r) => `k-g${r.dataset.grant}`);
      const slot = (p) => {
        if (p === 'name') return 'k-name';
        if (p === 'algorithm') return 'k-alg';
        if (p === 'grants') return 'k-grants';
        const m = /^grants\[(\d+)\]\.(zone|name|match|types)/.exec(p);
        return m && ids[Number(m[1])] ? `${ids[Number(m[1])]}-${m[2]}` : null;
      };
      showFieldErrors(form, e.body.errors, slot, status);
      status.textContent = [e.status === 409 ? `A key named ${body.name} exists already.` : e.message, status.textContent].filter(Boolean).join(' — ');
      status.className = 'error';
    }
  });
  return form;
}

function keyRow(k, zones, redraw) {
  const zoneName = (id) => zones.find((z) => z.id === id)?.name || id;
  const grants = k.grants.map((g) => el('li', { text: `${g.types.join(', ')} at ${owner(g)}${g.match === 'subtree' ? ' and below' : ''} (zone ${zoneName(g.zone)})` }));
  const msg = el('span', { role: 'status', class: 'delete-status' });
  const confirm = el('button', { type: 'button', class: 'danger delete-confirm', hidden: true, text: `Yes, delete key ${k.name}` });
  const ask = el('button', { type: 'button', class: 'delete', text: 'Delete…', 'aria-label': `Delete key ${k.name}` });
  ask.addEventListener('click', () => { confirm.hidden = false; msg.textContent = ' Updates signed with it will be refused (BADKEY).'; confirm.focus(); });
  confirm.addEventListener('click', async () => {
    confirm.disabled = true;
    try {
      await call('DELETE', `/tsig_keys/${encodeURIComponent(k.name)}`);
      redraw({ flash: `Deleted key ${k.name}: updates signed with it are refused from now on.` }, 'title');
    } catch (e) {
      confirm.disabled = false;
      msg.textContent = ` Not deleted: ${e.message}`;
      msg.className = 'error';
    }
  });
  return el('tr', { 'data-key': k.name },
    el('td', { 'data-label': 'name', class: 'mono', text: k.name }),
    el('td', { 'data-label': 'algorithm', text: k.algorithm }),
    el('td', { 'data-label': 'may change' }, el('ul', { class: 'plain' }, grants)),
    el('td', { 'data-label': 'created' }, el('time', { datetime: k.created_on, text: when(k.created_on) })),
    el('td', { 'data-label': 'delete' }, ask, confirm, msg));
}

// tsigPage lists the TSIG keys with which DNS UPDATE messages are signed,
// creates one (its secret shown once, with an nsupdate command that uses
// it) and deletes them. Keys are an admin's business: another token is
// told so. state is what only the drawing after an action shows: the
// secret of a key just created (the API never shows it again) or a
// notice; a drawing for any other reason has neither.
export async function tsigPage(state = {}) {
  const title = el('h2', { text: 'TSIG keys', tabindex: '-1', class: 'page-title' });
  let keys;
  try {
    keys = await list('tsig_keys');
  } catch (e) {
    if (e.status !== 403) throw e;
    return { nodes: [title, el('p', { class: 'error', role: 'alert', text: 'Managing TSIG keys needs an admin token (the API answered 403).' })] };
  }
  const zones = await list('zones');
  const { revealed: shown, flash: notice } = state;
  let redraw = () => {};
  const nodes = [title];
  if (shown) {
    // The node list is a nicety for the sample: without it the sample
    // names the zone's nameserver.
    const fleet = await call('GET', '/nodes').then((r) => r.data, () => []);
    nodes.push(secretCard(shown, zones, dnsServer(fleet, location.hostname), () => redraw({}, null)));
  }
  if (notice) nodes.push(el('p', { class: 'notice', id: 'k-flash', role: 'status', text: notice }));
  nodes.push(el('p', { class: 'muted', text: 'A TSIG key signs DNS UPDATE messages (RFC 2136) from tools such as certbot, lego, cert-manager or ExternalDNS; each grant says which names and record types it may change.' }));
  nodes.push(el('section', { class: 'card', 'aria-label': 'Keys' }, el('h2', { text: 'Keys' }),
    keys.length
      ? el('div', { class: 'table-wrap' }, el('table', { class: 'stack', id: 'k-table' },
        el('thead', {}, el('tr', {}, ['name', 'algorithm', 'may change', 'created', 'delete'].map((t) => el('th', { scope: 'col', text: t })))),
        el('tbody', {}, keys.map((k) => keyRow(k, zones, (st, f) => redraw(st, f))))))
      : el('p', { class: 'muted', id: 'k-none', text: 'No TSIG key yet: DNS UPDATE is refused until one is made.' })));
  nodes.push(el('section', { class: 'card', 'aria-label': 'New key' }, el('h2', { text: 'New key' }),
    zones.length ? createForm(zones, (st, f) => redraw(st, f)) : el('p', { class: 'muted', text: 'Make a zone first: a grant names one.' })));
  return {
    nodes,
    key: JSON.stringify([keys, zones.map((z) => [z.id, z.name])]),
    // A redraw would lose a secret on screen: none while one is shown;
    // the card says the list is behind and redraws it when closed.
    refresh: async () => {
      const card = document.getElementById('k-secret');
      if (!card) return 'rerender';
      // The event of one's own create changed nothing the list shows: the
      // list is behind only when the keys or zones differ from it.
      const [k2, z2] = await Promise.all([list('tsig_keys'), list('zones')]);
      if (JSON.stringify([k2, z2.map((z) => [z.id, z.name])]) === JSON.stringify([keys, zones.map((z) => [z.id, z.name])])) return undefined;
      if (!card.querySelector('#k-stale')) {
        card.querySelector('.notice').after(el('p', { id: 'k-stale', class: 'notice', role: 'status',
          text: 'The configuration changed meanwhile: the list below is redrawn once you close this.' }));
      }
      return undefined;
    },
    bind: (draw) => {
      redraw = (st, focus) => draw(() => tsigPage(st), focus === 'secret' ? 'secret' : focus).then(() => {
        if (focus === 'secret') document.getElementById('k-secret-title')?.focus();
      });
    },
  };
}
