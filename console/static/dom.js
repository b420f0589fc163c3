// Small helpers to build the page. Text is always set as text, never
// parsed as HTML, so nothing the API returns can inject markup.

export function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'value') e.value = v;
    else if (k === 'checked') e.checked = Boolean(v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat(Infinity)) if (k !== null && k !== undefined && k !== false) e.append(k);
  return e;
}

export const pct = (x) => (100 * x).toFixed(1) + '%';

// health shows an agreed state; notChecked marks what no monitor checks
// (it counts as up, but nobody has looked).
export function health(h, notChecked) {
  if (h === false) return el('span', { class: 'down', text: 'DOWN' });
  if (notChecked) return el('span', { class: 'unchecked', text: 'not checked' });
  return el('span', { class: 'up', text: 'up' });
}

// bar draws a share as a bar; the number beside it is the accessible text.
export function bar(share, after) {
  const b = el('span', { class: 'bar' + (after ? ' after' : ''), 'aria-hidden': 'true' });
  b.style.width = `calc(${Math.max(0, Math.min(1, share))} * var(--bar-max))`;
  return b;
}

// field is a labelled control with a slot for its error beside it: the
// label names it for assistive technology, the slot is announced when the
// API names the field at fault.
// With short, the label shows only that word and the full label is the
// control's accessible name.
export function field(id, label, control, { hideLabel = false, short } = {}) {
  control.id = id;
  control.setAttribute('aria-describedby', id + '-error');
  if (short) control.setAttribute('aria-label', label);
  return el('span', { class: 'field' },
    el('label', { for: id, class: hideLabel ? 'sr' : null, text: short || label }),
    control,
    el('span', { class: 'field-error', id: id + '-error', role: 'alert' }));
}

// showFieldErrors writes each problem+json field error next to its
// control (slotFor maps an API path to a control id) and the rest into
// the form-level slot. It returns how many it placed.
export function showFieldErrors(form, errors, slotFor, rest) {
  for (const s of form.querySelectorAll('.field-error')) s.textContent = '';
  for (const c of form.querySelectorAll('[aria-invalid]')) c.removeAttribute('aria-invalid');
  const loose = [];
  for (const fe of errors || []) {
    const id = slotFor(fe.path);
    const slot = id && document.getElementById(id + '-error');
    if (!slot) { loose.push(`${fe.path}: ${fe.message}`); continue; }
    slot.textContent = fe.message;
    document.getElementById(id)?.setAttribute('aria-invalid', 'true');
  }
  if (rest) rest.textContent = loose.join('; ');
  return (errors || []).length - loose.length;
}

const TIMES = 'glb-times';
export const localTimes = () => localStorage.getItem(TIMES) === 'local';
export function setLocalTimes(on) { if (on) localStorage.setItem(TIMES, 'local'); else localStorage.removeItem(TIMES); }
export const timeZoneLabel = () => (localTimes() ? Intl.DateTimeFormat().resolvedOptions().timeZone || 'local' : 'UTC');

// when writes a time with its zone: UTC unless local times were asked
// for, "2026-12-01 18:44:51 UTC".
export function when(t) {
  const d = new Date(t);
  if (isNaN(d)) return String(t);
  if (!localTimes()) return d.toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
  return d.toLocaleString(undefined, { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
}

// policyName is the one name of the policy a load balancer steers by, as
// explain and glbctl say it: an unset policy is off, or geo with a
// country or region map.
export function policyName(lb) {
  if (lb.steering_policy) return lb.steering_policy;
  return Object.keys(lb.region_pools || {}).length || Object.keys(lb.country_pools || {}).length ? 'geo' : 'off';
}

// shownAddress is an origin's address as the console shows it: a hostname
// says it is answered as a CNAME, so that a mistyped address (127.0.0.1O)
// is not read as an IP. Hostnames never hold a colon; IPv4 is four numbers.
export function shownAddress(a) {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(a) || a.includes(':') ? a : `${a} (hostname: CNAME)`;
}
