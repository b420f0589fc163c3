#!/usr/bin/env bash
# DNS throughput of glbd against the static miekg/dns baseline, on this
# machine, in one run: the same dnsperf load against each in turn, and the
# ratio of their QPS.
#
# glbd answers a load balancer with geo steering (country_pools), zonal
# affinity (SPILL_CROSS_ZONE) and prefer_ecs=always; every query carries an
# ECS option (198.51.100.0/24, an operator network in DE, zone-a). The
# baseline answers its static www.example.com A.
#
# Usage: bench/dns.sh            (from anywhere; needs go, dnsperf, dig, curl)
# Knobs: DURATION (s, default 15), REPS (default 3), DNSPERF_ARGS
#        (default "-c 4 -T 2 -q 200 -t 1", as in RESULTS.md), RUNDIR,
#        GLBD_PORT, API_PORT, BASE_PORT, GLBD_ARGS (extra glbd flags, e.g.
#        --rrl-rate=1000000 to measure RRL enabled but not triggered).
# Target: glbd >= 85 % of the baseline's QPS.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DURATION=${DURATION:-15}
REPS=${REPS:-3}
DNSPERF_ARGS=${DNSPERF_ARGS:--c 4 -T 2 -q 200 -t 1}
RUNDIR=${RUNDIR:-$(mktemp -d -t glb-dnsbench.XXXXXX)}
GLBD_PORT=${GLBD_PORT:-15353}
API_PORT=${API_PORT:-18088}
BASE_PORT=${BASE_PORT:-15304}
GLB=http://127.0.0.1:$API_PORT

ME=dns.sh
. "$ROOT/bench/lib.sh"
need go dnsperf dig curl
build ./cmd/glbd ./bench/baseline

wait_dns() { # port name answer-regex
  local i
  for i in $(seq 1 100); do
    if dig +norec +time=1 +tries=1 @127.0.0.1 -p "$1" "$2" A +short 2>/dev/null | grep -qE "$3"; then return 0; fi
    sleep 0.2
  done
  return 1
}

# ---- glbd, configured through the REST API
"$RUNDIR/bin/glbd" serve --dns-listen "127.0.0.1:$GLBD_PORT" --api-listen "127.0.0.1:$API_PORT" \
  --data-dir "$RUNDIR/data" ${GLBD_ARGS:-} >"$RUNDIR/logs/glbd.log" 2>&1 &
PIDS+=($!)
wait_api

api POST zones '{"id": "bench", "name": "glb.example.com", "nameservers": ["ns1.glb.example.com"],
  "records": [{"name": "ns1.glb.example.com", "type": "A", "content": "192.0.2.53"}]}'
api POST networks '{"id": "de", "cidr": "198.51.100.0/24", "country": "DE", "region": "WEU", "zone": "zone-a"}'
api POST pools '{"id": "eu", "name": "eu", "origins": [
  {"name": "eu-a1", "address": "192.0.2.10", "zone": "zone-a"},
  {"name": "eu-a2", "address": "192.0.2.11", "zone": "zone-a"},
  {"name": "eu-b1", "address": "192.0.2.12", "zone": "zone-b"},
  {"name": "eu-b2", "address": "192.0.2.13", "zone": "zone-b"}]}'
api POST pools '{"id": "us", "name": "us", "origins": [{"name": "us1", "address": "192.0.2.20"}]}'
api POST load_balancers '{"id": "www", "zone": "bench", "name": "www.glb.example.com",
  "steering_policy": "geo", "country_pools": {"DE": ["eu"]}, "default_pools": ["us"], "fallback_pool": "us",
  "location_strategy": {"prefer_ecs": "always"},
  "zonal_affinity": {"spillover": "ZONAL_AFFINITY_SPILL_CROSS_ZONE", "spillover_ratio": 0.5}}'

# ECS option 8: family 1, source /24, scope 0, 198.51.100
ECS_HEX=00011800c63364
if ! for i in $(seq 1 100); do
  dig +norec +time=1 +tries=1 @127.0.0.1 -p "$GLBD_PORT" +subnet=198.51.100.0/24 www.glb.example.com A +short 2>/dev/null |
    grep -qE '^192\.0\.2\.1[01]$' && break
  sleep 0.2
  false
done; then
  cat "$RUNDIR/logs/glbd.log" >&2; die "glbd does not answer www.glb.example.com from the DE pool in zone-a"
fi
dig +norec @127.0.0.1 -p "$GLBD_PORT" +subnet=198.51.100.0/24 www.glb.example.com A >"$RUNDIR/logs/glbd-sanity.txt"

# ---- the baseline
"$RUNDIR/bin/baseline" -addr "127.0.0.1:$BASE_PORT" >"$RUNDIR/logs/baseline.log" 2>&1 &
PIDS+=($!)
wait_dns "$BASE_PORT" www.example.com '^192\.0\.2\.1$' || die "baseline did not answer"

echo "www.glb.example.com A" >"$RUNDIR/glbd.txt"
echo "www.example.com A" >"$RUNDIR/baseline.txt"

run() { # port queryfile extra-args -> QPS
  # shellcheck disable=SC2086
  dnsperf -s 127.0.0.1 -p "$1" -d "$2" -l "$DURATION" $DNSPERF_ARGS $3 >"$RUNDIR/logs/last-dnsperf.txt" 2>&1 || true
  cat "$RUNDIR/logs/last-dnsperf.txt" >>"$RUNDIR/logs/dnsperf.txt"
  awk '/Queries per second:/{print $4}' "$RUNDIR/logs/last-dnsperf.txt"
}
median() { sort -g | awk '{a[NR]=$1} END{ if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2 }'; }

G=() B=()
for rep in $(seq 1 "$REPS"); do
  # Alternate the order so that neither always runs on a warmer machine.
  if [ $((rep % 2)) = 1 ]; then
    g=$(run "$GLBD_PORT" "$RUNDIR/glbd.txt" "-E 8:$ECS_HEX"); b=$(run "$BASE_PORT" "$RUNDIR/baseline.txt" "")
  else
    b=$(run "$BASE_PORT" "$RUNDIR/baseline.txt" ""); g=$(run "$GLBD_PORT" "$RUNDIR/glbd.txt" "-E 8:$ECS_HEX")
  fi
  log "rep $rep: glbd ${g:-?} QPS, baseline ${b:-?} QPS"
  G+=("${g:-0}") B+=("${b:-0}")
done
gq=$(printf '%s\n' "${G[@]}" | median)
bq=$(printf '%s\n' "${B[@]}" | median)
ratio=$(awk -v g="$gq" -v b="$bq" 'BEGIN{ if (b > 0) printf "%.1f", 100*g/b; else print "NA" }')
echo "glbd (geo + zonal affinity + ECS): $gq QPS (median of $REPS x ${DURATION}s)"
echo "baseline (miekg/dns static):       $bq QPS"
echo "ratio: $ratio % (target >= 85 %)"
echo "dnsperf: $DNSPERF_ARGS; logs in $RUNDIR/logs"
awk -v r="$ratio" 'BEGIN{ exit (r != "NA" && r >= 85) ? 0 : 1 }'
