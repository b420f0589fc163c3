resource "glb_network" "office" {
  cidr        = "198.51.100.0/24"
  description = "office resolvers"
  region      = "WEU"
  zone        = "zone-1"
}
