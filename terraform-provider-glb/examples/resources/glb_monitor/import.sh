# By id or by description (when no other monitor has it).
tofu import glb_monitor.https https-health
tofu import glb_monitor.https "HTTPS /healthz"
