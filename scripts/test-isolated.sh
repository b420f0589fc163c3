#!/usr/bin/env bash
# Runs `make test` as a new user would on a fresh machine: from a fresh
# clone of HEAD, in a network namespace of its own (loopback only, so the
# machine's PostgreSQL on 127.0.0.1:5432 is out of reach) and with
# DATABASE_URL unset, so the tests must start, and remove, PostgreSQL
# clusters of their own. Fails if make test fails, if the machine's
# PostgreSQL was reachable, or if any process is left in the namespace
# afterwards.
#
# Needs root (unshare -n), unshare (util-linux), ip (iproute2), git, and Go
# with the modules downloadable beforehand (the namespace has no network).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

if [ "$(id -u)" != 0 ]; then
	echo "test-isolated: run as root (it creates a network namespace)" >&2
	exit 1
fi
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="$PATH:/usr/local/go/bin"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A TMPDIR of its own, which must be empty at the end; the clusters run as
# the postgres user, who must reach their directories in it.
chmod 755 "$tmp"
mkdir -m 1777 "$tmp/tmp"
git clone -q "$root" "$tmp/glb"
echo "test-isolated: make test on a fresh clone of $(git -C "$tmp/glb" rev-parse --short HEAD), no network, DATABASE_URL unset" >&2
# Modules now, while there is a network; the build cache is shared.
(cd "$tmp/glb" && go mod download)
# The ACME test is a module of its own (lego and Pebble stay out of glb's
# go.mod): its modules too.
(cd "$tmp/glb/integration/acme" && go mod download)
# And the ExternalDNS test's, a module of its own for the same reason.
(cd "$tmp/glb/integration/externaldns" && go mod download)
# And terraform-provider-glb's, with OpenTofu's (built in the namespace
# unless the user's cache holds it already).
(cd "$tmp/glb/terraform-provider-glb" && go mod download)
(cd "$tmp/glb" && terraform-provider-glb/scripts/opentofu.sh --download "$(make -s -f Makefile print-opentofu-version)")

unshare -n -- env -u DATABASE_URL GOPROXY=off TMPDIR="$tmp/tmp" bash -c '
set -euo pipefail
ip link set lo up
if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
	echo "test-isolated: 127.0.0.1:5432 answers inside the namespace; the test would prove nothing" >&2
	exit 1
fi
cd "$1"
status=0
make test || status=$?

# Everything the tests started must be gone once make test returns.
me=$(readlink /proc/$$/ns/net)
left=""
for p in /proc/[0-9]*; do
	pid=${p#/proc/}
	[ "$pid" = $$ ] && continue
	if [ "$(readlink "$p/ns/net" 2>/dev/null)" = "$me" ]; then
		left="$left $pid"
	fi
done
if [ -n "$left" ]; then
	echo "test-isolated: processes left behind:" >&2
	ps -o pid,user,args -p "${left# }" >&2 || true
	exit 1
fi
if [ -n "$(ls -A "$TMPDIR")" ]; then
	echo "test-isolated: files left behind in TMPDIR:" >&2
	ls -la "$TMPDIR" >&2
	status=1
fi
echo "test-isolated: done in ${SECONDS}s, exit status $status" >&2
exit $status
' test-isolated "$tmp/glb"
