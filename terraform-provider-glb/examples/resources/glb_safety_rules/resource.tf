resource "glb_safety_rules" "global" {
  max_shifted_zones = 1
  max_shifted_pools = 2
}
