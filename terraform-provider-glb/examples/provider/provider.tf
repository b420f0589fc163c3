terraform {
  required_providers {
    glb = {
      source = "glb-dns/glb"
    }
  }
}

# server and token may instead come from GLB_SERVER and GLB_API_TOKEN.
provider "glb" {
  server  = "https://glb-api.example.com:8443"
  token   = var.glb_token
  ca_file = "/etc/glb/api-ca.pem"
}

variable "glb_token" {
  type      = string
  sensitive = true
}
