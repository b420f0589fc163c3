# Geo steering with fallback: clients in Western Europe get the EU pool,
# clients in Eastern North America and Canada the US pool, everyone else
# the default pools in order; when none of its candidates serves, a client
# gets the fallback pool. The lab network places the office's resolvers,
# which GeoIP would place elsewhere, in Western Europe.
#
# The provider block is in ../../provider (or GLB_SERVER/GLB_API_TOKEN).

resource "glb_zone" "example" {
  name        = "geo.example.com"
  nameservers = ["ns1.geo.example.com"]
  records     = [{ name = "ns1.geo.example.com", type = "A", content = "192.0.2.53" }]
}

resource "glb_monitor" "https" {
  id             = "https-healthz"
  type           = "https"
  path           = "/healthz"
  expected_codes = "2xx"
  interval       = 30
}

resource "glb_pool" "eu" {
  name    = "web-eu"
  monitor = glb_monitor.https.id
  origins = [
    { name = "fra", address = "192.0.2.40" },
    { name = "ams", address = "192.0.2.41" },
  ]
}

resource "glb_pool" "us" {
  name    = "web-us"
  monitor = glb_monitor.https.id
  origins = [
    { name = "iad", address = "192.0.2.50" },
    { name = "ord", address = "192.0.2.51" },
  ]
}

resource "glb_network" "office" {
  cidr        = "192.0.2.0/24"
  description = "office resolvers"
  region      = "WEU"
}

resource "glb_load_balancer" "www" {
  zone          = glb_zone.example.id
  name          = "www.geo.example.com"
  region_pools  = { WEU = [glb_pool.eu.id, glb_pool.us.id], ENAM = [glb_pool.us.id, glb_pool.eu.id] }
  country_pools = { CA = [glb_pool.us.id] }
  default_pools = [glb_pool.us.id, glb_pool.eu.id]
  fallback_pool = glb_pool.eu.id
  # steering_policy is left to the server: "geo", since geo maps are set.
}

data "glb_regions" "all" {}

output "regions" {
  value = [for r in data.glb_regions.all.regions : r.code]
}
