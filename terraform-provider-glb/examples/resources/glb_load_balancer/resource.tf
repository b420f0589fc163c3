resource "glb_load_balancer" "www" {
  zone          = glb_zone.example.id
  name          = "www.glb.example.com"
  default_pools = [glb_pool.web_eu.id, glb_pool.web_us.id]
  fallback_pool = glb_pool.web_us.id
  region_pools  = { ENAM = [glb_pool.web_us.id, glb_pool.web_eu.id] }
  zonal_affinity = {
    spillover       = "ZONAL_AFFINITY_SPILL_CROSS_ZONE"
    spillover_ratio = 0.8
  }
  https = { alpn = ["h2", "h3"] }
}

# Ranked by what real users measured: pages with the beacon of site key
# shop-www time each pool's rum.probe_url.
resource "glb_load_balancer" "shop" {
  zone            = glb_zone.example.id
  name            = "shop.glb.example.com"
  steering_policy = "measured_latency"
  default_pools   = [glb_pool.web_eu.id, glb_pool.web_us.id]
  fallback_pool   = glb_pool.web_us.id
  rum = {
    site_keys       = ["shop-www"]
    allowed_origins = ["https://shop.example.com"]
    min_samples     = 50
  }
}
