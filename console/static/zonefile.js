import { call, token, Problem } from './api.js';
import { el, when } from './dom.js';

// sendFile POSTs a master file (text/dns) and returns the result, or
// throws a Problem as call does.
async function sendFile(path, text) {
  const headers = { 'Accept': 'application/json', 'Content-Type': 'text/dns' };
  if (token()) headers['Authorization'] = 'Bearer ' + token();
  const r = await fetch('/api/v1' + path, { method: 'POST', headers, body: text, cache: 'no-store' });
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new Problem(r.status, body);
  return body.result;
}

const recordLine = (r) => `${r.name} ${r.ttl || ''} ${r.type} ${r.content}`.replace(/ +/g, ' ');

// diffView shows an import's diff: what it adds, removes and changes, and
// the SOA and NS differences it leaves alone.
function diffView(d) {
  const list = (id, sign, rows) => rows.length ? el('ul', { class: 'plain', id }, rows.map((t) => el('li', {}, el('code', { class: 'wrap', text: `${sign} ${t}` })))) : '';
  return el('div', { id: 'zonefile-diff' },
    el('p', { id: 'zonefile-summary', text: `${d.added.length} to add, ${d.removed.length} to remove, ${d.changed.length} TTL(s) to change, ${d.unchanged} unchanged (${d.mode}).` }),
    list('zonefile-added', '+', d.added.map(recordLine)),
    list('zonefile-removed', '−', d.removed.map(recordLine)),
    list('zonefile-changed', '~', d.changed.map((c) => `${recordLine(c.after)} (ttl ${c.before.ttl || 'zone'} → ${c.after.ttl})`)),
    d.soa.length ? el('p', { class: 'muted', id: 'zonefile-soa', text: 'Not applied, the file\'s SOA differs: ' + d.soa.map((s) => `${s.field} ${s.file} (zone: ${s.zone})`).join(', ') }) : '',
    d.nameservers ? el('p', { class: 'muted', id: 'zonefile-ns', text: `Not applied, the file's apex NS: ${d.nameservers.file.join(' ')} (zone: ${d.nameservers.zone.join(' ')})` }) : '');
}

// zoneFileCard imports a pasted or uploaded master file into zone id: a
// dry run shows the diff first, and only that diff's file is imported.
export function zoneFileCard(id, onImported) {
  const text = el('textarea', { id: 'zonefile-text', rows: 8, spellcheck: 'false', placeholder: '$ORIGIN glb.example.com.\nwww 300 IN A 192.0.2.1' });
  const upload = el('input', { type: 'file', id: 'zonefile-upload', accept: '.zone,.txt,text/plain,text/dns' });
  upload.addEventListener('change', async () => { if (upload.files[0]) text.value = await upload.files[0].text(); });
  const mode = el('select', { id: 'zonefile-mode' }, el('option', { value: 'merge', text: 'merge: keep the zone\'s records, add the file\'s' }),
    el('option', { value: 'replace', text: 'replace: the file\'s records become the zone\'s' }));
  const preview = el('button', { type: 'button', id: 'zonefile-preview', text: 'Show what it changes' });
  const apply = el('button', { type: 'button', id: 'zonefile-apply', text: 'Import', disabled: true });
  const status = el('p', { id: 'zonefile-status', role: 'status', 'aria-live': 'polite' });
  const out = el('div', {});
  let checked = null; // the file and mode the shown diff is of
  const reset = () => { checked = null; apply.disabled = true; };
  text.addEventListener('input', reset);
  mode.addEventListener('change', reset);
  const fail = (e) => {
    if (!(e instanceof Problem)) throw e;
    status.className = 'error';
    status.textContent = `Not imported: ${e.message}`;
    out.replaceChildren(el('ul', { class: 'plain', id: 'zonefile-errors' }, (e.body.errors || []).map((fe) => el('li', { text: `${fe.path}: ${fe.message}` }))));
  };
  preview.addEventListener('click', async () => {
    status.className = '';
    status.textContent = 'Reading the file…';
    try {
      const d = await sendFile(`/zones/${id}/import?dry_run=true&mode=${mode.value}`, text.value);
      checked = { file: text.value, mode: mode.value };
      out.replaceChildren(diffView(d));
      apply.disabled = d.added.length + d.removed.length + d.changed.length === 0;
      status.textContent = apply.disabled ? 'Nothing to import: the zone has every record of the file.' : 'Dry run: nothing stored yet.';
    } catch (e) { reset(); fail(e); }
  });
  apply.addEventListener('click', async () => {
    if (!checked) return;
    status.className = '';
    status.textContent = 'Importing…';
    try {
      const d = await sendFile(`/zones/${id}/import?mode=${checked.mode}`, checked.file);
      out.replaceChildren(diffView(d));
      status.textContent = `Imported: serial ${d.serial}.`;
      reset();
      onImported?.();
    } catch (e) { reset(); fail(e); }
  });
  return el('section', { class: 'card', id: 'zonefile', 'aria-label': 'Import a zone file' },
    el('h2', { text: 'Import a zone file' }),
    el('p', { class: 'muted', text: 'An RFC 1035 master file as BIND, Knot or NSD write it. The SOA and apex NS are compared, not applied. ' },
      el('a', { href: `/api/v1/zones/${id}/export`, id: 'zonefile-export', text: 'Export this zone' }), ' (with a token, use glbctl zone export).'),
    el('label', { for: 'zonefile-text', text: 'Zone file' }), text,
    el('label', { for: 'zonefile-upload', text: 'or upload one' }), upload,
    el('label', { for: 'zonefile-mode', text: 'Mode' }), mode,
    el('div', { class: 'actions' }, preview, apply), status, out);
}

// transferCard shows who may transfer zone id, the serial this node
// transfers and, per secondary, the serial it was last sent.
export async function transferCard(id) {
  const { data: d } = await call('GET', `/zones/${id}/transfer`);
  const t = d.transfer;
  const on = t && ((t.allow || []).length || (t.tsig_keys || []).length);
  const rows = d.secondaries.map((s) => el('tr', { 'data-address': s.address },
    el('td', { 'data-label': 'secondary', text: s.address }), el('td', { 'data-label': 'last sent serial', text: String(s.serial) }),
    el('td', { 'data-label': 'kind', text: s.kind }), el('td', { 'data-label': 'had', text: s.asked ? String(s.asked) : '—' }),
    el('td', { 'data-label': 'at', text: when(s.at) })));
  return el('section', { class: 'card', id: 'transfer', 'aria-label': 'Secondaries' },
    el('h2', { text: 'Secondaries (zone transfers)' }),
    el('p', { id: 'transfer-settings', text: on
      ? `Transfers allowed from ${(t.allow || []).join(', ') || 'any address'}${(t.tsig_keys || []).length ? ' signed with ' + t.tsig_keys.join(', ') : ''}; NOTIFY to ${(t.notify || []).join(', ') || 'nobody'}; health changes at most every ${t.min_interval || 5} s. This node transfers serial ${d.serial}.`
      : 'No secondary may transfer this zone: set the transfer fields above and save.' }),
    rows.length ? el('div', { class: 'table-wrap' }, el('table', { class: 'stack', id: 'transfer-secondaries' },
      el('thead', {}, el('tr', {}, ['secondary', 'last sent serial', 'kind', 'had', 'at'].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, rows)))
      : el('p', { class: 'muted', text: 'No secondary has transferred this zone from this node yet.' }));
}
