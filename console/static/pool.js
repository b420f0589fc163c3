import { call, Problem } from './api.js';
import { el, health, field, showFieldErrors, when } from './dom.js';
import { monitorLabels, monitorsTable, monitorsKey } from './monitors.js';

const FIELDS = ['name', 'address', 'zone', 'weight', 'enabled'];

// The health matrix: origin × checking node, with the agreed state.
function matrix(h) {
  const nodes = [];
  for (const o of h.origins) for (const c of o.checks) if (!nodes.some((n) => n.node === c.node)) nodes.push({ node: c.node, region: c.region });
  return el('table', { id: 'matrix' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'origin' }), el('th', { scope: 'col', text: 'agreed' }),
      nodes.map((n) => el('th', { scope: 'col', text: `${n.node} (${n.region || 'no region'})` })))),
    el('tbody', {}, h.origins.map((o) => el('tr', { 'data-origin': o.name, 'data-healthy': String(o.healthy !== false) },
      el('th', { scope: 'row', text: o.name }), el('td', { 'data-state': o.state || '' }, health(o.healthy, o.state === 'not_checked'), o.reason ? ` ${o.reason}` : ''),
      nodes.map((n) => {
        const c = o.checks.find((c) => c.node === n.node);
        if (!c) return el('td', { class: 'muted', text: 'not checked' });
        return el('td', { 'data-healthy': String(c.healthy) }, health(c.healthy), c.healthy ? ` ${c.rtt_ms.toFixed(1)} ms` : ` ${c.reason || ''}`);
      })))));
}

// fedIn: the words other systems fed in for the origins (a feed monitor
// of the pool's group takes them as its checks), with what each says,
// why, its load and until when it counts; null when nothing was fed.
function fedIn(h) {
  const rows = h.origins.flatMap((o) => (o.feeds || []).map((f) => ({ o, f })));
  if (!rows.length) return null;
  const cells = ({ o, f }) => [
    ['says', f.live ? health(f.up) : el('span', { class: 'muted', text: `silent (was ${f.up ? 'up' : 'down'})` })],
    ['reason', f.reason || ''],
    ['load', f.load == null ? '' : `${f.load}${o.load == null ? '' : ' (counted)'}`],
    ['counts until', f.live ? when(f.expires_at) : `expired ${when(f.expires_at)}: the origin counts as up`],
    ['fed by', `${f.source} at ${when(f.received_at)}`],
    ['monitor', f.monitor]];
  return el('table', { id: 'feeds', class: 'stack' },
    el('thead', {}, el('tr', {}, ['origin', ...cells(rows[0]).map(([k]) => k)].map((t) => el('th', { scope: 'col', text: t })))),
    el('tbody', {}, rows.map((r) => el('tr', { 'data-origin': r.o.name, 'data-live': String(r.f.live), 'data-up': String(r.f.up) },
      el('th', { scope: 'row', text: r.o.name }),
      cells(r).map(([k, v]) => el('td', { 'data-label': k }, v))))));
}

// healthKey is what the matrix shows, to tell whether a redraw is needed.
const healthKey = (h) => JSON.stringify(h.origins.map((o) => [o.name, o.healthy, o.state, o.reason, o.load, o.checks.map((c) => [c.node, c.healthy, c.reason]),
  (o.feeds || []).map((f) => [f.monitor, f.up, f.reason, f.load, f.live, f.expires_at])])) + monitorsKey(h);

// weightValue sends what the operator typed: a number when it is one,
// else the text, so that the API's validation names the field.
function weightValue(s) {
  const t = s.trim();
  return t !== '' && !isNaN(Number(t)) ? Number(t) : t;
}

// poolPage: the origins with weight, zone and enabled, editable (add,
// remove, change) and saved with If-Match; the health matrix, live.
export async function poolPage(id, notice) {
  const [{ data: pool, etag }, { data: h0 }] = await Promise.all([call('GET', `/pools/${id}`), call('GET', `/pools/${id}/health`)]);
  let h = h0;
  // draft is the form's working copy; the origins keep fields the form
  // does not show (such as header), so a save changes only what was edited.
  const draft = pool.origins.map((o) => ({ ...o }));
  let dirty = false;
  // shown is the settled notice a redraw carries over ("Saved: …"), never
  // the status line itself: an event's redraw that read "Saving…" there
  // while the save's own redraw was loading could finish last and leave
  // "Saving…" on a page whose save had long been answered.
  let shown = notice || '';

  const status = el('p', { id: 'pool-status', role: 'status', 'aria-live': 'polite', text: shown });
  const formError = el('p', { class: 'field-error', id: 'origins-error', role: 'alert' });
  const tbody = el('tbody');
  const addBtn = el('button', { type: 'button', id: 'add-origin', text: 'Add origin' });
  const saveBtn = el('button', { type: 'submit', id: 'save', text: 'Save' });
  const form = el('form', { id: 'edit', 'aria-label': `Origins of pool ${pool.name}`, novalidate: true },
    el('table', { class: 'stack edit' },
      el('thead', {}, el('tr', {}, [...FIELDS, ''].map((t) => el('th', { scope: 'col', text: t })))),
      tbody),
    formError,
    el('p', { class: 'muted hint', id: 'origins-hint', text: 'Address: an IPv4 or IPv6 address, or a hostname (answered as a CNAME). Weight: a share in [0, 1]; each origin gets its weight over the sum of the pool\'s weights (0.7 and 0.3, or 1 and 1 for an even split; 0 takes none).' }),
    el('div', { class: 'actions' }, addBtn, saveBtn, el('span', { class: 'muted', text: ` editing revision ${etag.replaceAll('"', '')}` })),
    status);

  function rows() {
    tbody.replaceChildren(...draft.map((o, i) => {
      const who = o.name || `new origin ${i + 1}`;
      const input = (attrs) => el('input', { type: 'text', autocomplete: 'off', oninput: () => { dirty = true; }, ...attrs });
      const enabled = el('input', { type: 'checkbox', checked: o.enabled !== false, onchange: () => { dirty = true; } });
      const remove = el('button', { type: 'button', class: 'remove', text: 'Remove', 'aria-label': `Remove ${who}` });
      remove.addEventListener('click', () => {
        sync();
        draft.splice(i, 1);
        dirty = true;
        rows();
        (tbody.querySelectorAll('button.remove')[Math.min(i, draft.length - 1)] || addBtn).focus();
      });
      return el('tr', { 'data-origin': o.name || '' },
        el('td', { 'data-label': 'name' }, field(`o${i}-name`, `Name of ${who}`, input({ value: o.name ?? '' }), { hideLabel: true })),
        el('td', { 'data-label': 'address' }, field(`o${i}-address`, `Address of ${who}`, input({ value: o.address ?? '' }), { hideLabel: true })),
        el('td', { 'data-label': 'zone' }, field(`o${i}-zone`, `Zone of ${who}`, input({ value: o.zone ?? '', size: 8 }), { hideLabel: true })),
        el('td', { 'data-label': 'weight' }, field(`o${i}-weight`, `Weight of ${who}`, input({ value: String(o.weight ?? 1), inputmode: 'decimal', size: 5 }), { hideLabel: true })),
        el('td', { 'data-label': 'enabled' }, field(`o${i}-enabled`, `Enabled: ${who}`, enabled, { hideLabel: true })),
        el('td', {}, remove));
    }));
  }
  rows();

  // sync reads what the form shows back into the draft (before rows are
  // added or removed, and before a save).
  function sync() {
    draft.forEach((o, i) => {
      for (const f of ['name', 'address', 'zone', 'weight']) o[f] = document.getElementById(`o${i}-${f}`).value;
      o.enabled = document.getElementById(`o${i}-enabled`).checked;
    });
  }

  addBtn.addEventListener('click', () => {
    sync();
    draft.push({ name: '', address: '', zone: '', weight: 1, enabled: true });
    dirty = true;
    rows();
    document.getElementById(`o${draft.length - 1}-name`).focus();
  });

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.textContent = 'Saving…';
    status.className = '';
    status.removeAttribute('data-conflict');
    sync();
    const origins = draft.map((o) => {
      // Pasted values lose their surrounding spaces.
      const out = { ...o, name: o.name.trim(), address: o.address.trim(), zone: (o.zone || '').trim(), weight: weightValue(String(o.weight)) };
      if (!out.zone) delete out.zone;
      return out;
    });
    try {
      const { etag: next } = await call('PATCH', `/pools/${id}`, { origins }, etag);
      dirty = false;
      shown = `Saved: revision ${next.replaceAll('"', '')}.`;
      redraw(shown, 'save');
    } catch (e) {
      if (!(e instanceof Problem)) throw e;
      if (e.status === 412) {
        status.replaceChildren(`Conflict: someone changed this pool since you opened it (you opened revision ${etag.replaceAll('"', '')}, now stale). Nothing was saved. `,
          el('button', { type: 'button', text: 'Reload the pool', onclick: () => redraw('') }));
        status.className = 'error';
        status.setAttribute('data-conflict', 'true');
        return;
      }
      const placed = showFieldErrors(form, e.body.errors, (path) => {
        const m = /^origins\[(\d+)\]\.(\w+)/.exec(path);
        return m && FIELDS.includes(m[2]) ? `o${m[1]}-${m[2]}` : null;
      }, formError);
      status.textContent = `Not saved: ${e.message}` + (placed ? ' (see the fields marked)' : '');
      status.className = 'error';
      form.querySelector('[aria-invalid]')?.focus();
    }
  });

  const matrixBox = el('div', { class: 'table-wrap', id: 'matrix-box' }, matrix(h));
  const changed = el('p', { id: 'pool-changed', class: 'notice', hidden: true });
  const labels = await monitorLabels(pool.monitors);
  const monitorsBox = el('div', { class: 'table-wrap', id: 'monitors-box' }, monitorsTable(h, labels));
  const group = (pool.monitors || []).length > 0;
  const feedsBox = el('div', { class: 'table-wrap', id: 'feeds-box' }, fedIn(h) || '');
  const feedsCard = el('section', { class: 'card', 'aria-label': 'Fed in', hidden: !fedIn(h) }, el('h2', { text: 'Fed in' }),
    el('p', { class: 'muted hint', text: 'What other systems said of the origins through a feed monitor (Alertmanager, or PUT …/origins/{name}/feed). A word counts as that monitor\'s check until it expires; then the feed is silent and the origin counts as up.' }), feedsBox);
  const summary = () => `${group ? `monitor group of ${pool.monitors.length}` : `monitor ${pool.monitor || 'none (origins not checked)'}`} · minimum origins ${pool.minimum_origins} · ${pool.enabled ? 'enabled' : 'disabled'} · ${h.healthy === false ? 'DOWN' : 'healthy'}`;
  const summaryP = el('p', { class: 'muted', text: summary() });
  const nodes = [el('h2', { text: `Pool ${pool.name}`, tabindex: '-1', class: 'page-title' }), summaryP, changed,
    // Health first: an origin down is what an operator opens the page for.
    el('section', { class: 'card', 'aria-label': 'Health by checking node' }, el('h2', { text: 'Health by checking node' }), matrixBox),
    group && el('section', { class: 'card', 'aria-label': 'Each monitor of the group' }, el('h2', { text: 'Each monitor of the group' }), monitorsBox),
    feedsCard,
    el('section', { class: 'card', 'aria-label': 'Origins' }, el('h2', { text: 'Origins' }), form)].filter(Boolean);

  let redraw = () => {};
  return {
    nodes,
    // The app gives the page a way to draw itself again (after a save,
    // or when the pool changed on the server and nothing is being edited).
    bind(r) { redraw = (msg, focus) => r(() => poolPage(id, msg), focus); },
    refresh: async (name) => {
      if (name === 'health' || name === 'poll') {
        const { data } = await call('GET', `/pools/${id}/health`);
        if (healthKey(data) !== healthKey(h)) {
          h = data;
          matrixBox.replaceChildren(matrix(h));
          monitorsBox.replaceChildren(monitorsTable(h, labels) || '');
          feedsBox.replaceChildren(fedIn(h) || '');
          feedsCard.hidden = !fedIn(h);
          summaryP.textContent = summary();
        }
      }
      if (name === 'revision' || name === 'poll') {
        const { etag: now } = await call('GET', `/pools/${id}`);
        if (now === etag) return;
        if (!dirty) { redraw(shown); return; }
        changed.hidden = false;
        changed.textContent = `This pool changed on the server (now ${now}); saving your edit will report a conflict.`;
      }
    },
  };
}
