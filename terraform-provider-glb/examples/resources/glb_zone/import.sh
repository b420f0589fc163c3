# By id or by name.
tofu import glb_zone.example 26de6ab75abb68b00322131e7651a8c2
tofu import glb_zone.example glb.example.com
