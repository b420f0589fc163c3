resource "glb_pool" "web_eu" {
  name            = "web-eu"
  minimum_origins = 2
  # A monitor group: TCP must pass; the HTTPS check decides among the rest.
  monitors = [
    { monitor = glb_monitor.https.id },
    { monitor = glb_monitor.tcp_443.id, must_be_healthy = true },
  ]
  latitude  = 50.11
  longitude = 8.68
  origins = [
    { name = "fra-a", address = "192.0.2.10", weight = 0.4, zone = "zone-1" },
    { name = "fra-b", address = "192.0.2.11", weight = 0.3, zone = "zone-1" },
    { name = "ams-c", address = "2001:db8::12", weight = 0.3, zone = "zone-2" },
  ]
  load_shedding = {
    default_percent = 10
    default_policy  = "hash"
    # Origins feeding a load above 0.7 (a feed monitor's load) take less,
    # none at 0.95.
    by_load = { low = 0.7, high = 0.95 }
  }
  # What the RUM beacon times for measured_latency steering.
  rum = { probe_url = "https://fra.example.com/rum/probe.gif" }
}
