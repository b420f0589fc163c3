// A load balancer's real user measurements, on its page: per region,
// then per country, per autonomous system and per client network, the pool its users measure fastest and every pool's
// median, p75 and samples, as measured_latency ranks by them (GET
// /load_balancers/{id}/rum, which glbctl rum prints too).
import { call } from './api.js';
import { el, when } from './dom.js';
import { REGION_NAMES } from './edit.js';

const ms = (x) => `${x.toFixed(1)} ms`;

// groupRow is one group's row: the fastest pool, then each pool's
// figures in ranking order; a pool short of min_samples is marked.
function groupRow(kind, g, names) {
  const label = kind === 'region' ? `${g.group} — ${REGION_NAMES[g.group] || g.group}` : kind === 'country' ? `${g.group} (${g.region || '?'})` : g.group;
  return el('tr', { 'data-group': g.group, 'data-level': kind },
    el('th', { scope: 'row', text: label }),
    el('td', { class: 'rum-fastest', text: g.fastest ? names.get(g.fastest) || g.fastest : 'not enough samples' }),
    el('td', {}, el('ol', { class: 'plain rum-pools' }, g.pools.map((p) => el('li', { 'data-pool': p.pool, 'data-median': p.median_ms, 'data-p75': p.p75_ms, 'data-samples': p.samples,
      class: p.counted ? '' : 'muted',
      text: `${p.name}: median ${ms(p.median_ms)}, p75 ${ms(p.p75_ms)}, ${p.samples} sample${p.samples === 1 ? '' : 's'}${p.counted ? '' : ' (under min_samples)'}` })))));
}

function groupTable(kind, caption, groups, names) {
  return el('table', { class: 'rum-table', 'data-level': kind },
    el('caption', { text: caption }),
    el('thead', {}, el('tr', {}, [kind, 'fastest for its users', 'pools, fastest first'].map((t) => el('th', { scope: 'col', text: t })))),
    el('tbody', {}, groups.map((g) => groupRow(kind, g, names))));
}

// rumCard draws lb's table; for a load balancer not steered by
// measured_latency with no figures, a line saying so.
export async function rumCard(lb) {
  const { data: v } = await call('GET', `/load_balancers/${encodeURIComponent(lb.id)}/rum?limit=20`);
  const t = v.table;
  const names = new Map(t.pools.map((p) => [p.id, p.name]));
  const kids = [el('h2', { text: 'Real user measurements' })];
  const policy = v.steering_policy === 'measured_latency' ? 'ranks the pools by these figures' : `is steered by ${v.steering_policy}: these figures rank nothing until its policy is measured_latency`;
  if (!t.built || !t.regions.length && !t.countries.length && !t.asns.length && !t.networks.length) {
    const none = t.built ? `No browser has reported on its pools over the last ${t.window}.` : 'This node has no real user measurements yet.';
    kids.push(el('p', { class: 'muted', id: 'rum-none', text: `${none} ${lb.name} ${policy}.` }));
    return el('section', { class: 'card', id: 'rum', 'aria-label': 'Real user measurements' }, ...kids);
  }
  kids.push(el('p', { class: 'muted', id: 'rum-summary',
    text: `What browsers running the beacon measured over the last ${t.window} (table built ${when(t.built)}); ${lb.name} ${policy}. A pool needs ${t.min_samples} samples in a group for its median to count; the narrowest group with two such pools decides (network, then autonomous system, then country, then region).` }));
  if (!t.regions.length && !t.countries.length) kids.push(el('p', { class: 'muted', id: 'rum-unplaced', text: 'No reporting network is placed in a country or region.' }));
  if (t.regions.length) kids.push(groupTable('region', 'By region', t.regions, names));
  if (t.countries.length) kids.push(groupTable('country', 'By country', t.countries, names));
  if (t.asns.length) {
    kids.push(el('details', { id: 'rum-asns' }, el('summary', { text: `Autonomous systems (${t.asns.length} of ${t.asns_total}, most samples first)` }),
      groupTable('asn', 'By autonomous system', t.asns, names)));
  }
  if (t.networks.length) {
    kids.push(el('details', { id: 'rum-networks' }, el('summary', { text: `Client networks (${t.networks.length} of ${t.networks_total}, most samples first)` }),
      groupTable('network', 'By client network', t.networks, names)));
  }
  return el('section', { class: 'card', id: 'rum', 'aria-label': 'Real user measurements' }, ...kids);
}
