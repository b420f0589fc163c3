data "glb_load_balancer" "www" {
  name = "www.glb.example.com"
}
