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

export function health(h) {
  return h === false ? el('span', { class: 'down', text: 'DOWN' }) : el('span', { class: 'up', text: 'up' });
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

export function when(t) {
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}
