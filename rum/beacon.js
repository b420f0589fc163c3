// glb RUM beacon: times each pool's probe object after the page loaded
// and reports the times. No dependencies; configured by the server.
(function () {
  "use strict";
  var cfg = /*GLB_RUM_CONFIG*/null;
  var script = document.currentScript;
  if (!cfg || !script || !window.fetch || !navigator.sendBeacon) { return; }
  var base = script.src;
  function token() {
    var a = new Uint8Array(12), s = "", i;
    (window.crypto || window.msCrypto).getRandomValues(a);
    for (i = 0; i < a.length; i++) { s += (a[i] % 36).toString(36); }
    return s + Date.now().toString(36).slice(-4);
  }
  function time(url) {
    var u = url + (url.indexOf("?") < 0 ? "?" : "&") + "glbrum=" + Math.random().toString(36).slice(2);
    var t0 = performance.now();
    return fetch(u, { mode: "no-cors", cache: "no-store", credentials: "omit" }).then(function () {
      var e = performance.getEntriesByName(u);
      var ms = e.length && e[e.length - 1].duration > 0 ? e[e.length - 1].duration : performance.now() - t0;
      return ms;
    }, function () { return null; });
  }
  function run() {
    var tok = token();
    // The unique name tells glb which resolver asks for this browser.
    if (cfg.zone) {
      fetch(location.protocol + "//" + tok + ".rum." + cfg.zone + "/", { mode: "no-cors", credentials: "omit" }).catch(function () {});
    }
    var pools = cfg.pools, out = [], i = 0;
    function next() {
      if (i >= pools.length) {
        if (out.length) {
          navigator.sendBeacon(new URL("/rum/v1/report", base).href,
            JSON.stringify({ key: cfg.key, token: cfg.zone ? tok : "", m: out }));
        }
        if (window.glbRumDone) { window.glbRumDone(out); }
        return;
      }
      var p = pools[i++];
      time(p.url).then(function (ms) {
        if (ms !== null) { out.push({ p: p.id, ms: Math.round(ms * 10) / 10 }); }
        next();
      });
    }
    next();
  }
  if (document.readyState === "complete") { setTimeout(run, 0); }
  else { window.addEventListener("load", function () { setTimeout(run, 0); }); }
})();
