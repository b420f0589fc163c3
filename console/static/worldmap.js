// The world map of the traffic page: the countries of a vendored, pinned
// copy of world-atlas (Natural Earth 1:110m, TopoJSON) coloured by the
// region glb places their clients in, drawn as SVG in an equirectangular
// projection. See vendor/README.md for the sources.

const SVG = 'http://www.w3.org/2000/svg';
export const WIDTH = 960, HEIGHT = 480;
// The map shows 84° N to 60° S: no one asks from Antarctica.
export const TOP = 16, BOTTOM = 400;

export function svg(tag, attrs = {}, ...kids) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, v);
  for (const k of kids.flat(Infinity)) if (k) e.append(k);
  return e;
}

export const project = (lon, lat) => [(lon + 180) / 360 * WIDTH, (90 - lat) / 180 * HEIGHT];

// The three shapes world-atlas gives no ISO number: their countries by
// the codes GeoIP databases use.
const UNNUMBERED = { Kosovo: 'XK', 'N. Cyprus': 'CY', Somaliland: 'SO' };

// The United States and Canada are split between WNAM and ENAM by
// subdivision; at this scale the map draws the split at a meridian: the
// Mountain/Central time-zone line in the United States, the Manitoba–
// Ontario border in Canada (the Prairies go west).
export const SPLIT = { US: -101, CA: -95 };

let loaded = null;

// countries returns [{code, name, d}] once per page load: the country's
// alpha-2 code and its SVG path.
export function countries() {
  loaded ??= (async () => {
    const [topo, codes] = await Promise.all([
      fetch('vendor/world-atlas/countries-110m.json').then((r) => r.json()),
      fetch('vendor/i18n-iso-countries/codes.json').then((r) => r.json()),
    ]);
    const alpha2 = Object.fromEntries(codes.map(([a2, , num]) => [num, a2]));
    const arcs = decodeArcs(topo);
    return topo.objects.countries.geometries.filter((g) => g.id !== '010').map((g) => ({
      code: alpha2[g.id] || UNNUMBERED[g.properties.name] || '',
      name: g.properties.name,
      d: pathOf(g, arcs),
    }));
  })();
  return loaded;
}

// decodeArcs turns the topology's quantized, delta-encoded arcs into
// projected points.
function decodeArcs(topo) {
  const [sx, sy] = topo.transform.scale, [tx, ty] = topo.transform.translate;
  return topo.arcs.map((arc) => {
    let x = 0, y = 0;
    return arc.map(([dx, dy]) => { x += dx; y += dy; return project(x * sx + tx, y * sy + ty); });
  });
}

// ring joins a ring's arcs (a negative index is arc ~i reversed, whose
// first point repeats the previous arc's last) and unwraps it across the
// antimeridian, so that Russia or Fiji does not cross the whole map: their
// points may then lie beyond an edge, and pathOf draws them again a
// world's width over.
function ring(indexes, arcs) {
  const pts = [];
  for (const i of indexes) {
    const a = i >= 0 ? arcs[i] : arcs[~i].slice().reverse();
    for (const [x0, y] of pts.length ? a.slice(1) : a) {
      let x = x0;
      const prev = pts.length ? pts[pts.length - 1][0] : x;
      while (x - prev > WIDTH / 2) x -= WIDTH;
      while (prev - x > WIDTH / 2) x += WIDTH;
      pts.push([x, y]);
    }
  }
  return pts;
}

function pathOf(g, arcs) {
  const polys = g.type === 'Polygon' ? [g.arcs] : g.type === 'MultiPolygon' ? g.arcs : [];
  const rings = polys.flatMap((rs) => rs.map((r) => ring(r, arcs)));
  const xs = rings.flat().map(([x]) => x);
  const shifts = [0];
  if (Math.max(...xs) > WIDTH) shifts.push(-WIDTH);
  if (Math.min(...xs) < 0) shifts.push(WIDTH);
  return shifts.map((dx) => rings.map((pts) => 'M' + pts.map(([x, y]) => `${(x + dx).toFixed(1)},${y.toFixed(1)}`).join('L') + 'Z').join('')).join('');
}
