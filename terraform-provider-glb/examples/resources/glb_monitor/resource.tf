resource "glb_monitor" "https" {
  id             = "https-health"
  description    = "HTTPS /healthz"
  type           = "https"
  path           = "/healthz"
  expected_codes = "2xx"
  interval       = 30
  header         = { Host = ["www.example.com"] }
}

# The standard gRPC health check of one service, over TLS.
resource "glb_monitor" "grpc" {
  id          = "grpc-checkout"
  description = "gRPC checkout"
  type        = "grpc"
  port        = 8443
  service     = "shop.Checkout"
  tls         = true
  server_name = "checkout.example.com"
}

# Echo requests: down when more than a fifth of five go unanswered.
resource "glb_monitor" "ping" {
  id         = "icmp"
  type       = "icmp"
  echo_count = 5
  max_loss   = 20
}

# Never probed: Alertmanager's webhook (or a PUT) feeds the results in,
# each alert naming its pool and origin by these labels.
resource "glb_monitor" "alerts" {
  id           = "alertmanager"
  description  = "Alertmanager"
  type         = "feed"
  ttl          = 600
  pool_label   = "service"
  origin_label = "instance"
}
