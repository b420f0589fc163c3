#!/usr/bin/env bash
# Soak: glbd under steady DNS load while its configuration and health keep
# changing. dnsperf runs at about 70 % of the QPS measured first, for
# DURATION seconds, against a node serving a few hundred load-balanced
# names; meanwhile the API writes WRITES_PER_S changes per second and a
# monitored origin flaps every FLAP_S seconds. Reported: SERVFAILs, lost
# queries, RSS and goroutines at start and end.
#
# Usage: bench/soak.sh           (needs go, dnsperf, dig, curl, python3)
# Knobs: DURATION (s, default 600), NAMES (default 300), LOAD_PCT (70),
#        WRITES_PER_S (10), FLAP_S (3), RRL_RATE (glbd --rrl-rate, default
#        0), DATABASE_URL (empty: the embedded store), RUNDIR, GLBD_PORT,
#        API_PORT, ORIGIN_PORT.
# Exit status 1 when a SERVFAIL or a lost query was seen.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DURATION=${DURATION:-600}
NAMES=${NAMES:-300}
LOAD_PCT=${LOAD_PCT:-70}
WRITES_PER_S=${WRITES_PER_S:-10}
FLAP_S=${FLAP_S:-3}
RRL_RATE=${RRL_RATE:-0}
RUNDIR=${RUNDIR:-$(mktemp -d -t glb-soak.XXXXXX)}
GLBD_PORT=${GLBD_PORT:-25353}
API_PORT=${API_PORT:-28088}
ORIGIN_PORT=${ORIGIN_PORT:-28089}
GLB=http://127.0.0.1:$API_PORT

ME=soak.sh LOG_TIME=1
. "$ROOT/bench/lib.sh"
need go dnsperf dig curl python3
build ./cmd/glbd

# ---- the flapping origin: healthy and unhealthy in turn every FLAP_S s
cat >"$RUNDIR/origin.py" <<EOF
import http.server, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        up = int(time.time() // $FLAP_S) % 2 == 0
        self.send_response(200 if up else 503)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", $ORIGIN_PORT), H).serve_forever()
EOF
python3 "$RUNDIR/origin.py" >"$RUNDIR/logs/origin.log" 2>&1 &
PIDS+=($!)

# ---- glbd
"$RUNDIR/bin/glbd" serve --dns-listen "127.0.0.1:$GLBD_PORT" --api-listen "127.0.0.1:$API_PORT" \
  --data-dir "$RUNDIR/data" --node soak --rrl-rate "$RRL_RATE" ${DATABASE_URL:+--database-url "$DATABASE_URL"} \
  >"$RUNDIR/logs/glbd.log" 2>&1 &
GLBD_PID=$!
PIDS+=($GLBD_PID)
wait_api

log "configuring $NAMES load balancers"
api POST zones '{"id": "soak", "name": "soak.example.com", "nameservers": ["ns1.soak.example.com"],
  "records": [{"name": "ns1.soak.example.com", "type": "A", "content": "192.0.2.53"}]}'
api POST monitors "{\"id\": \"flap\", \"type\": \"http\", \"port\": $ORIGIN_PORT, \"interval\": 1, \"timeout\": 1,
  \"retries\": 0, \"consecutive_up\": 1, \"consecutive_down\": 1}"
api POST pools '{"id": "flapping", "name": "flapping", "monitor": "flap", "origins": [{"name": "o1", "address": "127.0.0.1"}]}'
api POST pools '{"id": "steady", "name": "steady", "origins": [
  {"name": "s1", "address": "192.0.2.10"}, {"name": "s2", "address": "192.0.2.11"}, {"name": "s3", "address": "2001:db8::12"}]}'
: >"$RUNDIR/queries.txt"
for i in $(seq 1 "$NAMES"); do
  if [ $((i % 10)) = 0 ]; then pools='["flapping", "steady"]'; else pools='["steady"]'; fi
  api POST load_balancers "{\"id\": \"lb$i\", \"zone\": \"soak\", \"name\": \"lb$i.soak.example.com\",
    \"default_pools\": $pools, \"fallback_pool\": \"steady\"}"
  echo "lb$i.soak.example.com A" >>"$RUNDIR/queries.txt"
done
for _ in $(seq 1 100); do
  dig +norec +time=1 +tries=1 @127.0.0.1 -p "$GLBD_PORT" "lb$NAMES.soak.example.com" A +short | grep -q . && break
  sleep 0.2
done

metric() { # name -> value from /metrics
  curl -sf "$GLB/metrics" | awk -v m="$1" '$1 == m {print $2}'
}
rss() { awk '/VmRSS/{print $2 " kB"}' "/proc/$GLBD_PID/status"; }

log "measuring the maximum QPS (10 s)"
dnsperf -s 127.0.0.1 -p "$GLBD_PORT" -d "$RUNDIR/queries.txt" -l 10 -c 4 -T 2 -q 200 >"$RUNDIR/logs/max.txt" 2>&1 || true
MAX=$(awk '/Queries per second:/{print int($4)}' "$RUNDIR/logs/max.txt")
[ -n "$MAX" ] && [ "$MAX" -gt 0 ] || { cat "$RUNDIR/logs/max.txt" >&2; die "no maximum measured"; }
TARGET=$((MAX * LOAD_PCT / 100))

# ---- changes through the API: WRITES_PER_S a second, TTLs of random
# names, from one Python process with a thread per change a second (so a
# slow request does not slow the others, and the writers take little of
# the CPU that dnsperf and glbd share); successful writes are counted in
# writes.txt.
cat >"$RUNDIR/writer.py" <<EOF
import http.client, os, random, threading, time
def writer(counts, k):
    c = http.client.HTTPConnection("127.0.0.1", $API_PORT, timeout=10)
    nxt = time.monotonic()
    while True:
        i = random.randint(1, $NAMES)
        body = '{"ttl": %d}' % random.randint(10, 69)
        try:
            c.request("PATCH", "/api/v1/load_balancers/lb%d" % i, body, {"Content-Type": "application/merge-patch+json"})
            r = c.getresponse()
            r.read()
            if 200 <= r.status < 300:
                counts[k] += 1
        except Exception:
            c.close()
            c = http.client.HTTPConnection("127.0.0.1", $API_PORT, timeout=10)
        nxt += 1
        time.sleep(max(0, nxt - time.monotonic()))
counts = [0] * $WRITES_PER_S
for k in range($WRITES_PER_S):
    threading.Thread(target=writer, args=(counts, k), daemon=True).start()
while True:
    time.sleep(1)
    with open("$RUNDIR/writes.tmp", "w") as f:
        f.write("%d" % sum(counts))
    os.replace("$RUNDIR/writes.tmp", "$RUNDIR/writes.txt")
EOF
python3 "$RUNDIR/writer.py" >"$RUNDIR/logs/writer.log" 2>&1 &
PIDS+=($!)
# The start figures count the writers' keep-alive connections (a goroutine
# each): give them a moment to connect.
sleep 2

RSS0=$(rss) G0=$(metric go_goroutines) REV0=$(metric glb_snapshot_revision)
log "max $MAX QPS; soaking at $TARGET QPS ($LOAD_PCT %) for ${DURATION}s; RSS $RSS0, goroutines $G0"
dnsperf -s 127.0.0.1 -p "$GLBD_PORT" -d "$RUNDIR/queries.txt" -l "$DURATION" -Q "$TARGET" -c 4 -T 2 -q 500 \
  -S 60 >"$RUNDIR/logs/soak.txt" 2>&1 || true
RSS1=$(rss) G1=$(metric go_goroutines) REV1=$(metric glb_snapshot_revision)
BUILDS_ERR=$(curl -sf "$GLB/metrics" | awk '$1 == "glb_snapshot_builds_total{result=\"error\"}" {print $2}')

SENT=$(awk '/Queries sent:/{print $3}' "$RUNDIR/logs/soak.txt")
LOST=$(awk '/Queries lost:/{print $3}' "$RUNDIR/logs/soak.txt")
QPS=$(awk '/Queries per second:/{print $4}' "$RUNDIR/logs/soak.txt")
CODES=$(awk -F': ' '/Response codes:/{print $2}' "$RUNDIR/logs/soak.txt")
SERVFAIL=$(echo "$CODES" | { grep -o 'SERVFAIL [0-9]*' || true; } | awk '{print $2}')
SERVFAIL=${SERVFAIL:-0}
FLAPS=$(grep -c 'msg="origin \(down\|up\)"' "$RUNDIR/logs/glbd.log" || true)

echo "soak: ${DURATION}s at $TARGET QPS target ($LOAD_PCT % of $MAX), $NAMES names"
echo "queries sent $SENT, lost $LOST, achieved $QPS QPS"
echo "response codes: $CODES"
echo "SERVFAIL: $SERVFAIL"
WRITES=$(cat "$RUNDIR/writes.txt" 2>/dev/null || echo 0)
echo "API writes: $WRITES ($(awk -v w="$WRITES" -v d="$DURATION" 'BEGIN{printf "%.1f", w / d}')/s); revisions $REV0 -> $REV1; snapshot build errors ${BUILDS_ERR:-0}"
echo "origin state changes logged: $FLAPS"
echo "RSS: $RSS0 -> $RSS1"
echo "goroutines: $G0 -> $G1"
echo "logs in $RUNDIR/logs"
[ "$SERVFAIL" = 0 ] && [ "${LOST:-1}" = 0 ]
