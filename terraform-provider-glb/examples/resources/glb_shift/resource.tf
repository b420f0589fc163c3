# Takes web-eu out of www's answers for two hours; it ends by itself.
resource "glb_shift" "bad_deploy" {
  target         = { pool = glb_pool.web_eu.id }
  load_balancers = [glb_load_balancer.www.id]
  reason         = "bad deploy"
  duration       = "2h"
}
