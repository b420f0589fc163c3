data "glb_pool" "web_eu" {
  name = "web-eu"
}

output "web_eu_origins" {
  value = [for o in data.glb_pool.web_eu.origins : o.address]
}
