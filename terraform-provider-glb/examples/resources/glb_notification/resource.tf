resource "glb_notification" "oncall" {
  name           = "oncall"
  url            = "https://hooks.example.com/glb"
  events         = ["origin_health", "pool_health", "failover"]
  load_balancers = [glb_load_balancer.www.id]
}
