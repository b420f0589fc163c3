resource "glb_monitor" "https" {
  id             = "https-health"
  description    = "HTTPS /healthz"
  type           = "https"
  path           = "/healthz"
  expected_codes = "2xx"
  interval       = 30
  header         = { Host = ["www.example.com"] }
}
