# Zonal affinity (spec §4, the seeds' worked example): ten origins, five
# in zone-1 and five in zone-2, spill across zones when fewer than 80 % of
# the client's zone's origins are healthy. Clients are placed in their zone
# by operator networks.
#
# The provider block is in ../../provider (or GLB_SERVER/GLB_API_TOKEN).

resource "glb_zone" "example" {
  name        = "za.example.com"
  nameservers = ["ns1.za.example.com"]
  records     = [{ name = "ns1.za.example.com", type = "A", content = "192.0.2.53" }]
}

resource "glb_network" "zone_1" {
  cidr = "192.0.2.0/25"
  zone = "zone-1"
}

resource "glb_network" "zone_2" {
  cidr = "192.0.2.128/25"
  zone = "zone-2"
}

resource "glb_pool" "app" {
  name = "app"
  origins = concat(
    [for i in range(5) : { name = "z1-${i}", address = "192.0.2.${60 + i}", zone = "zone-1" }],
    [for i in range(5) : { name = "z2-${i}", address = "192.0.2.${70 + i}", zone = "zone-2" }],
  )
}

resource "glb_load_balancer" "app" {
  zone          = glb_zone.example.id
  name          = "app.za.example.com"
  default_pools = [glb_pool.app.id]
  fallback_pool = glb_pool.app.id
  answers       = 0 # every eligible origin, so that the zone's set shows
  zonal_affinity = {
    spillover       = "ZONAL_AFFINITY_SPILL_CROSS_ZONE"
    spillover_ratio = 0.8
  }
}
