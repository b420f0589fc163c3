# By id or by name.
tofu import glb_load_balancer.www 26de6ab75abb68b00322131e7651a8c2
tofu import glb_load_balancer.www www.glb.example.com
