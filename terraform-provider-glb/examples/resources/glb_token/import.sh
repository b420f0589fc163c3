# By name; the secret is not shown again, so it is absent from the imported state.
tofu import glb_token.dashboard dashboard
