import { follow, setToken, whenUnauthorized } from './api.js';
import { el, localTimes, setLocalTimes, timeZoneLabel } from './dom.js';
import { overview } from './overview.js';
import { poolPage } from './pool.js';
import { explainPage } from './explain.js';
import { previewPage } from './preview.js';
import { auditPage } from './audit.js';
import { editPage, configPage } from './edit.js';
import { tsigPage } from './tsig.js';
import { notificationsPage } from './notifications.js';
import { trafficPage } from './traffic.js';
import { rolloutsPage } from './rollouts.js';
import { nodesPage } from './nodes.js';

const main = document.getElementById('main');
const login = document.getElementById('login');
const live = document.getElementById('live');

let signedIn = false;
whenUnauthorized(() => {
  if (!login.hidden) return;
  login.hidden = false;
  document.getElementById('login-error').textContent = signedIn ? 'The API refused that token (401): it is wrong, revoked or expired.' : '';
  main.replaceChildren();
  document.getElementById('token').focus();
});
login.addEventListener('submit', (ev) => {
  ev.preventDefault();
  signedIn = true;
  setToken(document.getElementById('token').value);
  document.getElementById('token').value = '';
  login.hidden = true;
  route();
});

const pages = {
  overview: () => overview(),
  pool: (arg) => poolPage(arg),
  explain: (arg) => explainPage(arg),
  preview: () => previewPage(),
  traffic: (arg) => trafficPage(arg),
  audit: (arg) => auditPage(arg),
  config: () => configPage(),
  edit: (arg) => editPage(arg),
  tsig: () => tsigPage(),
  notifications: (arg) => notificationsPage(arg),
  rollouts: () => rolloutsPage(),
  nodes: () => nodesPage(),
};

// The page shown: what redraws it, and a generation number so that a
// slow page that finishes after the operator moved on draws nothing.
let current = { refresh: null };
let generation = 0;

async function draw(render, gen, focus) {
  try {
    const page = await render();
    if (gen !== generation) return;
    // A redraw that would show the same thing leaves the page alone.
    if (page.key !== undefined && page.key === current.key && !focus) return;
    const had = document.activeElement?.id;
    main.replaceChildren(...page.nodes);
    current = page;
    page.bind?.((r, f) => draw(r, gen, f));
    if (focus === 'title') main.querySelector('.page-title')?.focus();
    else if (focus === 'save') document.getElementById('save')?.focus();
    else if (had) document.getElementById(had)?.focus();
  } catch (e) {
    if (gen !== generation) return;
    if (e.status === 401) return; // the sign-in form is shown
    main.replaceChildren(el('p', { class: 'error', role: 'alert', text: e.message }));
  }
}

// where reads the page and its argument from the location's fragment:
// #pool/<id>, #audit/kind=pools&page=2.
// #explain?lb=www&client=198.51.100.7 passes its query as the argument.
// The query is cut off first: its values may hold a "/" (ecs=.../24).
function where() {
  const h = location.hash.slice(1), q = h.indexOf('?');
  const query = q >= 0 ? h.slice(q + 1) : '';
  const [name, ...rest] = (q >= 0 ? h.slice(0, q) : h).split('/');
  const path = rest.join('/');
  const arg = query ? (path ? `${path}?${query}` : query) : path;
  return { name: pages[name] ? name : 'overview', arg };
}

function route() {
  const { name, arg } = where();
  const gen = ++generation;
  current = { refresh: null };
  for (const a of document.querySelectorAll('nav a')) {
    if (a.getAttribute('href') === '#' + name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  // After a link was followed, focus moves to the new page's title, so
  // that the keyboard and screen readers start there.
  return draw(() => pages[name](arg), gen, document.activeElement && document.activeElement !== document.body ? 'title' : null);
}
window.addEventListener('hashchange', route);

// Live updates: each event (or, with the stream down, each poll) asks the
// page whether to redraw. Events that come while a redraw is under way
// are folded into one more.
let busy = false, again = null;
async function onEvent(name) {
  if (busy) { again = name; return; }
  busy = true;
  try {
    const gen = generation;
    const r = await current.refresh?.(name);
    const a = document.activeElement;
    const typing = a && main.contains(a) && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName);
    if (r === 'rerender' && gen === generation && !typing) {
      const { name: n, arg } = where();
      await draw(() => pages[n](arg), gen);
    }
  } catch (e) {
    // A failed refresh leaves the page as it was; the next event retries.
  } finally {
    busy = false;
    if (again) { const n = again; again = null; onEvent(n); }
  }
}
follow(onEvent, (s) => {
  live.textContent = { live: 'live', 'signed-out': 'not signed in' }[s] || 'polling (event stream down)';
  live.dataset.state = s;
});

// Times read in UTC unless the operator asks for the browser's zone; the
// choice is kept in this browser.
const tz = document.getElementById('tz');
const showTZ = () => { tz.textContent = `Times: ${timeZoneLabel()}`; tz.setAttribute('aria-pressed', String(localTimes())); };
tz.addEventListener('click', () => { setLocalTimes(!localTimes()); showTZ(); route(); });
showTZ();
route();
