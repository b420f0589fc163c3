data "glb_regions" "all" {}

output "region_codes" {
  value = [for r in data.glb_regions.all.regions : r.code]
}
