// The console's only way to the server: the public REST API, with the
// token from this tab's session storage, ETags and problem+json errors.
const KEY = 'glb-token';

export class Problem extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

export function token() { return sessionStorage.getItem(KEY) || ''; }
export function setToken(t) { sessionStorage.setItem(KEY, t); }

let onUnauthorized = () => {};
export function whenUnauthorized(f) { onUnauthorized = f; }

// call returns {data, etag, info}: the result, the ETag and, for a list,
// its result_info. A non-2xx answer throws a Problem.
export async function call(method, path, body, ifMatch) {
  const headers = { 'Accept': 'application/json' };
  if (token()) headers['Authorization'] = 'Bearer ' + token();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (ifMatch) headers['If-Match'] = ifMatch;
  const r = await fetch('/api/v1' + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (r.status === 401) onUnauthorized();
  if (!r.ok) throw new Problem(r.status, data);
  return { data: data && data.result, etag: r.headers.get('ETag'), info: data && data.result_info };
}

export async function list(kind) {
  const out = [];
  for (let page = 1; ; page++) {
    const r = await fetch(`/api/v1/${kind}?per_page=100&page=${page}`, { headers: token() ? { 'Authorization': 'Bearer ' + token() } : {}, cache: 'no-store' });
    const body = await r.json().catch(() => null);
    if (r.status === 401) onUnauthorized();
    if (!r.ok) throw new Problem(r.status, body);
    out.push(...body.result);
    if (page >= body.result_info.total_pages) return out;
  }
}

// follow reads GET /events through fetch, since EventSource cannot send
// the Authorization header and the token must never be in a URL. onEvent
// gets (name, data); onState gets 'live', 'polling' or 'signed-out'. When the stream
// drops, the console polls every 5 s and tries the stream again.
export function follow(onEvent, onState) {
  let stopped = false;
  const poll = setInterval(() => { if (state === 'polling') onEvent('poll', null); }, 5000);
  let state = 'polling';
  const set = (s) => { state = s; onState(s); };
  async function run() {
    while (!stopped) {
      try {
        const headers = token() ? { 'Authorization': 'Bearer ' + token() } : {};
        const r = await fetch('/api/v1/events', { headers, cache: 'no-store' });
        if (r.status === 401) {
          // Not signed in yet: nothing to follow until a token is given.
          set('signed-out');
          await new Promise((res) => setTimeout(res, 1000));
          continue;
        }
        if (!r.ok) throw new Error('events: HTTP ' + r.status);
        set('live');
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i); buf = buf.slice(i + 2);
            let name = 'message', data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) name = line.slice(7);
              else if (line.startsWith('data: ')) data += line.slice(6);
            }
            if (data) onEvent(name, JSON.parse(data));
          }
        }
      } catch (e) { /* fall through to polling */ }
      set('polling');
      await new Promise((res) => setTimeout(res, 2000));
    }
  }
  run();
  return () => { stopped = true; clearInterval(poll); };
}
