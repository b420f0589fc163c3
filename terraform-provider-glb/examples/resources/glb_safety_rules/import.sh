# There is one set of global rules.
tofu import glb_safety_rules.global global
