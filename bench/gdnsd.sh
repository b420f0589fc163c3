#!/usr/bin/env bash
# glbd against gdnsd, the C GSLB server, in one run on this machine: the
# same dnsperf load against each, fresh processes per repetition, the
# repetitions of the two interleaved in time, and the ratio of the medians.
#
# Both serve example.com with the same names: www (weighted 100/50/25/25
# over 192.0.2.1-4), hc (four loopback addresses, tcp-checked, three up:
# every up address), geo (by networks: 127/8 -> 192.0.2.21) and static
# (a plain A). gdnsd reads bench/gdnsd/; glbd is configured over its API.
#
# Query sets: www (only www) and mix (40 % www, 15 % hc, 15 % geo, 10 %
# static, 20 % random NXDOMAIN names; 10,000 lines, fixed seed).
#
# Configs: pinned (server on CPU 0, dnsperf on CPU 1: "QPS per busy
# server core" = QPS / busy share of CPU 0) and unpinned (both share all
# CPUs: plain QPS, where CPU cost per query decides).
#
# Usage: bench/gdnsd.sh            (needs go, gdnsd, dnsperf, dig, curl, taskset)
#        make bench-dns
# Knobs: DURATION (s, default 10), REPS (default 3), CONFIGS ("pinned
#        unpinned"), QSETS ("www mix"), SERVERS ("gdnsd glb"),
#        DNSPERF_ARGS ("-c 4 -T 2 -q 200 -t 1"), RUNDIR, GLBD_ARGS (extra
#        glbd flags, e.g. --pprof-listen 127.0.0.1:6060), GLBD_BIN (a
#        glbd binary to measure instead of building this checkout's), GDNSD_PORT,
#        GLBD_PORT, API_PORT, SINK_PORT.
# Target (issue #10): glb >= 0.9 x gdnsd in every row of the ratio table.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DURATION=${DURATION:-10}
REPS=${REPS:-3}
CONFIGS=${CONFIGS:-"pinned unpinned"}
QSETS=${QSETS:-"www mix"}
SERVERS=${SERVERS:-"gdnsd glb"}
DNSPERF_ARGS=${DNSPERF_ARGS:--c 4 -T 2 -q 200 -t 1}
RUNDIR=${RUNDIR:-$(mktemp -d -t glb-gdnsd.XXXXXX)}
GDNSD_PORT=${GDNSD_PORT:-15303}
GLBD_PORT=${GLBD_PORT:-15306}
API_PORT=${API_PORT:-18306}
SINK_PORT=${SINK_PORT:-18080}
GLBD_ARGS=${GLBD_ARGS:-}
SERVER_CPU=0
CLIENT_CPU=1
export PATH=$PATH:/usr/sbin:/sbin

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "gdnsd.sh: $*"; exit 1; }

for b in go gdnsd dnsperf dig curl taskset; do command -v "$b" >/dev/null || die "$b not found (Debian: gdnsd dnsperf bind9-dnsutils curl util-linux)"; done

PIDS=()
stop() { # pid: TERM, then KILL after 10 s
  local i
  kill -0 "$1" 2>/dev/null || return 0
  kill -TERM "$1" 2>/dev/null || true
  for i in $(seq 1 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() { local p; for p in "${PIDS[@]}"; do stop "$p"; done; }
trap cleanup EXIT
trap 'exit 130' INT TERM

busy() { ss -Hlun "sport = :$1" | grep -q . || ss -Hltn "sport = :$1" | grep -q .; }
for p in "$GDNSD_PORT" "$GLBD_PORT" "$API_PORT"; do busy "$p" && die "port $p is in use"; done

mkdir -p "$RUNDIR"/{bin,logs,raw,gdnsd/etc/zones,gdnsd/run,gdnsd/state}
log "building glbd and tcpsink into $RUNDIR/bin"
if [ -n "${GLBD_BIN:-}" ]; then cp "$GLBD_BIN" "$RUNDIR/bin/glbd"; else (cd "$ROOT" && go build -o "$RUNDIR/bin/glbd" ./cmd/glbd); fi
(cd "$ROOT" && go build -o "$RUNDIR/bin/tcpsink" ./bench/tcpsink)

sed -e "s#@RUNDIR@#$RUNDIR#g" -e "s#@PORT@#$GDNSD_PORT#g" -e "s#@SINK_PORT@#$SINK_PORT#g" \
  "$ROOT/bench/gdnsd/config" >"$RUNDIR/gdnsd/etc/config"
cp "$ROOT/bench/gdnsd/zones/example.com" "$RUNDIR/gdnsd/etc/zones/"
gdnsd -c "$RUNDIR/gdnsd/etc" checkconf >"$RUNDIR/logs/gdnsd-checkconf.log" 2>&1 ||
  { cat "$RUNDIR/logs/gdnsd-checkconf.log" >&2; die "gdnsd checkconf failed"; }

# Query files. mix is drawn with a fixed linear congruential generator, so
# every run and every machine sends the same 10,000 queries.
echo "www.example.com A" >"$RUNDIR/www.txt"
awk 'BEGIN { s = 12345
  for (i = 0; i < 10000; i++) {
    s = (s * 1103515245 + 12345) % 2147483648; r = s % 100
    if (r < 40) n = "www"; else if (r < 55) n = "hc"; else if (r < 70) n = "geo"
    else if (r < 80) n = "static"
    else { s = (s * 1103515245 + 12345) % 2147483648; n = sprintf("nx%06d", s % 1000000) }
    print n ".example.com A" } }' >"$RUNDIR/mix.txt"

"$RUNDIR/bin/tcpsink" -listen "127.0.1.1:$SINK_PORT,127.0.1.2:$SINK_PORT,127.0.1.3:$SINK_PORT" >"$RUNDIR/logs/tcpsink.log" 2>&1 &
PIDS+=($!)

port_of() { case "$1" in gdnsd) echo "$GDNSD_PORT" ;; glb) echo "$GLBD_PORT" ;; esac; }

configure_glb() {
  local api=http://127.0.0.1:$API_PORT/api/v1 i
  post() { curl -sf -X POST "$api/$1" -H 'Content-Type: application/json' -d "$2" >/dev/null || die "glbd: POST $1 failed: $2"; }
  for i in $(seq 1 100); do curl -sf "http://127.0.0.1:$API_PORT/healthz" >/dev/null && break; sleep 0.1; done
  post zones '{"id":"ex","name":"example.com","nameservers":["ns1.example.com"],"records":[{"name":"ns1.example.com","type":"A","content":"127.0.0.1"},{"name":"static.example.com","type":"A","content":"192.0.2.100","ttl":300}]}'
  post monitors "{\"id\":\"hc_tcp\",\"type\":\"tcp\",\"port\":$SINK_PORT,\"interval\":2,\"timeout\":1,\"consecutive_up\":2,\"consecutive_down\":2}"
  post pools '{"id":"www_w","name":"www_w","origins":[{"name":"dc1","address":"192.0.2.1","weight":1},{"name":"dc2","address":"192.0.2.2","weight":0.5},{"name":"dc3","address":"192.0.2.3","weight":0.25},{"name":"dc4","address":"192.0.2.4","weight":0.25}]}'
  post pools '{"id":"hc_mf","name":"hc_mf","monitor":"hc_tcp","origins":[{"name":"lb1","address":"127.0.1.1"},{"name":"lb2","address":"127.0.1.2"},{"name":"lb3","address":"127.0.1.3"},{"name":"lb4","address":"127.0.1.4"}]}'
  post pools '{"id":"dc-a","name":"dc-a","origins":[{"name":"a","address":"192.0.2.21"}]}'
  post pools '{"id":"dc-b","name":"dc-b","origins":[{"name":"b","address":"192.0.2.22"}]}'
  post networks '{"cidr":"127.0.0.0/8","region":"WEU"}'
  post networks '{"cidr":"10.0.0.0/8","region":"ENAM"}'
  post load_balancers '{"id":"www","zone":"ex","name":"www.example.com","default_pools":["www_w"],"fallback_pool":"www_w"}'
  post load_balancers '{"id":"hc","zone":"ex","name":"hc.example.com","default_pools":["hc_mf"],"fallback_pool":"hc_mf","answers":0}'
  post load_balancers '{"id":"geo","zone":"ex","name":"geo.example.com","steering_policy":"geo","region_pools":{"WEU":["dc-a","dc-b"],"ENAM":["dc-b","dc-a"]},"default_pools":["dc-a","dc-b"],"fallback_pool":"dc-a"}'
}

SPID=""
start_server() { # name config
  local name=$1 cfg=$2 port pre="" i t
  port=$(port_of "$name")
  [ "$cfg" = pinned ] && pre="taskset -c $SERVER_CPU"
  case "$name" in
    gdnsd) $pre gdnsd -c "$RUNDIR/gdnsd/etc" start >"$RUNDIR/logs/gdnsd-$cfg.log" 2>&1 & ;;
    glb)
      rm -rf "$RUNDIR/glb"
      # shellcheck disable=SC2086
      $pre "$RUNDIR/bin/glbd" serve --dns-listen "127.0.0.1:$port" --api-listen "127.0.0.1:$API_PORT" \
        --data-dir "$RUNDIR/glb" --log-level warn $GLBD_ARGS >"$RUNDIR/logs/glb-$cfg.log" 2>&1 & ;;
  esac
  SPID=$!
  PIDS+=("$SPID")
  [ "$name" = glb ] && configure_glb
  for i in $(seq 1 100); do
    if dig +norec +time=1 +tries=1 @127.0.0.1 -p "$port" www.example.com A +short 2>/dev/null | grep -q '^192\.0\.2\.'; then
      # every thread, also those started after launch, on the server CPU
      if [ "$cfg" = pinned ]; then for t in /proc/"$SPID"/task/*; do taskset -p -c "$SERVER_CPU" "${t##*/}" >/dev/null; done; fi
      # the health checks settle (two results each) before measuring
      dig +norec +short +time=1 +tries=1 @127.0.0.1 -p "$port" hc.example.com A >/dev/null || true
      sleep 5
      return 0
    fi
    kill -0 "$SPID" 2>/dev/null || { cat "$RUNDIR/logs/$name-$cfg.log" >&2; die "$name exited at start"; }
    sleep 0.2
  done
  die "$name did not answer on port $port"
}

ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12+$13}'; } # utime+stime
cpu0() { awk -v c="cpu$SERVER_CPU" '$1==c{print $2+$3+$4+$7+$8+$9}' /proc/stat; } # busy jiffies

measure() { # name cfg qset rep -> one CSV row
  local name=$1 cfg=$2 qset=$3 rep=$4 port pre="" raw t0 t1 b0 b1
  port=$(port_of "$name")
  raw="$RUNDIR/raw/$cfg-$name-$qset-$rep.txt"
  [ "$cfg" = pinned ] && pre="taskset -c $CLIENT_CPU"
  t0=$(ticks "$SPID"); b0=$(cpu0)
  # shellcheck disable=SC2086
  $pre dnsperf -s 127.0.0.1 -p "$port" -d "$RUNDIR/$qset.txt" -l "$DURATION" $DNSPERF_ARGS >"$raw" 2>&1 || true
  t1=$(ticks "$SPID"); b1=$(cpu0)
  awk -v n="$name" -v c="$cfg" -v q="$qset" -v r="$rep" -v t=$((t1 - t0)) -v b=$((b1 - b0)) -v hz="$(getconf CLK_TCK)" '
    /Queries per second:/ {qps=$4} /Queries lost:/ {lost=$3} /Run time \(s\):/ {rt=$4} /Average Latency/ {lat=$4*1000}
    END { if (rt == "" || rt == 0) rt = 1; busy = 100*b/hz/rt; if (busy > 100) busy = 100
          printf "%s,%s,%s,%s,%.0f,%.3f,%d,%.0f,%.0f\n", c, n, q, r, qps, lat, lost, 100*t/hz/rt, busy }' "$raw" >>"$RUNDIR/runs.csv"
  log "$(tail -1 "$RUNDIR/runs.csv")"
}

echo "config,server,qset,rep,qps,avg_latency_ms,lost,server_cpu_pct,cpu0_busy_pct" >"$RUNDIR/runs.csv"
for cfg in $CONFIGS; do
  for rep in $(seq 1 "$REPS"); do
    for name in $SERVERS; do
      log "$cfg / rep $rep / $name"
      start_server "$name" "$cfg"
      wpre=""; [ "$cfg" = pinned ] && wpre="taskset -c $CLIENT_CPU"
      # shellcheck disable=SC2086
      $wpre dnsperf -s 127.0.0.1 -p "$(port_of "$name")" -d "$RUNDIR/mix.txt" -l 2 $DNSPERF_ARGS >/dev/null 2>&1 || true
      for qset in $QSETS; do measure "$name" "$cfg" "$qset" "$rep"; done
      stop "$SPID"
    done
  done
done

# Medians over repetitions. Per core: QPS / server process CPU time (both
# configs), and pinned also QPS / busy share of the server's CPU (what
# usual pinned figure; other load on that CPU counts too).
awk -F, -v configs="$CONFIGS" -v servers="$SERVERS" -v qsets="$QSETS" '
  function med(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n == 0 ? 0 : (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2) }
  function stat(c, n, q, k,   i, m, a, v) {
    m = 0
    for (i = 1; i <= rows; i++) if (C[i] == c && N[i] == n && Q[i] == q) {
      if (k == "qps") v = QPS[i]; else if (k == "cpu") v = CPU[i]; else if (k == "busy") v = BUSY[i]
      else if (k == "lat") v = LAT[i]; else if (k == "lost") v = LOST[i]
      else if (k == "percpu") { if (CPU[i] <= 0) continue; v = QPS[i]*100/CPU[i] }
      else if (k == "perbusy") { if (BUSY[i] <= 0) continue; v = QPS[i]*100/BUSY[i] }
      a[++m] = v }
    return med(a, m) }
  function range(c, n, q,   i, lo, hi) {
    lo = -1; hi = 0
    for (i = 1; i <= rows; i++) if (C[i] == c && N[i] == n && Q[i] == q) {
      if (lo < 0 || QPS[i] < lo) lo = QPS[i]; if (QPS[i] > hi) hi = QPS[i] }
    return lo "-" hi }
  function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "NA" }
  NR > 1 { rows++; C[rows] = $1; N[rows] = $2; Q[rows] = $3; QPS[rows] = $5; LAT[rows] = $6; LOST[rows] = $7; CPU[rows] = $8; BUSY[rows] = $9 }
  END {
    nc = split(configs, cs, " "); ns = split(servers, ss, " "); nq = split(qsets, qs, " ")
    print "| config | server | queries | QPS median | QPS min-max | server CPU % | cpu0 busy % | QPS per server CPU | QPS per busy cpu0 | avg latency ms | lost |"
    print "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (x = 1; x <= nc; x++) for (y = 1; y <= ns; y++) for (z = 1; z <= nq; z++) {
      c = cs[x]; n = ss[y]; q = qs[z]
      printf "| %s | %s | %s | %.0f | %s | %.0f | %.0f | %.0f | %s | %.3f | %.0f |\n", c, n, q, stat(c, n, q, "qps"), range(c, n, q),
        stat(c, n, q, "cpu"), stat(c, n, q, "busy"), stat(c, n, q, "percpu"),
        c == "pinned" ? sprintf("%.0f", stat(c, n, q, "perbusy")) : "-", stat(c, n, q, "lat"), stat(c, n, q, "lost") }
    print ""
    print "| config | queries | glb / gdnsd QPS | glb / gdnsd per server CPU | glb / gdnsd per busy cpu0 |"
    print "|---|---|---:|---:|---:|"
    for (x = 1; x <= nc; x++) for (z = 1; z <= nq; z++) {
      c = cs[x]; q = qs[z]
      printf "| %s | %s | %s | %s | %s |\n", c, q, ratio(stat(c, "glb", q, "qps"), stat(c, "gdnsd", q, "qps")),
        ratio(stat(c, "glb", q, "percpu"), stat(c, "gdnsd", q, "percpu")),
        c == "pinned" ? ratio(stat(c, "glb", q, "perbusy"), stat(c, "gdnsd", q, "perbusy")) : "-" }
  }' "$RUNDIR/runs.csv" >"$RUNDIR/summary.md"
echo "dnsperf $DNSPERF_ARGS, ${DURATION}s x $REPS; $(nproc) CPUs; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$RUNDIR/summary.md"
log "raw outputs: $RUNDIR"
