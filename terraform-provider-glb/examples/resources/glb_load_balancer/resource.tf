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
