import { call, list, Problem } from './api.js';
import { el, field, policyName } from './dom.js';
import { REGIONS } from './preview.js';
import { dnssecCard } from './dnssec.js';
import { zoneFileCard, transferCard } from './zonefile.js';
import { versionsCard } from './versions.js';
import { rolloutsCard } from './rollouts.js';
import { rumCard } from './rum.js';

// The console's create, edit and delete of every kind of object, through
// the same API calls a script makes: POST to create, PUT with If-Match to
// save, DELETE with If-Match. Each kind is a list of fields; a field knows
// its API path, how to draw its control and how to read it back.

// num sends what the operator typed: a number when it is one, else the
// text, so that the API's validation names the field.
const num = (s) => { const t = String(s).trim(); return t !== '' && !isNaN(Number(t)) ? Number(t) : t; };
const optNum = (s) => (String(s).trim() === '' ? null : num(s));
const lines = (s) => String(s).split('\n').map((l) => l.trim()).filter(Boolean);

// Pools are written by name and sent by id; a name no pool has is sent
// as typed, so that the API names it.
function poolIDs(text, pools) {
  return String(text).split(',').map((s) => s.trim()).filter(Boolean)
    .map((s) => pools.find((p) => p.name === s)?.id || pools.find((p) => p.id === s)?.id || s);
}
const poolNames = (ids, pools) => (ids || []).map((id) => pools.find((p) => p.id === id)?.name || id).join(', ');

// A geo map is one line per code: "GB: web-eu, web-us".
function readMap(text, ctx) {
  const out = {};
  for (const l of lines(text)) {
    const [code, rest = ''] = l.split(/:(.*)/s);
    out[code.trim()] = poolIDs(rest, ctx.pools);
  }
  return out;
}
const showMap = (m, ctx) => Object.entries(m || {}).map(([k, ids]) => `${k}: ${poolNames(ids, ctx.pools)}`).join('\n');

// A header map is one line per value, as in HTTP: "Host: example.org".
// A line without a colon is sent as a name without values, so that the
// API names it.
function readHeaders(text) {
  const out = {};
  for (const l of lines(text)) {
    const i = l.indexOf(':');
    const name = (i < 0 ? l : l.slice(0, i)).trim();
    out[name] = out[name] || [];
    if (i >= 0) out[name].push(l.slice(i + 1).trim());
  }
  return out;
}
const showHeaders = (h) => Object.entries(h || {}).flatMap(([k, vs]) => (vs.length ? vs : ['']).map((v) => `${k}: ${v}`)).join('\n');

// Pool weights are one line per pool: "web-eu: 0.75".
function readWeights(text, ctx) {
  const out = {};
  for (const l of lines(text)) {
    const [name, w = ''] = l.split(/:(.*)/s);
    out[poolIDs(name, ctx.pools)[0] || name.trim()] = num(w);
  }
  return out;
}
const showWeights = (m, ctx) => Object.entries(m || {}).map(([id, w]) => `${poolNames([id], ctx.pools)}: ${w}`).join('\n');
const commaList = (s) => String(s).split(',').map((x) => x.trim()).filter(Boolean);

// A static record is a zone-file line: "name [ttl] TYPE content".
function readRecords(text) {
  return lines(text).map((l) => {
    const f = l.split(/\s+/);
    const r = { name: f.shift() || '' };
    if (/^\d+$/.test(f[0] || '')) r.ttl = Number(f.shift());
    r.type = (f.shift() || '').toUpperCase();
    r.content = f.join(' ');
    return r;
  });
}
// keepExtras gives each record read from the text the members the text
// does not show (an owner label...) of the stored record it still is.
function keepExtras(rs, stored) {
  const left = [...(stored || [])];
  return rs.map((r) => {
    const i = left.findIndex((o) => o.name === r.name && o.type === r.type && o.content === r.content);
    if (i < 0) return r;
    const [o] = left.splice(i, 1);
    const out = { ...o, ...r };
    if (r.ttl === undefined) delete out.ttl;
    return out;
  });
}
// obj0 is the object the form was opened on (set by editPage).
let obj0 = {};
const showRecords = (rs) => (rs || []).map((r) => [r.name, r.ttl || '', r.type, r.content].filter((x) => x !== '').join(' ')).join('\n');

const get = (o, path) => path.split('.').reduce((v, k) => (v == null ? undefined : v[k]), o);
function set(o, path, v) {
  const ks = path.split('.');
  let cur = o;
  for (const k of ks.slice(0, -1)) cur = cur[k] = (cur[k] && typeof cur[k] === 'object') ? cur[k] : {};
  cur[ks.at(-1)] = v;
}

// monitorTarget says what a monitor checks, by its type.
const monitorTarget = (m) => {
  switch (m.type) {
    case 'tcp': return `port ${m.port}`;
    case 'udp': return `port ${m.port} expects ${JSON.stringify(m.expect || '')}`;
    case 'dns': return `${m.query_name} ${m.query_type} over ${m.protocol || 'udp'} expects ${m.expected_rcode || 'NOERROR'}${m.expected_answer ? ' ' + m.expected_answer : ''}`;
    case 'smtp': return `port ${m.port || 25}${m.starttls ? ' STARTTLS' : ''} expects 220 and EHLO`;
    case 'tls': return `${m.server_name || 'address'}:${m.port || 443} valid ${m.min_days_valid || 0}+ days`;
    case 'grpc': return `Health/Check ${JSON.stringify(m.service || '')} on port ${m.port}${m.tls ? ' over TLS' : ''} expects SERVING`;
    case 'icmp': return `${m.count || 3} echo requests, loss <= ${m.max_loss || 0}%`;
    case 'feed': return `fed in, each word lasting ${m.ttl || 300} s`;
    default: return `${m.method} ${m.path} expects ${m.expected_codes}`;
  }
};

// Field makers: each returns {path, label, control, read(), hint}.
const text = (path, label, hint, attrs = {}) => (o) => {
  const c = el('input', { type: 'text', autocomplete: 'off', value: get(o, path) ?? '', ...attrs });
  return { path, label, hint, control: c, read: () => c.value.trim() };
};
const number = (path, label, hint) => (o) => {
  const c = el('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off', size: 8, value: get(o, path) ?? '' });
  return { path, label, hint, control: c, read: () => optNum(c.value) };
};
const check = (path, label, hint, dflt = true) => (o) => {
  const v = get(o, path);
  const c = el('input', { type: 'checkbox', checked: v === undefined ? dflt : v !== false });
  return { path, label, hint, control: c, read: () => c.checked };
};
// heading starts a part of a long form; it reads nothing.
const heading = (title, hint) => () => ({ heading: title, hint });
const choice = (path, label, options, hint) => (o, ctx) => {
  const opts = typeof options === 'function' ? options(o, ctx) : options;
  const cur = get(o, path) ?? '';
  const c = el('select', {}, opts.map(([v, t]) => el('option', { value: v, text: t, selected: v === cur })));
  return { path, label, hint, control: c, read: () => c.value };
};
const area = (path, label, hint, show, read, rows = 4) => (o, ctx) => {
  const c = el('textarea', { rows, spellcheck: 'false', value: show(get(o, path), ctx) });
  return { path, label, hint, control: c, read: () => read(c.value, ctx) };
};
// words is a list typed on one line, comma-separated; an error at one
// of its items (path[1]) is shown beside it as "<noun> 2".
const words = (path, label, hint, noun) => (o) => {
  const c = el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', value: (get(o, path) || []).join(', ') });
  return { path, label, hint, control: c, read: () => commaList(c.value), item: (i) => `${noun} ${i + 1}` };
};
// present is the checkbox that says whether an optional object is there
// at all: unchecked, the object is left out of what is saved (which
// removes it) and the fields under path are hidden.
const present = (path, label, hint) => (o) => {
  const c = el('input', { type: 'checkbox', checked: get(o, path) != null });
  return { path, label, hint, control: c, reveals: path + '.', finish: (body) => { if (!c.checked) set(body, path, undefined); } };
};

// origins is the pool's origins table: add, remove and change rows. Its
// controls are named o<i>-<field> like the pool page's, so that an error
// at origins[1].address lands beside that address.
const origins = () => (o) => {
  // host is the origin's Host header (header.Host), a column of its own.
  const draft = (o.origins || []).map((x) => ({ ...x, host: x.header?.Host?.[0] ?? '' }));
  if (!draft.length) draft.push({ name: '', address: '', weight: 1, enabled: true });
  const tbody = el('tbody');
  const addBtn = el('button', { type: 'button', id: 'add-origin', text: 'Add origin' });
  const cols = ['name', 'address', 'zone', 'weight', 'host'];
  function sync() {
    draft.forEach((x, i) => {
      for (const f of cols) x[f] = document.getElementById(`o${i}-${f}`)?.value ?? x[f];
      x.enabled = document.getElementById(`o${i}-enabled`)?.checked ?? x.enabled;
    });
  }
  function rows() {
    tbody.replaceChildren(...draft.map((x, i) => {
      const who = x.name || `origin ${i + 1}`;
      const inp = (f, attrs) => field(`o${i}-${f}`, `${f[0].toUpperCase() + f.slice(1)} of ${who}`,
        el('input', { type: 'text', autocomplete: 'off', value: f === 'weight' ? String(x.weight ?? 1) : x[f] ?? '', ...attrs }), { hideLabel: true });
      const remove = el('button', { type: 'button', class: 'remove', text: 'Remove', 'aria-label': `Remove ${who}` });
      remove.addEventListener('click', () => { sync(); draft.splice(i, 1); rows(); addBtn.focus(); });
      return el('tr', {},
        el('td', { 'data-label': 'name' }, inp('name', { placeholder: 'a' })),
        el('td', { 'data-label': 'address' }, inp('address', { placeholder: '192.0.2.1' })),
        el('td', { 'data-label': 'zone' }, inp('zone', { size: 8 })),
        el('td', { 'data-label': 'weight' }, inp('weight', { size: 5, inputmode: 'decimal' })),
        el('td', { 'data-label': 'host' }, inp('host', { size: 12, placeholder: 'Host header' })),
        el('td', { 'data-label': 'enabled' }, field(`o${i}-enabled`, `Enabled: ${who}`, el('input', { type: 'checkbox', checked: x.enabled !== false }), { hideLabel: true })),
        el('td', {}, remove));
    }));
  }
  addBtn.addEventListener('click', () => { sync(); draft.push({ name: '', address: '', weight: 1, enabled: true }); rows(); document.getElementById(`o${draft.length - 1}-name`).focus(); });
  rows();
  const control = el('div', { class: 'table-wrap' }, el('table', { class: 'stack edit' },
    el('thead', {}, el('tr', {}, [...cols, 'enabled', ''].map((t) => el('th', { scope: 'col', text: t })))), tbody), addBtn);
  return {
    path: 'origins', label: 'Origins', control, group: true,
    hint: 'Address: an IPv4 or IPv6 address, or a hostname (answered as a CNAME). Weight: a share in [0, 1]; each origin gets its weight over the sum of the pool\'s weights (0.7 and 0.3, or 1 and 1 for an even split; 0 takes none).',
    read: () => {
      sync();
      return draft.map((x) => {
        // Pasted values lose their surrounding spaces.
        const { host, ...out } = { ...x, name: (x.name || '').trim(), address: (x.address || '').trim(), zone: (x.zone || '').trim(), weight: num(x.weight) };
        if (!out.zone) delete out.zone;
        const header = { ...(out.header || {}) };
        if ((host || '').trim()) header.Host = [host.trim()]; else delete header.Host;
        if (Object.keys(header).length) out.header = header; else delete out.header;
        return out;
      });
    },
  };
};

// Cloudflare's names of its region codes.
export const REGION_NAMES = {
  WNAM: 'Western North America', ENAM: 'Eastern North America', WEU: 'Western Europe', EEU: 'Eastern Europe',
  NSAM: 'Northern South America', SSAM: 'Southern South America', OC: 'Oceania', ME: 'Middle East',
  NAF: 'Northern Africa', SAF: 'Southern Africa', SAS: 'Southern Asia', SEAS: 'South East Asia', NEAS: 'North East Asia',
};
const regionOptions = () => [['', '(none)'], ...REGIONS.map((c) => [c, `${c} — ${REGION_NAMES[c]}`])];

// The kinds: their API path, their name in a sentence, how a row of the
// list reads, and their fields in the order of the form.
export const KINDS = {
  zones: {
    one: 'zone', title: (z) => z.name,
    summary: (z) => `${(z.nameservers || []).join(', ')} · ${(z.records || []).length} static record(s)`,
    fields: [
      text('name', 'Name', 'the domain delegated to glb, e.g. glb.example.com'),
      area('nameservers', 'Nameservers', 'one a line: the names of the glbd nodes, as delegated', (v) => (v || []).join('\n'), lines, 2),
      text('soa.rname', 'Contact (SOA rname)', 'e.g. hostmaster.example.com'),
      number('ttl', 'TTL of static records (s)'),
      text('soa.mname', 'Primary nameserver (SOA mname)', 'empty = the first nameserver'),
      number('soa.refresh', 'SOA refresh (s)'),
      number('soa.retry', 'SOA retry (s)'),
      number('soa.expire', 'SOA expire (s)'),
      number('soa.minimum', 'SOA minimum: TTL of negative answers (s)'),
      area('records', 'Static records', 'one a line, as in a zone file: name [ttl] TYPE content — e.g. "ns1.glb.example.com A 192.0.2.53"', showRecords,
        (v) => keepExtras(readRecords(v), obj0.records), 4),
      check('dnssec.enabled', 'Sign answers (DNSSEC)', 'online signing; the first key is made when this is saved, and its DS is shown on this page for the parent zone', false),
      area('transfer.allow', 'Secondaries may transfer from', 'one network (CIDR) a line; empty and no key = no transfers', (v) => (v || []).join('\n'), lines, 2),
      area('transfer.tsig_keys', 'Transfers signed with TSIG key', 'one key name a line (TSIG keys page)', (v) => (v || []).join('\n'), lines, 1),
      area('transfer.notify', 'NOTIFY secondaries', 'one addr:port a line, e.g. 192.0.2.10:53', (v) => (v || []).join('\n'), lines, 1),
      number('transfer.min_interval', 'Least seconds between health-made changes', '0 = 5'),
    ],
  },
  monitors: {
    one: 'monitor', title: (m) => m.description || m.id,
    summary: (m) => `${m.type} ${monitorTarget(m)} every ${m.interval} s`,
    fields: [
      text('description', 'Description'),
      choice('type', 'Type', [['http', 'http'], ['https', 'https'], ['tcp', 'tcp'], ['udp', 'udp'], ['dns', 'dns'], ['tls', 'tls'], ['smtp', 'smtp'], ['grpc', 'grpc'], ['icmp', 'icmp'], ['feed', 'feed (health fed in: Alertmanager or a PUT)']]),
      text('method', 'Method', 'http and https'),
      text('path', 'Path', 'http and https, e.g. /healthz'),
      number('port', 'Port', '0 = the type\'s default (80, 443, dns 53, smtp 25); tcp, udp and grpc need one'),
      text('expected_codes', 'Expected codes', 'e.g. 200 or 2xx'),
      text('expected_body', 'Expected body', 'a substring; empty = any'),
      number('interval', 'Interval (s)'),
      number('timeout', 'Timeout (s)'),
      number('retries', 'Retries'),
      area('header', 'Request headers', 'http and https: one a line, "Name: value", e.g. "Host: www.example.com"', showHeaders, readHeaders, 2),
      check('follow_redirects', 'Follow redirects', 'http and https', false),
      check('allow_insecure', 'Allow an invalid certificate', 'https and tls', false),
      text('send', 'Send', 'udp: the datagram sent'),
      text('expect', 'Expect', 'udp: what the reply must contain; empty = any reply'),
      choice('payload_encoding', 'Send and expect as', [['', 'text'], ['hex', 'hex digits']]),
      text('query_name', 'Query name', 'dns, e.g. www.example.com'),
      text('query_type', 'Query type', 'dns, e.g. A, AAAA, TXT'),
      choice('protocol', 'DNS over', [['', 'udp'], ['tcp', 'tcp']]),
      text('expected_rcode', 'Expected rcode', 'dns; empty = NOERROR'),
      text('expected_answer', 'Expected answer', 'dns: a substring of one answer record, e.g. 192.0.2.1; empty = any'),
      text('server_name', 'Server name (SNI)', 'tls and smtp STARTTLS: the name the certificate must carry; empty = the origin\'s address'),
      check('starttls', 'STARTTLS', 'smtp: upgrade to TLS after EHLO', false),
      text('service', 'gRPC service', 'grpc: the name asked of grpc.health.v1.Health/Check; empty = the whole server'),
      check('tls', 'gRPC over TLS', 'grpc: verified for the server name unless an invalid certificate is allowed', false),
      number('count', 'Echo requests', 'icmp: per check; 0 = 3'),
      number('max_loss', 'Maximum loss (%)', 'icmp: down when more go unanswered'),
      number('min_days_valid', 'Minimum days valid', 'tls: down when the certificate expires within this many days'),
      number('ttl', 'A word lasts (s)', 'feed: how long a word fed in counts when it gives no ttl of its own (Alertmanager\'s never do: keep its repeat_interval below this); 0 = 300. Past it the origin is up again'),
      text('pool_label', 'Pool label', 'feed: the alert label naming the pool (its id or name); empty = glb_pool'),
      text('origin_label', 'Origin label', 'feed: the alert label naming the origin; empty = glb_origin'),
      number('consecutive_up', 'Successes in a row to be up', '0 or 1: one success is enough'),
      number('consecutive_down', 'Failures in a row to be down', '0 or 1: one failure is enough'),
    ],
  },
  pools: {
    one: 'pool', title: (p) => p.name,
    summary: (p, ctx) => `${p.origins.length} origin(s) · ${p.monitors?.length ? `monitor group of ${p.monitors.length}` : `monitor ${ctx.monitors.find((m) => m.id === p.monitor)?.description || p.monitor || 'none (not checked)'}`}${p.enabled ? '' : ' · disabled'}`,
    fields: [
      text('name', 'Name'),
      text('description', 'Description'),
      check('enabled', 'Enabled'),
      number('minimum_origins', 'Minimum healthy origins'),
      choice('monitor', 'Monitor', (o, ctx) => [['', o.monitors?.length ? 'none: the monitor group decides' : 'none: origins are not checked'], ...ctx.monitors.map((m) => [m.id, m.description || m.id])]),
      choice('origin_steering.policy', 'Origin steering', [['random', 'random (by weight)'], ['hash', 'hash (stable per client subnet)']]),
      number('latitude', 'Latitude', 'for proximity steering'),
      number('longitude', 'Longitude'),
      area('check_regions', 'Check regions', 'comma-separated region codes whose nodes check this pool; empty = every node', (v) => (v || []).join(', '), commaList, 1),
      present('rum', 'Timed by browsers (measured latency)', 'the beacon fetches the probe URL to time this pool'),
      text('rum.probe_url', 'Probe URL', 'a small object on the pool\'s origins, e.g. https://web-eu.example.com/rum.gif'),
      number('load_shedding.default_percent', 'Load shedding (%)', 'share of this pool\'s traffic passed on to the next candidate; 0 = none'),
      choice('load_shedding.default_policy', 'Load shedding by', [['random', 'random (each query)'], ['hash', 'hash (a client sticks)']]),
      present('load_shedding.by_load', 'Shed by the load origins report', 'through a feed monitor of the pool: between low and high an origin\'s share falls linearly; at high and above it takes none (unless all are)'),
      number('load_shedding.by_load.low', 'Low load', 'in [0, 1], e.g. 0.7: at or below, an origin keeps its whole share'),
      number('load_shedding.by_load.high', 'High load', 'in [0, 1], above low, e.g. 0.9: at or above, an origin takes no answers'),
      origins(),
    ],
  },
  networks: {
    one: 'network', title: (n) => n.cidr,
    summary: (n) => [n.description, n.zone && `zone ${n.zone}`, n.region, n.country].filter(Boolean).join(' · '),
    fields: [
      text('cidr', 'Prefix (CIDR)', 'e.g. 198.51.100.0/24'),
      text('description', 'Description'),
      text('zone', 'Zone', 'a free label matched against origins\' zones'),
      choice('region', 'Region', regionOptions),
      text('country', 'Country', 'ISO 3166-1 alpha-2, e.g. GB', { size: 4 }),
      number('latitude', 'Latitude'),
      number('longitude', 'Longitude'),
    ],
  },
  load_balancers: {
    one: 'load balancer', title: (l) => l.name,
    summary: (l, ctx) => `${policyName(l)} · ${poolNames(l.default_pools, ctx.pools)} · fallback ${poolNames([l.fallback_pool], ctx.pools)}${l.https ? ' · HTTPS record' : ''}${l.enabled ? '' : ' · disabled'}`,
    fields: [
      text('name', 'Name', 'a name inside the zone, e.g. www.glb.example.com'),
      choice('zone', 'Zone', (o, ctx) => [['', '(choose a zone)'], ...ctx.zones.map((z) => [z.id, z.name])]),
      text('description', 'Description'),
      check('enabled', 'Enabled'),
      number('ttl', 'TTL (s)'),
      choice('steering_policy', 'Steering policy', [['off', 'off: default pools in order'], ['geo', 'geo: by country, then region'],
        ['proximity', 'proximity: nearest pool'], ['dynamic_latency', 'dynamic latency: lowest RTT'],
        ['measured_latency', 'measured latency: fastest for real users'], ['random', 'random: by pool weight']],
      'geo uses the country and region pools below; random the pool weights; measured latency the real user measurements below'),
      text('default_pools', 'Default pools', 'pool names in order, comma-separated'),
      choice('fallback_pool', 'Fallback pool', (o, ctx) => [['', '(choose a pool)'], ...ctx.pools.map((p) => [p.id, p.name])],
        'answers when no pool is healthy, whatever its health'),
      area('country_pools', 'Country pools (geo)', 'one a line: "GB: web-eu, web-us" (ISO 3166-1 alpha-2 codes)', showMap, readMap, 3),
      area('region_pools', 'Region pools (geo)', 'one a line: "WEU: web-eu" (WNAM, ENAM, WEU, EEU, NSAM, SSAM, OC, ME, NAF, SAF, SAS, SEAS, NEAS)', showMap, readMap, 3),
      choice('location_strategy.prefer_ecs', 'Use the ECS subnet', [['auto', 'when the steering uses the client\'s location (default)'],
        ['always', 'always'], ['never', 'never: the resolver\'s address'], ['proximity', 'only with proximity steering'], ['geo', 'only with geo steering']],
      'when a resolver sends EDNS Client Subnet: the default follows the steering policy (geo, proximity, dynamic latency and zonal affinity locate the client by its subnet)'),
      number('answers', 'Records per answer', '0 = every eligible origin'),
      heading('Random steering', 'with the random policy: the odds a pool is tried first, among the healthy default pools'),
      number('random_steering.default_weight', 'Default pool weight', 'in [0, 1], for pools not listed below'),
      area('random_steering.pool_weights', 'Pool weights', 'one a line: "web-eu: 0.75" (weights in [0, 1])', showWeights, readWeights, 2),
      heading('Zonal affinity', 'keeps clients on origins of their own zone (a network\'s zone, or the region)'),
      choice('zonal_affinity.spillover', 'Mode', [['ZONAL_AFFINITY_DISABLED', 'disabled'],
        ['ZONAL_AFFINITY_SPILL_CROSS_ZONE', 'spill cross-zone below the ratio'], ['ZONAL_AFFINITY_STAY_WITHIN_ZONE', 'stay within the zone']]),
      number('zonal_affinity.spillover_ratio', 'Spillover ratio', 'spill cross-zone: the share, in [0, 1], of the client zone\'s origins that must be healthy to stay in it'),
      heading('Real user measurements', 'with measured latency: pages load /rum/v1/beacon.js?key=<site key>, browsers time each pool\'s probe URL, and the pools are ranked by what they measured'),
      present('rum', 'Take reports for this load balancer', 'unchecked: no beacon reports for it (measured latency then ranks by health-check RTT)'),
      words('rum.site_keys', 'Site keys', 'comma-separated, 8 to 64 letters, digits, - or _; public: they sit in the pages', 'site key'),
      words('rum.allowed_origins', 'Allowed page origins', 'comma-separated, e.g. https://shop.example.com; empty = any', 'origin'),
      number('rum.min_samples', 'Samples needed', 'a pool\'s samples in a group before its median ranks it; empty or 0 = 20'),
      heading('When every pool is down'),
      choice('all_down.action', 'Answer', [['fallback', 'the fallback pool, whatever its health'], ['nodata', 'NODATA (no record, the SOA)'],
        ['refused', 'REFUSED'], ['addresses', 'the sorry addresses below']]),
      area('all_down.addresses', 'Sorry addresses', 'one a line, IPv4 or IPv6', (v) => (v || []).join('\n'), lines, 2),
      heading('Shift safety', 'rules every shift must keep for this load balancer'),
      number('safety.min_serving_pools', 'Pools that must keep serving', 'a shift leaving fewer is refused; 0 = no rule'),
      number('safety.max_shifted_zones', 'Zones shifted at once, at most', '0 = no limit'),
      heading('HTTPS record', 'answers HTTPS queries for this name (RFC 9460) with these parameters, and as ipv4hint and ipv6hint the A and AAAA answer'),
      present('https', 'Answer HTTPS queries', 'unchecked: no HTTPS record (NODATA)'),
      words('https.alpn', 'ALPN protocol ids', 'comma-separated, e.g. h2, h3; empty = none advertised', 'protocol id'),
      check('https.no_default_alpn', 'No http/1.1 (no-default-alpn)', 'only the protocols listed above; needs ALPN', false),
      number('https.port', 'Port', 'empty = 443 (no port parameter)'),
      area('https.ech', 'ECH configuration', 'an ECHConfigList in standard base64; empty = none', (v) => v || '', (v) => v.trim(), 2),
    ],
  },
};

// context is what the forms choose from: zones, monitors, pools.
export async function context() {
  const [zones, monitors, pools] = await Promise.all([list('zones'), list('monitors'), list('pools')]);
  return { zones, monitors, pools };
}

let flash = '';
// takeFlash returns the last save's message once, for the page shown next.
export function takeFlash() { const f = flash; flash = ''; return f; }

// editPage: #edit/<kind> creates, #edit/<kind>/<id> edits and deletes.
// "?back=overview" returns to the overview after a create (the first
// steps walk from there).
export async function editPage(arg) {
  const [path, query = ''] = arg.split('?');
  const [kind, id] = path.split('/');
  const spec = KINDS[kind];
  if (!spec) throw new Error(`no such kind ${kind}`);
  const back = new URLSearchParams(query).get('back') === 'overview' ? '#overview' : '#config';
  const ctx = await context();
  let obj = {}, etag = null;
  if (id) ({ data: obj, etag } = await call('GET', `/${kind}/${id}`));
  if (kind === 'load_balancers') {
    obj = { ...obj, default_pools: poolNames(obj.default_pools, ctx.pools) };
    if (id) obj.steering_policy = policyName(obj);
    if (!id && !obj.zone && ctx.zones.length === 1) obj.zone = ctx.zones[0].id;
  }
  // A new pool is checked by the newest monitor (the one "create a
  // monitor first" just made), not left unchecked by default.
  const newest = [...ctx.monitors].sort((a, b) => String(b.created_on).localeCompare(String(a.created_on)))[0];
  if (kind === 'pools' && !id) obj = { enabled: true, minimum_origins: 1, monitor: newest?.id || '', origin_steering: { policy: 'random' }, load_shedding: { default_percent: 0, default_policy: 'random' } };
  if (kind === 'monitors' && !id) obj = { type: 'http', method: 'GET', path: '/', expected_codes: '200', interval: 60, timeout: 5, retries: 2, consecutive_up: 0, consecutive_down: 0 };
  if (kind === 'zones' && !id) obj = { ttl: 300, soa: { refresh: 14400, retry: 3600, expire: 604800, minimum: 300 } };
  if (kind === 'load_balancers' && !id) obj = { ...obj, enabled: true, ttl: 30, steering_policy: 'off', location_strategy: { prefer_ecs: 'auto' }, answers: 1,
    random_steering: { default_weight: 1 }, zonal_affinity: { spillover: 'ZONAL_AFFINITY_DISABLED', spillover_ratio: 0 }, all_down: { action: 'fallback' },
    safety: { min_serving_pools: 1, max_shifted_zones: 0 } };

  obj0 = obj;
  const fs = spec.fields.map((f) => f(obj, ctx));
  if (!id) fs.unshift(text('id', 'Id (optional)', 'letters, digits, - and _; empty = a random id')(obj));
  const fid = (p) => 'f-' + p.replaceAll('.', '-');
  const formError = el('p', { class: 'field-error', id: 'form-error', role: 'alert' });
  const status = el('p', { id: 'edit-status', role: 'status', 'aria-live': 'polite' });
  const save = el('button', { type: 'submit', id: 'save', text: id ? 'Save' : `Create ${spec.one}` });
  const form = el('form', { id: 'edit-form', 'aria-label': id ? `Edit ${spec.one} ${spec.title(obj)}` : `New ${spec.one}`, novalidate: true },
    fs.map((f) => f.heading ? el('div', { class: 'form-part' }, el('h3', { text: f.heading }), f.hint ? el('p', { class: 'muted hint', text: f.hint }) : '')
      : f.group
        ? el('fieldset', { class: 'group' }, el('legend', { text: f.label }), f.hint ? el('p', { class: 'muted hint', id: fid(f.path) + '-hint', text: f.hint }) : '',
          f.control, el('span', { class: 'field-error', id: fid(f.path) + '-error', role: 'alert' }))
        : el('div', { class: 'form-row' }, field(fid(f.path), f.label, f.control), f.hint ? el('span', { class: 'muted hint', id: fid(f.path) + '-hint', text: f.hint }) : '')),
    formError,
    el('div', { class: 'actions' }, save, el('a', { href: back, text: 'Cancel' }), etag ? el('span', { class: 'muted', text: ` editing revision ${etag.replaceAll('"', '')}` }) : ''),
    status);
  for (const f of fs) if (f.hint && f.control && !f.group) f.control.setAttribute('aria-describedby', `${fid(f.path)}-error ${fid(f.path)}-hint`);
  // A present checkbox shows the fields of its object only while checked.
  for (const t of fs.filter((f) => f.reveals)) {
    const rows = fs.filter((f) => f.path?.startsWith(t.reveals)).map((f) => f.control.closest('.form-row, fieldset'));
    const sync = () => { for (const r of rows) r.hidden = !t.control.checked; };
    t.control.addEventListener('change', sync);
    sync();
  }

  // place writes each field error beside its control: the field whose
  // path is the longest prefix of the error's, with the rest of the path
  // in front of the message (records[2].content: ...).
  function place(errors) {
    for (const s of form.querySelectorAll('.field-error')) s.textContent = '';
    for (const c of form.querySelectorAll('[aria-invalid]')) c.removeAttribute('aria-invalid');
    const loose = [];
    for (const fe of errors || []) {
      const m = /^origins\[(\d+)\]\.(name|address|zone|weight|enabled|header)/.exec(fe.path);
      const col = m && (m[2] === 'header' ? 'host' : m[2]);
      let slot = m && document.getElementById(`o${m[1]}-${col}-error`), ctl = m && document.getElementById(`o${m[1]}-${col}`), msg = fe.message;
      if (!slot) {
        const f = fs.filter((f) => f.path && (fe.path === f.path || fe.path.startsWith(f.path + '.') || fe.path.startsWith(f.path + '[')))
          .sort((a, b) => b.path.length - a.path.length)[0];
        if (f) {
          slot = document.getElementById(fid(f.path) + '-error');
          ctl = f.group ? null : f.control;
          // The rest of the path, a pool id in pool_weights, by its name.
          const rest = fe.path.slice(f.path.length).replace(/^\./, '');
          const i = /^\[(\d+)\]$/.exec(rest);
          if (fe.path !== f.path) msg = `${(i && f.item?.(Number(i[1]))) || ctx.pools.find((p) => p.id === rest)?.name || rest}: ${fe.message}`;
        }
      }
      if (!slot) { loose.push(`${fe.path}: ${fe.message}`); continue; }
      slot.textContent = slot.textContent ? `${slot.textContent}; ${msg}` : msg;
      ctl?.setAttribute('aria-invalid', 'true');
    }
    formError.textContent = loose.join('; ');
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.textContent = 'Saving…';
    status.className = '';
    // The stored object keeps what the form does not show (headers,
    // zonal affinity, DNSSEC...): the form's fields are set over it.
    const body = structuredClone(obj);
    for (const f of fs) if (f.read) set(body, f.path, f.read());
    for (const f of fs) f.finish?.(body);
    if (kind === 'load_balancers') body.default_pools = poolIDs(body.default_pools, ctx.pools);
    if (!id && !body.id) delete body.id;
    try {
      const r = id ? await call('PUT', `/${kind}/${id}`, body, etag) : await call('POST', `/${kind}`, body);
      flash = `${id ? 'Saved' : 'Created'} ${spec.one} ${spec.title(r.data)} (revision ${r.data.revision}).`;
      location.hash = id ? '#config' : back;
    } catch (e) {
      if (!(e instanceof Problem)) throw e;
      if (e.status === 412) {
        status.replaceChildren(`Conflict: someone changed this ${spec.one} since you opened it (your ETag ${etag} is stale). Nothing was saved. `,
          el('a', { href: `#edit/${kind}/${id}`, text: 'Reload it', onclick: (ev2) => { ev2.preventDefault(); window.dispatchEvent(new HashChangeEvent('hashchange')); } }));
        status.className = 'error';
        status.setAttribute('data-conflict', 'true');
        return;
      }
      place(e.body.errors);
      status.textContent = `Not saved: ${e.message}` + (e.body.errors?.length ? ' (see the fields marked)' : '');
      status.className = 'error';
      form.querySelector('[aria-invalid]')?.focus();
    }
  });

  const nodes = [el('h2', { text: id ? `Edit ${spec.one} ${spec.title(obj)}` : `New ${spec.one}`, tabindex: '-1', class: 'page-title' }),
    el('section', { class: 'card' }, form)];
  if (id && kind === 'zones') nodes.push(await dnssecCard(id), zoneFileCard(id), await transferCard(id));
  if (id && kind === 'load_balancers') nodes.push(await rumCard(obj), await rolloutsCard(obj), await versionsCard(id, spec.title(obj)));
  if (id) nodes.push(deleteBox(kind, id, spec, obj, etag));
  return { nodes };
}

// deleteBox deletes after a second click, with If-Match; a 409 names the
// objects that still refer to this one.
function deleteBox(kind, id, spec, obj, etag) {
  const msg = el('p', { id: 'delete-status', role: 'status', 'aria-live': 'polite' });
  const confirm = el('button', { type: 'button', id: 'delete-confirm', class: 'danger', hidden: true, text: `Yes, delete ${spec.one} ${spec.title(obj)}` });
  const ask = el('button', { type: 'button', id: 'delete', text: `Delete ${spec.one}…` });
  ask.addEventListener('click', () => { confirm.hidden = false; msg.textContent = 'Deleting cannot be undone.'; confirm.focus(); });
  confirm.addEventListener('click', async () => {
    try {
      await call('DELETE', `/${kind}/${id}`, undefined, etag);
      flash = `Deleted ${spec.one} ${spec.title(obj)}.`;
      location.hash = '#config';
    } catch (e) {
      if (!(e instanceof Problem)) throw e;
      // Disarmed: a refused delete asks again rather than stay one
      // click from a second try; each user is a link to its page.
      confirm.hidden = true;
      const refs = (e.body.referrers || []).map((r) => el('a', { href: `#edit/${r.kind.replace(/s?$/, 's')}/${encodeURIComponent(r.id)}`, 'data-referrer': r.id,
        text: `${r.kind.replace(/s$/, '').replace('_', ' ')} ${r.name || r.id}` }));
      msg.replaceChildren(`Not deleted: ${e.message}`, ...(refs.length ? [' (used by ', ...refs.flatMap((a, i) => (i ? [', ', a] : [a])), ')'] : []));
      msg.className = 'error';
      ask.focus();
    }
  });
  return el('section', { class: 'card', 'aria-label': 'Delete' }, el('h2', { text: 'Delete' }), el('div', { class: 'actions' }, ask, confirm), msg);
}

// configPage lists every object of every kind with a link to edit it and
// one to create another.
export async function configPage() {
  const ctx = await context();
  const [networks, lbs] = await Promise.all([list('networks'), list('load_balancers')]);
  const all = { zones: ctx.zones, monitors: ctx.monitors, pools: ctx.pools, networks, load_balancers: lbs };
  const notice = takeFlash();
  const nodes = [el('h2', { text: 'Configuration', tabindex: '-1', class: 'page-title' })];
  if (notice) nodes.push(el('p', { class: 'notice', id: 'flash', role: 'status', text: notice }));
  for (const kind of ['zones', 'monitors', 'pools', 'load_balancers', 'networks']) {
    const spec = KINDS[kind], objs = all[kind];
    nodes.push(el('section', { class: 'card', 'aria-label': kind.replace('_', ' '), 'data-kind': kind },
      el('h2', { text: kind[0].toUpperCase() + kind.slice(1).replace('_', ' ') }),
      objs.length ? el('ul', { class: 'plain objects' }, objs.map((o) => el('li', { 'data-id': o.id },
        el('a', { href: `#edit/${kind}/${o.id}`, text: spec.title(o) }), el('span', { class: 'muted', text: ` ${spec.summary(o, ctx)}` }))))
        : el('p', { class: 'muted', text: `No ${kind.replace('_', ' ')} yet.` }),
      el('p', {}, el('a', { href: `#edit/${kind}`, id: `new-${kind}`, class: 'button', text: `New ${spec.one}` }))));
  }
  return { nodes, key: JSON.stringify(all), refresh: () => 'rerender' };
}
