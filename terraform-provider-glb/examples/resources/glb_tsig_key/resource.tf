resource "glb_tsig_key" "acme" {
  name = "acme"
  grants = [{
    zone  = glb_zone.example.id
    name  = "www.glb.example.com"
    match = "acme-challenge"
    types = ["TXT"]
  }]
}

# Shown once, when the key is created.
output "acme_tsig_secret" {
  value     = glb_tsig_key.acme.secret
  sensitive = true
}
