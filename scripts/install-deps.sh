#!/bin/sh
# Installs, on Debian or Ubuntu, everything building and testing glb needs
# besides Go itself (1.26 or newer, from https://go.dev/dl/):
#   make, gcc      make build / make test (the race detector needs cgo)
#   git            go build stamps the commit into the binary
#   dig            the end-to-end DNS tests (bind9-dnsutils; also nsupdate, delv)
#   kdig           a second parser of every record type (knot-dnsutils)
#   knotd          the zone file and transfer tests compare glb with Knot (knot)
#   nsd            the transfer tests make NSD glb's secondary too (nsd)
#   dnsperf        the analytics acceptance test's known load (dnsperf)
#   postgresql     server binaries: the tests start a throwaway cluster of
#                  their own when no server accepts them (see README)
#   chromium, chromedriver   the console's browser tests
#   iproute2, nftables       the fault lab (lab/, make lab): namespaces, veth, cut paths
#   bird2          the BGP tests' router (bird, birdc) and the lab's
#   unbound        the RUM test's resolver (a browser resolving through it)
#   ethtool, iputils-ping    the XDP tests' veth lab (root only)
#   prometheus-alertmanager  the feed test's real Alertmanager (it sends its webhook to glbd)
# Run as root (sudo scripts/install-deps.sh). Nothing is configured.
#
# With --if-missing (what `make test` runs first) it installs only when one
# of the commands the tests run is missing, and says the one command to run
# when it is not root or not on Debian or Ubuntu.
set -eu

if [ "${1:-}" = --if-missing ]; then
	missing=""
	for c in make gcc git dig delv nsupdate kdig knotd nsd dnsperf ip nft ethtool ping; do
		command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
	done
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing="$missing postgresql"
	command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing="$missing chromium"
	command -v chromedriver >/dev/null 2>&1 || missing="$missing chromedriver"
	for c in bird birdc unbound; do
		command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || missing="$missing $c"
	done
	command -v prometheus-alertmanager >/dev/null 2>&1 || missing="$missing prometheus-alertmanager"
	[ -z "$missing" ] && exit 0
	like="$(. /etc/os-release 2>/dev/null && echo "${ID:-} ${ID_LIKE:-}")"
	case " $like " in
	*" debian "* | *" ubuntu "*) ;;
	*)
		echo "install-deps: the tests need:$missing (install them with your package manager)" >&2
		exit 1
		;;
	esac
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: the tests need:$missing; run: sudo $0" >&2
		exit 1
	fi
	echo "install-deps: installing what the tests need:$missing" >&2
fi

pkgs="make gcc libc6-dev git bind9-dnsutils knot-dnsutils knot nsd dnsperf postgresql iproute2 nftables ethtool iputils-ping bird2 unbound prometheus-alertmanager"
. /etc/os-release
case "${ID:-}" in
ubuntu) pkgs="$pkgs chromium-browser chromium-chromedriver" ;;
*) pkgs="$pkgs chromium chromium-driver" ;;
esac

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: run as root: sudo $0" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt run (unattended upgrades) rather than fail: dpkg's
# lock with DPkg::Lock::Timeout, and the locks apt-get update takes (the
# package lists' and the archives'), which that option does not cover in
# every apt, by trying again while apt says a lock is held.
wait="${GLB_APT_LOCK_WAIT:-600}"
apt_get() {
	waited=0
	while :; do
		if out="$(apt-get -o DPkg::Lock::Timeout="$wait" "$@" 2>&1)"; then
			[ -n "$out" ] && printf '%s\n' "$out"
			return 0
		fi
		case "$out" in
		*"Could not get lock"* | *"Unable to lock"* | *"Unable to acquire"*) ;;
		*)
			printf '%s\n' "$out" >&2
			return 1
			;;
		esac
		if [ "$waited" -ge "$wait" ]; then
			printf '%s\n' "$out" >&2
			echo "install-deps: another apt run held its lock for ${wait}s; try again when it is done" >&2
			return 1
		fi
		[ "$waited" = 0 ] && echo "install-deps: another apt run holds its lock; waiting up to ${wait}s" >&2
		sleep 5
		waited=$((waited + 5))
	done
}
# A fresh image has no package lists yet; a stale list names versions
# that are gone from the mirror.
apt_get update -qq
# shellcheck disable=SC2086 # one word per package
apt_get install -y -qq --no-install-recommends $pkgs >/dev/null

if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
	echo "install-deps: now install Go 1.26 or newer from https://go.dev/dl/" >&2
fi
