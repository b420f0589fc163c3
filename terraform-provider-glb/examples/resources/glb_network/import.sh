# By id or by CIDR.
tofu import glb_network.office 198.51.100.0/24
