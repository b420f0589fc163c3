resource "glb_token" "dashboard" {
  name       = "dashboard"
  scopes     = ["read"]
  expires_on = "2027-01-01T00:00:00Z"
}

output "dashboard_token" {
  value     = glb_token.dashboard.secret
  sensitive = true
}
