import { call, list } from './api.js';
import { el, when } from './dom.js';
import { lbPicker } from './explain.js';
import { poolOrder } from './overview.js';
import { countries, project, svg, SPLIT, WIDTH, HEIGHT, TOP, BOTTOM } from './worldmap.js';

// Colours of a load balancer's pools, in poolOrder; distinct enough for
// the usual deuteranopia (blue, orange, green are told apart by lightness
// too).
const PALETTE = ['#2563eb', '#f59e0b', '#16a34a', '#9333ea', '#dc2626', '#0891b2', '#a16207', '#db2777', '#4b5563'];
const NONE = '#e5e7eb';

// The views: the last 10 minutes and the last hour in the 10 s buckets
// kept for an hour, the last day in 1 min buckets.
const RANGES = {
  '10m': { ms: 600e3, step: '10s', label: 'last 10 minutes' },
  '1h': { ms: 3600e3, step: '10s', label: 'last hour' },
  '24h': { ms: 86400e3, step: '1m', label: 'last day' },
};

// analytics asks GET /analytics for one load balancer.
async function analytics(lb, since, until, groupBy, step) {
  const q = new URLSearchParams({ load_balancer: lb, since: since.toISOString(), until: until.toISOString(), group_by: groupBy });
  if (step) q.set('step', step);
  return (await call('GET', `/analytics?${q}`)).data;
}

// marks lists what changed where the traffic went: origin health
// transitions of the load balancer's pools and shifts, from the audit log.
async function marks(poolIDs, since, until) {
  const q = (kind) => call('GET', `/audit?kind=${kind}&since=${since.toISOString()}&until=${until.toISOString()}&per_page=200`).then((r) => r.data || []);
  const [health, shifts] = await Promise.all([q('health'), q('shifts')]);
  const out = [];
  for (const e of health) {
    const [pool, origin] = e.object_id.split('/');
    if (!poolIDs.has(pool)) continue;
    const up = e.after?.healthy;
    out.push({ at: new Date(e.time), kind: up ? 'up' : 'down', text: `${origin} (${poolIDs.get(pool)}) ${up ? 'healthy again' : 'down'}` });
  }
  for (const e of shifts) {
    if (e.action !== 'create' && e.action !== 'update') continue;
    const t = e.after?.target || {};
    out.push({ at: new Date(e.time), kind: 'shift', text: `shift of ${t.pool || t.origin || t.zone} ${e.action === 'create' ? 'started' : 'ended'}` });
  }
  return out.sort((a, b) => a.at - b.at);
}

// regionPools asks the preview which pool answers each region now: the
// DNS servers' own decision on their snapshot.
async function regionPools(lbID, regions) {
  const out = new Map();
  await Promise.all(regions.map(async (r) => {
    try {
      const { data } = await call('POST', `/load_balancers/${lbID}/preview`, { clients: [{ region: r.code }] });
      const top = [...data.now.pools].sort((a, b) => b.share - a.share)[0];
      out.set(r.code, top ? top.id : null);
    } catch {
      out.set(r.code, null);
    }
  }));
  return out;
}

// worldMap draws the countries filled with the colour of the pool that
// answers their region now, and a circle per region sized by its answers
// in the range.
async function worldMap(regions, now, colour, answers) {
  const shapes = await countries();
  const regionOf = new Map();
  for (const r of regions) for (const c of r.countries) regionOf.set(c, r.code);
  const fill = (region) => colour(now.get(region));
  const defs = svg('defs');
  const paths = [];
  for (const s of shapes) {
    const region = regionOf.get(s.code);
    if (SPLIT[s.code] !== undefined) {
      // Drawn twice, each half clipped at the split meridian.
      const [x] = project(SPLIT[s.code], 0);
      for (const [side, code, x0, w] of [['w', 'WNAM', 0, x], ['e', 'ENAM', x, WIDTH - x]]) {
        const id = `clip-${s.code}-${side}`;
        defs.append(svg('clipPath', { id }, svg('rect', { x: x0, y: 0, width: w, height: HEIGHT })));
        paths.push(svg('path', { d: s.d, fill: fill(code), 'clip-path': `url(#${id})`, 'data-country': s.code, 'data-region': code, 'data-pool': now.get(code) || '' },
          svg('title', {}, `${s.name} (${code})`)));
      }
      continue;
    }
    paths.push(svg('path', { d: s.d, fill: region ? fill(region) : NONE, 'data-country': s.code, 'data-region': region || '', 'data-pool': now.get(region) || '' },
      svg('title', {}, `${s.name}${region ? ` (${region})` : ''}`)));
  }
  const most = Math.max(1, ...regions.map((r) => answers.get(r.code) || 0));
  const labels = [];
  const dots = regions.map((r) => {
    const [x, y] = project(r.longitude, r.latitude);
    const n = answers.get(r.code) || 0;
    const radius = n ? 4 + 26 * Math.sqrt(n / most) : 0;
    const label = svg('text', { x, 'text-anchor': 'middle', class: 'map-label' }, r.code);
    labels.push({ label, top: y - radius, bottom: y + radius, n });
    return svg('g', { class: 'region-dot', 'data-region': r.code, 'data-answers': n, 'data-pool': now.get(r.code) || '' },
      svg('circle', { cx: x, cy: y, r: radius, fill: fill(r.code), stroke: '#1d232b', 'stroke-width': 1.5, 'fill-opacity': 0.85 }),
      label, svg('title', {}, `${r.name}: ${n.toLocaleString('en')} answers`));
  });
  const map = svg('svg', { id: 't-map', viewBox: `0 ${TOP} ${WIDTH} ${BOTTOM - TOP}`, role: 'img', 'aria-labelledby': 't-map-title' },
    svg('title', { id: 't-map-title' }, 'World map: each country in the colour of the pool answering its region now; circles sized by the region\'s answers'),
    defs, svg('g', { stroke: '#fff', 'stroke-width': 0.4 }, paths), dots);
  // The map scales with the page; its labels are sized in map units so
  // that they stay LABEL_PX on screen, as large on a phone as elsewhere.
  // On a narrow map labels that size would cover each other (WEU and
  // EEU, WNAM and ENAM on a phone): the regions with the most answers
  // are labelled first, above their circle, else below it; a label that
  // fits neither is left out (the table below the map names every
  // region, and the circle's title its answers).
  labels.sort((a, b) => b.n - a.n);
  return fitted(map, (w) => {
    const k = WIDTH / w, placed = [];
    for (const { label, top, bottom } of labels) {
      label.style.fontSize = `${(LABEL_PX * k).toFixed(2)}px`;
      label.style.strokeWidth = `${(3 * k).toFixed(2)}px`;
      label.removeAttribute('visibility');
      let fits = false;
      for (const y of [top - 3 * k, bottom + (3 + LABEL_PX) * k]) {
        label.setAttribute('y', y.toFixed(1));
        // Off the page nothing has a size (some browsers throw): fitted
        // draws the map again once it is on the page.
        if (!map.isConnected) { fits = true; break; }
        const b = label.getBBox();
        if (!placed.some((p) => b.x < p.x + p.width && p.x < b.x + b.width && b.y < p.y + p.height && p.y < b.y + b.height)) {
          placed.push(b);
          fits = true;
          break;
        }
      }
      if (!fits) label.setAttribute('visibility', 'hidden');
    }
  });
}

// LABEL_PX is the size of the charts' and the map's labels on screen, in
// CSS pixels, at any width.
const LABEL_PX = 12;

// shownWidth is the width the last chart was shown at: a chart built
// before it is on the page starts there, so that the redraw every 10 s
// does not flash a chart of the wrong size.
let shownWidth = 960;

// fitted calls draw(width) with the width box is shown at, again whenever
// it changes (a phone turned, a window resized): what is drawn at the
// width it is shown keeps its labels at LABEL_PX, where a picture scaled
// down to a phone's width shrank them to 5 px.
function fitted(box, draw) {
  let drawn = 0;
  const redraw = (w) => { drawn = w; shownWidth = w; draw(w); };
  // Not yet "drawn": the first observation, once box is on the page,
  // draws it again, measured.
  draw(shownWidth);
  const ro = new ResizeObserver(([e]) => {
    if (!box.isConnected) { ro.disconnect(); return; }
    const w = Math.round(e.contentRect.width);
    // Drawn in the next frame, not in the callback: the new drawing's
    // height would change the box while it is being observed.
    if (w > 0 && w !== drawn) requestAnimationFrame(() => { if (box.isConnected) redraw(w); });
  });
  ro.observe(box);
  return box;
}

// chart draws the answers of each key per bucket at the width its box is
// shown: stacked areas over time, with a dashed line at each mark
// (failovers, recoveries, shifts).
function chart(id, title, buckets, keys, colour, label, ms, complete) {
  const box = el('div', { class: 'chart' });
  return fitted(box, (w) => box.replaceChildren(chartSVG(w, id, title, buckets, keys, colour, label, ms, complete)));
}

// chartSVG is one drawing of a chart, W CSS pixels wide; a narrow one is
// lower and has fewer time labels, each at LABEL_PX.
function chartSVG(W, id, title, buckets, keys, colour, label, ms, complete) {
  const H = W < 600 ? 200 : 260, L = 56, R = 10, T = 10, B = 28;
  const t0 = buckets.length ? buckets[0].t : 0, t1 = buckets.length ? buckets[buckets.length - 1].t : 1;
  const x = (t) => L + (W - L - R) * (t1 > t0 ? (t - t0) / (t1 - t0) : 0);
  const top = Math.max(1, ...buckets.map((b) => keys.reduce((s, k) => s + (b.v.get(k) || 0), 0)));
  const y = (v) => H - B - (H - B - T) * v / top;
  const areas = [];
  const base = buckets.map(() => 0);
  for (const k of keys) {
    const upper = buckets.map((b, i) => base[i] + (b.v.get(k) || 0));
    if (upper.every((v, i) => v === base[i])) continue;
    const d = 'M' + buckets.map((b, i) => `${x(b.t).toFixed(1)},${y(upper[i]).toFixed(1)}`).join('L')
      + 'L' + buckets.map((b, i) => `${x(b.t).toFixed(1)},${y(base[i]).toFixed(1)}`).reverse().join('L') + 'Z';
    areas.push(svg('path', { d, fill: colour(k), 'fill-opacity': 0.85, 'data-key': k }, svg('title', {}, label(k))));
    upper.forEach((v, i) => { base[i] = v; });
  }
  const axis = [svg('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#5b6570' })];
  for (const f of [0, 0.5, 1]) {
    axis.push(svg('text', { x: L - 6, y: y(top * f) + 4, 'text-anchor': 'end', class: 'axis' }, Math.round(top * f).toLocaleString('en')));
  }
  // A time label ("15:04") takes about 3 em: one every 90 px at most.
  const n = Math.max(2, Math.min(5, Math.floor((W - L - R) / 90) + 1));
  for (let i = 0; i < n; i++) {
    const f = i / (n - 1), t = t0 + (t1 - t0) * f;
    axis.push(svg('text', { x: x(t), y: H - 8, 'text-anchor': f === 0 ? 'start' : f === 1 ? 'end' : 'middle', class: 'axis' }, when(t).slice(11, 16)));
  }
  const lines = ms.filter((m) => m.at >= t0 && m.at <= t1).map((m) => svg('g', { class: 'mark', 'data-kind': m.kind },
    svg('line', { x1: x(m.at), y1: T, x2: x(m.at), y2: H - B, stroke: m.kind === 'down' ? '#b3261e' : m.kind === 'up' ? '#1b7f3b' : '#8a5a00', 'stroke-dasharray': '4 3', 'stroke-width': 2 }),
    svg('title', {}, `${when(m.at)}: ${m.text}`)));
  // Buckets after complete_until may still grow as nodes write them.
  const c = Math.max(t0, Math.min(t1, complete));
  const partial = buckets.length && c < t1 ? svg('rect', { class: 'partial', x: x(c), y: T, width: x(t1) - x(c), height: H - B - T, fill: '#f6f7f9', 'fill-opacity': 0.6 },
    svg('title', {}, `after ${when(c)}: not every node has written these buckets yet`)) : null;
  return svg('svg', { id, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title }, areas, partial, axis, lines);
}

// bucketsOf turns the API's series (a group and its points, one per step,
// zeros included) into time buckets keyed by one dimension's value (the
// pool, or "pool/origin").
function bucketsOf(series, key) {
  const byTime = new Map();
  for (const s of series || []) {
    const k = key(s.group);
    for (const p of s.points) {
      const t = new Date(p.time).getTime();
      if (!byTime.has(t)) byTime.set(t, new Map());
      const v = byTime.get(t);
      v.set(k, (v.get(k) || 0) + p.answers);
    }
  }
  return [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([t, v]) => ({ t, v }));
}

function legend(items, id) {
  return el('ul', { class: 'plain legend-row', id }, items.map(([key, name, colour]) => {
    const swatch = el('span', { class: 'swatch', 'aria-hidden': 'true' });
    swatch.style.background = colour;
    return el('li', { 'data-key': key, 'data-colour': colour }, swatch, ' ', name);
  }));
}

// trafficPage: #traffic/<load balancer id>[?range=24h]. Where a load
// balancer's answers went, from the nodes' merged answer counts: a chart
// per pool and per origin over the last hour (or day) with failovers and
// shifts marked, and a map of the regions coloured by the pool that
// answers each now and sized by its answers.
export async function trafficPage(arg = '') {
  const [path, query] = arg.split('?');
  const range = RANGES[new URLSearchParams(query).get('range')] ? new URLSearchParams(query).get('range') : '1h';
  const pick = await lbPicker('t-lb', 'Load balancer', path || undefined);
  const rangeSelect = el('select', {}, Object.keys(RANGES).map((k) => el('option', { value: k, text: `${RANGES[k].label} (${RANGES[k].step.replace(/(\d+)/, '$1 ').replace('m', 'min')})`, selected: k === range })));
  const go = () => { location.hash = `#traffic/${pick.select.value}?range=${rangeSelect.value}`; };
  pick.select.addEventListener('change', go);
  rangeSelect.addEventListener('change', go);
  const head = [el('h2', { class: 'page-title', tabindex: '-1', text: 'Traffic' }),
    el('div', { class: 'row' }, el('div', {}, pick.node), el('div', {}, el('label', { for: 't-range', text: 'Range' }), Object.assign(rangeSelect, { id: 't-range' })))];
  const lbID = pick.select.value;
  if (!lbID) return { nodes: [...head, el('p', { class: 'muted', text: 'No load balancer yet: create one on the Configuration page.' })] };
  const lb = pick.lbs.find((l) => l.id === lbID);
  const [pools, regions] = await Promise.all([list('pools'), call('GET', '/regions').then((r) => r.data)]);
  const byID = new Map(pools.map((p) => [p.id, p]));
  const order = poolOrder(lb);
  const colourOf = new Map(order.map((id, i) => [id, PALETTE[i % PALETTE.length]]));
  const colour = (id) => (id ? colourOf.get(id) || PALETTE[PALETTE.length - 1] : NONE);
  const poolName = (id) => byID.get(id)?.name || id;

  // The hour's 10-second buckets are kept for an hour: start at the first
  // whole bucket that is still kept when the request arrives.
  const until = new Date(), since = new Date(Math.ceil((until - RANGES[range].ms) / 10e3) * 10e3 + 10e3);
  const [byPool, byOrigin, byRegion, ms, now] = await Promise.all([
    analytics(lbID, since, until, 'pool', RANGES[range].step),
    analytics(lbID, since, until, 'pool,origin', RANGES[range].step),
    analytics(lbID, since, until, 'region'),
    marks(new Map(order.map((id) => [id, poolName(id)])), since, until),
    regionPools(lbID, regions),
  ]);
  const regionAnswers = new Map((byRegion.totals || []).map((r) => [r.region, r.answers]));
  const total = byPool.answers ?? (byPool.totals || []).reduce((s, r) => s + r.answers, 0);

  const poolBuckets = bucketsOf(byPool.series, (g) => g.pool);
  const originBuckets = bucketsOf(byOrigin.series, (g) => `${g.pool}/${g.origin}`);
  const originKeys = [...new Set((byOrigin.totals || []).map((r) => `${r.pool}/${r.origin}`))]
    .sort((a, b) => order.indexOf(a.split('/')[0]) - order.indexOf(b.split('/')[0]) || a.localeCompare(b));
  // Origins of one pool share its hue, lighter for each next origin.
  const originColour = (k) => {
    const [p] = k.split('/');
    const i = originKeys.filter((o) => o.startsWith(p + '/')).indexOf(k);
    return shade(colour(p), i);
  };
  const map = await worldMap(regions, now, colour, regionAnswers);
  const rows = regions.map((r) => el('tr', { 'data-region': r.code },
    el('td', { 'data-label': 'region', text: `${r.code} — ${r.name}` }),
    el('td', { 'data-label': 'answered from now', class: 'region-pool', text: now.get(r.code) ? poolName(now.get(r.code)) : '—' }),
    el('td', { 'data-label': 'answers', class: 'region-answers', text: (regionAnswers.get(r.code) || 0).toLocaleString('en') })));
  const nodes = [...head,
    el('section', { class: 'card' },
      el('h2', { text: `Answers of ${lb.name} by pool` }),
      el('p', { class: 'muted', id: 't-total', text: `${total.toLocaleString('en')} answers from ${when(since)} to ${when(until)}, counted by every node and merged; dashed lines mark origins going down (red), recovering (green) and shifts (amber).` }),
      legend(order.map((id) => [id, poolName(id), colour(id)])),
      chart('t-pools', `Answers per pool over the ${RANGES[range].label}`, poolBuckets, order, colour, poolName, ms, new Date(byPool.complete_until).getTime()),
      el('h3', { text: 'By origin' }),
      legend(originKeys.map((k) => [k, `${poolName(k.split('/')[0])} / ${k.split('/')[1]}`, originColour(k)])),
      chart('t-origins', 'Answers per origin', originBuckets, originKeys, originColour, (k) => `${poolName(k.split('/')[0])} / ${k.split('/')[1]}`, ms, new Date(byOrigin.complete_until).getTime()),
      ms.length ? el('ul', { id: 't-marks', class: 'plain' }, ms.map((m) => el('li', { 'data-kind': m.kind, text: `${when(m.at)}: ${m.text}` }))) : null),
    el('section', { class: 'card' },
      el('h2', { text: 'Where the clients are, and which pool answers them now' }),
      legend(order.map((id) => [id, poolName(id), colour(id)]), 't-map-legend'),
      el('div', { class: 'map-wrap' }, map),
      el('div', { class: 'table-wrap' }, el('table', { class: 'stack', id: 't-regions' },
        el('thead', {}, el('tr', {}, el('th', { text: 'Region' }), el('th', { text: 'Answered from now' }), el('th', { text: 'Answers in range' }))),
        el('tbody', {}, rows))))];
  return {
    nodes,
    refresh: async () => 'rerender',
    // New counts arrive whether or not anything changes: redraw every
    // 10 s (one bucket) while the page is shown.
    bind: (redraw) => {
      clearInterval(ticker);
      ticker = setInterval(() => {
        if (!location.hash.startsWith('#traffic')) { clearInterval(ticker); return; }
        redraw(() => trafficPage(arg));
      }, 10000);
    },
  };
}

let ticker = null;

// shade lightens a #rrggbb colour by step i (0 = itself).
function shade(hex, i) {
  const n = parseInt(hex.slice(1), 16), f = Math.min(0.7, i * 0.22);
  const c = [n >> 16, (n >> 8) & 255, n & 255].map((v) => Math.round(v + (255 - v) * f));
  return '#' + c.map((v) => v.toString(16).padStart(2, '0')).join('');
}
