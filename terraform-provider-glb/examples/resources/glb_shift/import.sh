# By id.
tofu import glb_shift.bad_deploy 8c1f0c2e9d0b4c6f8a7e5d3c2b1a0f9e
