# By name; the secret is not shown again, so it is absent from the imported state.
tofu import glb_tsig_key.acme acme
