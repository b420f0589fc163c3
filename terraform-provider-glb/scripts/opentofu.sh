#!/bin/sh
# Prints the path of the OpenTofu CLI the acceptance tests run, building
# it first when the cache lacks it: from its Go module's own directory
# (`go install github.com/opentofu/opentofu/cmd/tofu@version` fails on the
# module's replace directive), into the user's cache directory keyed by
# version, so that it is built once per machine and version.
#
#   opentofu.sh VERSION            build if needed, print the binary's path
#   opentofu.sh --download VERSION download its modules (before a run
#                                  without network), unless it is built
set -eu
download=
if [ "${1:-}" = --download ]; then
	download=1
	shift
fi
version=${1:?usage: opentofu.sh [--download] VERSION}
go=${GO:-go}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/glb/opentofu-$version
bin=$cache/tofu

# A binary that answers `version` is whole: a build killed half-way
# (make test stops the background one when the suite fails) is redone.
if [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; then
	[ -n "$download" ] || echo "$bin"
	exit 0
fi
dir=$("$go" mod download -json "github.com/opentofu/opentofu@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "opentofu.sh: no module directory for github.com/opentofu/opentofu@$version" >&2; exit 1; }
cd "$dir"
if [ -n "$download" ]; then
	exec "$go" mod download
fi
mkdir -p "$cache"
echo "opentofu.sh: building OpenTofu $version into $cache" >&2
# exec, so that make test's background build is stopped by its pid; a
# binary left half-written fails `version` above and is built again.
echo "$bin"
exec "$go" build -ldflags='-s -w' -o "$bin" ./cmd/tofu
