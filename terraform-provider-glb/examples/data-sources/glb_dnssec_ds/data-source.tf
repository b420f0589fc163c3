# The DS records to give the parent zone's operator (or its provider).
data "glb_dnssec_ds" "example" {
  zone = glb_zone.example.id
}

output "ds" {
  value = data.glb_dnssec_ds.example.ds
}
