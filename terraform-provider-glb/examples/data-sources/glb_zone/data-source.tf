data "glb_zone" "example" {
  name = "glb.example.com"
}
