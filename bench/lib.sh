# What the benchmark scripts share, sourced by them once ME (the name their
# messages start with), ROOT and RUNDIR are set: messages, the processes
# they start (stopped on exit however the script ends), building the
# binaries, waiting for glbd's API and calling it.

die() { echo "$ME: $*" >&2; exit 1; }
# LOG_TIME set: each message carries the time, for runs long enough to
# need it.
log() { echo "$ME: ${LOG_TIME:+$(date -u +%H:%M:%S) }$*" >&2; }

need() { # command...
  local b
  for b in "$@"; do command -v "$b" >/dev/null || die "$b not found"; done
}

PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

build() { # package... -> $RUNDIR/bin/<last element of each>
  local p
  mkdir -p "$RUNDIR/bin" "$RUNDIR/data" "$RUNDIR/logs"
  log "building $* into $RUNDIR/bin"
  for p in "$@"; do (cd "$ROOT" && go build -o "$RUNDIR/bin/${p##*/}" "$p"); done
}

wait_api() { # glbd's API at $GLB answers, else its log and die
  for _ in $(seq 1 100); do curl -sf "$GLB/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
  curl -sf "$GLB/healthz" >/dev/null || { cat "$RUNDIR/logs/glbd.log" >&2; die "glbd API did not come up"; }
}

api() { # method path [json]
  local out
  out=$(curl -sS -o "$RUNDIR/logs/api-last.json" -w '%{http_code}' -X "$1" -H 'Content-Type: application/json' \
    "$GLB/api/v1/$2" ${3:+-d "$3"}) || die "curl $1 $2 failed"
  case "$out" in 2*) ;; *) cat "$RUNDIR/logs/api-last.json" >&2; die "$1 $2 answered $out" ;; esac
}
