resource "glb_zone" "example" {
  name        = "glb.example.com"
  nameservers = ["ns1.glb.example.com", "ns2.glb.example.com"]
  soa         = { rname = "hostmaster.example.com" }
  records = [
    { name = "ns1.glb.example.com", type = "A", content = "192.0.2.53" },
    { name = "ns2.glb.example.com", type = "A", content = "198.51.100.53" },
    { name = "glb.example.com", type = "TXT", content = "\"v=spf1 -all\"" },
  ]
  dnssec = { enabled = true }
}
