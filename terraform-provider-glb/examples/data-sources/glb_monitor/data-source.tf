# A monitor another configuration (or glbctl) made, by its description.
data "glb_monitor" "https" {
  description = "HTTPS /healthz"
}

resource "glb_pool" "api" {
  name    = "api"
  monitor = data.glb_monitor.https.id
  origins = [{ name = "a", address = "192.0.2.20" }]
}
