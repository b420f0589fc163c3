# Weighted pools with failover: www answers from the primary pool, its
# origins weighted 50/30/20, while at least two of them pass the health
# check; below that, from the secondary pool; and when neither serves, from
# the fallback pool whatever its health (fail open).
#
# The provider block is in ../../provider (or GLB_SERVER/GLB_API_TOKEN).

resource "glb_zone" "example" {
  name        = "glb.example.com"
  nameservers = ["ns1.glb.example.com", "ns2.glb.example.com"]
  soa         = { rname = "hostmaster.example.com" }
  records = [
    { name = "ns1.glb.example.com", type = "A", content = "192.0.2.53" },
    { name = "ns2.glb.example.com", type = "A", content = "198.51.100.53" },
  ]
}

resource "glb_monitor" "tcp_443" {
  id          = "tcp-443"
  description = "TCP connect to 443"
  type        = "tcp"
  port        = 443
  interval    = 10
  timeout     = 2
  retries     = 0
}

resource "glb_pool" "primary" {
  name            = "web-primary"
  monitor         = glb_monitor.tcp_443.id
  minimum_origins = 2
  origins = [
    { name = "fra-a", address = "192.0.2.10", weight = 0.5 },
    { name = "fra-b", address = "192.0.2.11", weight = 0.3 },
    { name = "fra-c", address = "192.0.2.12", weight = 0.2 },
  ]
}

resource "glb_pool" "secondary" {
  name    = "web-secondary"
  monitor = glb_monitor.tcp_443.id
  origins = [
    { name = "ams-a", address = "192.0.2.20" },
    { name = "ams-b", address = "192.0.2.21" },
  ]
}

resource "glb_pool" "sorry" {
  name    = "web-sorry"
  origins = [{ name = "static", address = "192.0.2.30" }]
}

resource "glb_load_balancer" "www" {
  zone          = glb_zone.example.id
  name          = "www.glb.example.com"
  default_pools = [glb_pool.primary.id, glb_pool.secondary.id]
  fallback_pool = glb_pool.sorry.id
  ttl           = 30
}
