#!/usr/bin/env bash
# glbd on kernel sockets, glbd with its AF_XDP path, Knot DNS in XDP mode
# and Knot on sockets, in one run, against Knot's kxdpgun offering fixed
# loads over a veth pair between two network namespaces (198.18.0.0/15).
#
# For each repetition, each load and each server (and the generator
# alone, with nothing answering): answers per second, the loss, the whole
# machine's busy CPU during the run minus the generator's alone at the
# same load, measured just before that server started ("net": the
# machine's own drift, which swung the generator alone by tens of points
# over a repetition, lands in both), the server process's own CPU
# (user + system, all threads) and the machine's softirq time, where a
# kernel's receive and send work lands. All CPU figures are % of one
# core. The servers answer static.example.com A from the same zone.
#
# Usage: bench/xdp.sh     (root; installs knot, knot-dnsutils, iproute2,
#        make bench-xdp    ethtool, curl and linux-perf when missing)
# Knobs: LOADS (queries/s, default "100000 200000 300000 500000 800000"),
#        DURATION (s, default 5), REPS (default 3), SERVERS (default
#        "glb-sock glb-xdp knot-xdp knot-sock"), PERF (1: a whole-machine
#        perf profile of glb-sock and glb-xdp at the first load in the
#        first repetition), GLBD_BIN (a glbd binary to measure instead of
#        building this checkout's), RUNDIR.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOADS=${LOADS:-"100000 200000 300000 500000 800000"}
DURATION=${DURATION:-5}
REPS=${REPS:-3}
SERVERS=${SERVERS:-"glb-sock glb-xdp knot-xdp knot-sock"}
PERF=${PERF:-0}
RUNDIR=${RUNDIR:-$(mktemp -d -t glb-xdp.XXXXXX)}
NS_S=glbxb-s NS_C=glbxb-c IF_S=glbxb0 IF_C=glbxb1
ADDR_S=198.18.0.1 ADDR_C=198.18.0.2
API=127.0.0.1:18380
export PATH=$PATH:/usr/sbin:/sbin:/usr/local/go/bin

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "xdp.sh: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (namespaces, XDP)"
need=""
command -v kxdpgun >/dev/null || need="$need knot-dnsutils"
command -v knotd >/dev/null || need="$need knot"
command -v ip >/dev/null || need="$need iproute2"
command -v ethtool >/dev/null || need="$need ethtool"
command -v curl >/dev/null || need="$need curl"
command -v gawk >/dev/null || need="$need gawk"
command -v dig >/dev/null || need="$need bind9-dnsutils"
[ "$PERF" = 1 ] && ! command -v perf >/dev/null && need="$need linux-perf"
if [ -n "$need" ]; then
  log "installing$need"
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $need >/dev/null
fi
# Debian's knot starts a knotd of its own at install: it must not hold
# port 53 in the namespace (it runs in the root one, so it does not).

SPID=""
stop_server() {
  [ -n "$SPID" ] || return 0
  kill -TERM "$SPID" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$SPID" 2>/dev/null || true
  wait "$SPID" 2>/dev/null || true
  SPID=""
  # knotd leaves its XDP program on the interface when it stops (glbd's
  # goes with its process): remove it, or the next server cannot attach.
  ip -n "$NS_S" link set dev "$IF_S" xdp off 2>/dev/null || true
}
cleanup() {
  stop_server
  ip netns del "$NS_S" 2>/dev/null || true
  ip netns del "$NS_C" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$RUNDIR"/{bin,logs,knot}
log "run directory $RUNDIR"
if [ -n "${GLBD_BIN:-}" ]; then cp "$GLBD_BIN" "$RUNDIR/bin/glbd"; else (cd "$ROOT" && go build -o "$RUNDIR/bin/glbd" ./cmd/glbd); fi

# The lab: a veth pair, the servers' end in one namespace, kxdpgun's in
# the other.
cleanup
ip netns add "$NS_S"
ip netns add "$NS_C"
ip link add "$IF_S" netns "$NS_S" type veth peer name "$IF_C" netns "$NS_C"
ip -n "$NS_S" addr add "$ADDR_S/24" dev "$IF_S"
ip -n "$NS_C" addr add "$ADDR_C/24" dev "$IF_C"
for ns in "$NS_S" "$NS_C"; do ip -n "$ns" link set lo up; done
ip -n "$NS_S" link set "$IF_S" up
ip -n "$NS_C" link set "$IF_C" up
# dig's readiness checks leave the kernel's sockets on a veth with a
# checksum left to an offload that never happens for a frame XDP takes;
# glb's XDP path drops such frames (dropped_checksum), so the client end
# computes them (kxdpgun writes its own anyway).
ip netns exec "$NS_C" ethtool -K "$IF_C" tx off >/dev/null
MAC_S=$(ip -n "$NS_S" -br link show "$IF_S" | awk '{print $3}')
MAC_C=$(ip -n "$NS_C" -br link show "$IF_C" | awk '{print $3}')
S() { ip netns exec "$NS_S" "$@"; }
C() { ip netns exec "$NS_C" "$@"; }

echo "static.example.com A" >"$RUNDIR/queries.txt"
cat >"$RUNDIR/knot/example.com.zone" <<ZONE
\$ORIGIN example.com.
\$TTL 300
@       SOA ns1.example.com. hostmaster.example.com. 1 3600 900 604800 60
@       NS  ns1
ns1     A   $ADDR_S
static  A   192.0.2.100
ZONE
knot_conf() { # xdp|sock
  cat <<CONF
server:
    rundir: "$RUNDIR/knot"
    listen: $ADDR_S@53
CONF
  if [ "$1" = xdp ]; then
    cat <<CONF
xdp:
    listen: $IF_S@53
    udp: on
    tcp: off
    route-check: off
CONF
  fi
  cat <<CONF
database:
    storage: "$RUNDIR/knot/db"
log:
  - target: stderr
    any: warning
zone:
  - domain: example.com
    storage: "$RUNDIR/knot"
    file: example.com.zone
CONF
}

answers() { # a dig from the client namespace answers
  C dig +tries=1 +time=1 @"$ADDR_S" static.example.com A 2>/dev/null | grep -q '192.0.2.100'
}

start_server() { # name
  local name=$1 i
  case "$name" in
    glb-sock | glb-xdp)
      rm -rf "$RUNDIR/glb"
      local extra=""
      [ "$name" = glb-xdp ] && extra="--xdp-interface $IF_S --xdp-required"
      # shellcheck disable=SC2086
      # Not through S: $! must be glbd's pid (ip netns exec execs it).
      ip netns exec "$NS_S" "$RUNDIR/bin/glbd" serve --dns-listen "$ADDR_S:53" --api-listen "$API" --data-dir "$RUNDIR/glb" \
        --log-level info $extra >"$RUNDIR/logs/$name.log" 2>&1 &
      SPID=$!
      for i in $(seq 1 100); do S curl -sf "http://$API/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
      S curl -sf -X POST "http://$API/api/v1/zones" -H 'Content-Type: application/json' \
        -d "{\"id\":\"ex\",\"name\":\"example.com\",\"nameservers\":[\"ns1.example.com\"],\"records\":[{\"name\":\"ns1.example.com\",\"type\":\"A\",\"content\":\"$ADDR_S\"},{\"name\":\"static.example.com\",\"type\":\"A\",\"content\":\"192.0.2.100\",\"ttl\":300}]}" \
        >/dev/null || die "$name: configuring over the API failed (see $RUNDIR/logs/$name.log)"
      ;;
    knot-xdp | knot-sock)
      rm -rf "$RUNDIR/knot/db"
      knot_conf "${name#knot-}" >"$RUNDIR/knot/$name.conf"
      ip netns exec "$NS_S" knotd -c "$RUNDIR/knot/$name.conf" >"$RUNDIR/logs/$name.log" 2>&1 &
      SPID=$!
      ;;
  esac
  for i in $(seq 1 30); do answers && return 0; kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
  die "$name does not answer (see $RUNDIR/logs/$name.log)"
}

# cpu: the machine's softirq clock ticks.
cpu() { awk '/^cpu /{print $8}' /proc/stat; }
# tasks: every task's user + system clock ticks, by pid. The machine's
# busy time is their sum (with the generator's own, which starts and ends
# inside a run) rather than /proc/stat's busy ticks: those are sampled at
# each tick, and a generator pacing its sends by timers that fire with the
# tick is seen idle or busy by its phase (the generator alone read 3 % to
# 67 % busy while its own time was a steady 15-20 %). A task's times are
# its measured run time split by the ticks, so their sum is not sampled.
# A task that exits while being read is left out (cat then fails).
tasks() { { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk '{ pid = $1; sub(/^.*\) /, ""); print pid, $12 + $13 }'; }
# ticks: a process's user + system clock ticks, all threads.
ticks() { [ -n "$1" ] && awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)

RESULTS="$RUNDIR/results.tsv"
printf 'rep\tload\tserver\tanswers_per_s\tloss_pct\tbusy_pct\tserver_pct\tgen_pct\tsoftirq_pct\n' >"$RESULTS"

measure() { # rep load name
  local rep=$1 load=$2 name=$3 out b s0 p0 t0 s1 p1 t1 secs replies sent gen
  tasks >"$RUNDIR/tasks0"
  read -r s0 < <(cpu)
  p0=$(ticks "$SPID")
  t0=$(date +%s.%N)
  out=$( (C kxdpgun -t "$DURATION" -Q "$load" -i "$RUNDIR/queries.txt" -I "$IF_C" -L "$MAC_C" -R "$MAC_S" -l "$ADDR_C" "$ADDR_S" 2>&1; times) )
  t1=$(date +%s.%N)
  read -r s1 < <(cpu)
  tasks >"$RUNDIR/tasks1"
  b=$(awk 'NR == FNR { t[$1] = $2; next } $1 in t { d += $2 - t[$1] } END { print d + 0 }' "$RUNDIR/tasks0" "$RUNDIR/tasks1")
  p1=$(ticks "$SPID")
  echo "$out" >"$RUNDIR/logs/kxdpgun-$rep-$load-$name.log"
  sent=$(echo "$out" | awk '/^total queries:/{print $3}')
  replies=$(echo "$out" | awk '/^total replies:/{print $3}')
  [ -n "$replies" ] || replies=0
  # times: the shell's line, then its children's (kxdpgun's) user and system.
  gen=$(echo "$out" | tail -1 | awk '{
    split($1,u,"m"); split($2,s,"m"); sub("s","",u[2]); sub("s","",s[2]);
    print u[1]*60+u[2]+s[1]*60+s[2]}')
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b - a}')
  awk -v rep="$rep" -v ld="$load" -v name="$name" -v sent="$sent" -v rep_n="$replies" -v d="$DURATION" \
    -v b="$b" -v s="$((s1 - s0))" -v p="$((p1 - p0))" -v g="$gen" -v secs="$secs" -v hz="$HZ" 'BEGIN{
      loss = sent > 0 ? 100 * (sent - rep_n) / sent : 100
      printf "%s\t%s\t%s\t%.0f\t%.2f\t%.1f\t%.1f\t%.1f\t%.1f\n", rep, ld, name, rep_n / d, loss,
        100 * (b / hz + g) / secs, 100 * p / hz / secs, 100 * g / secs, 100 * s / hz / secs }' >>"$RESULTS"
  tail -1 "$RESULTS" >&2
}

profile() { # name load: a whole-machine profile beside a run
  local name=$1 load=$2
  [ "$PERF" = 1 ] || return 0
  perf record -a -g -F 499 -o "$RUNDIR/perf-$name.data" -- sleep "$DURATION" >/dev/null 2>&1 &
  local pp=$!
  C kxdpgun -t "$DURATION" -Q "$load" -i "$RUNDIR/queries.txt" -I "$IF_C" -L "$MAC_C" -R "$MAC_S" -l "$ADDR_C" "$ADDR_S" >/dev/null 2>&1 || true
  wait "$pp" || true
  # Where glbd's own CPU goes (other processes on a shared machine
  # would drown it), shares of glbd's samples.
  perf report -i "$RUNDIR/perf-$name.data" --stdio --no-children --comms glbd --percentage relative \
    --sort dso,symbol --percent-limit 1 -g none 2>/dev/null |
    grep -v '^$' | grep -v '^#' | grep '%' | head -40 >"$RUNDIR/perf-$name.txt" || true
  log "profile of $name at $load q/s: $RUNDIR/perf-$name.txt"
}

log "loads: $LOADS q/s, $DURATION s each, $REPS repetitions; servers: gen (nothing answering) $SERVERS"
for rep in $(seq 1 "$REPS"); do
  for name in $SERVERS; do
    for load in $LOADS; do measure "$rep" "$load" gen; done
    start_server "$name"
    [ "$rep" = 1 ] && case "$name" in glb-*) profile "$name" "${LOADS%% *}" ;; esac
    for load in $LOADS; do measure "$rep" "$load" "$name"; done
    stop_server
  done
done

# The table: medians over the repetitions; net = busy - the generator's
# busy at the same load just before (the rows are in the order run).
echo
echo "kxdpgun over veth, $DURATION s per run, medians of $REPS; CPU in % of one core"
gawk -F'\t' 'NR > 1 {
    k = $2 SUBSEP $3; n[k]++
    ans[k, n[k]] = $4; loss[k, n[k]] = $5; busy[k, n[k]] = $6; srv[k, n[k]] = $7; gen[k, n[k]] = $8; sirq[k, n[k]] = $9
    if ($3 == "gen") g[$2] = $6
    else { m[k]++; net[k, m[k]] = $6 - g[$2] }
  }
  END {
    printf "%-8s %-10s %12s %7s %8s %8s %9s %9s   %s\n", "load", "server", "answers/s", "loss%", "busy", "net", "server", "softirq", "net per rep"
    for (k in n) keys[++nk] = k
    asort(keys)
    for (j = 1; j <= nk; j++) {
      k = keys[j]; split(k, kk, SUBSEP)
      nets = ""
      for (r = 1; r <= m[k]; r++) nets = nets sprintf("%s%.0f", r > 1 ? " " : "", net[k, r])
      printf "%-8s %-10s %12.0f %7.2f %8.1f %8s %9.1f %9.1f   %s\n", kk[1], kk[2], med(ans, k, n[k]), med(loss, k, n[k]),
        med(busy, k, n[k]), kk[2] == "gen" ? "-" : sprintf("%.1f", med(net, k, m[k])), med(srv, k, n[k]), med(sirq, k, n[k]), nets
    }
  }
  function med(a, k, c,   v, i, t) { for (i = 1; i <= c; i++) v[i] = a[k, i]; asort(v, t); return c % 2 ? t[(c + 1) / 2] : (t[c / 2] + t[c / 2 + 1]) / 2 }
' "$RESULTS" | sort -k1,1n -k2,2 | tee "$RUNDIR/table.txt"
echo
echo "raw rows: $RESULTS"
