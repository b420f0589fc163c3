# By id or by name; the signing secret is not shown again.
tofu import glb_notification.oncall oncall
