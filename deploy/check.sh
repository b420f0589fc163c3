#!/bin/sh
# Checks the operations kit: the systemd unit (systemd-analyze verify and
# its exposure score), the Prometheus rules (promtool check rules) and their
# unit tests (promtool test rules), and that the Grafana dashboard is JSON
# whose queries name only metrics glb exports. Needs bin/glbd (make build),
# systemd-analyze (systemd) and promtool (Debian: apt-get install prometheus).
set -eu
cd "$(dirname "$0")/.."

for tool in systemd-analyze promtool python3; do
	command -v "$tool" >/dev/null 2>&1 || { echo "deploy/check.sh: $tool is needed" >&2; exit 1; }
done
[ -x bin/glbd ] || { echo "deploy/check.sh: run make build first" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# verify wants ExecStart's binary and the EnvironmentFile to exist: point
# them at the built binary and the example settings.
sed -e "s#^ExecStart=/usr/local/bin/glbd#ExecStart=$PWD/bin/glbd#" \
	-e "s#^EnvironmentFile=/etc/glb/glbd.env#EnvironmentFile=$PWD/deploy/systemd/glbd.env#" \
	deploy/systemd/glbd.service >"$tmp/glbd.service"
systemd-analyze verify "$tmp/glbd.service"
# 0 is locked down, 10 is wide open; the unit scores 1.6.
systemd-analyze security --offline=true --threshold=20 "$tmp/glbd.service" >"$tmp/security.txt" ||
	{ cat "$tmp/security.txt" >&2; exit 1; }
tail -1 "$tmp/security.txt"

promtool check rules deploy/prometheus/glb-alerts.yml
(cd deploy/prometheus && promtool test rules glb-alerts.test.yml)

# The dashboard: every query parses (as recording rules, through promtool)
# and names only metrics the code registers.
python3 - deploy/grafana/glb-dashboard.json deploy/prometheus/glb-alerts.yml "$tmp/dashboard-rules.yml" <<'PY'
import json, re, subprocess, sys
dash = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
with open(sys.argv[3], "w") as f:
    f.write("groups:\n  - name: dashboard\n    rules:\n")
    for i, e in enumerate(exprs):
        e = e.replace("$__rate_interval", "5m").replace("$instance", ".*")
        f.write("      - record: dashboard:query%d\n        expr: %s\n" % (i, json.dumps(e)))
used = {m for e in exprs + [open(sys.argv[2]).read()] for m in re.findall(r"\bglb_[a-z_]+", e)}
import pathlib
src = "\n".join(f.read_text() for f in pathlib.Path(".").rglob("*.go")
                if not f.name.endswith("_test.go") and "/." not in str(f))
# Metrics are named by client_golang's options (Namespace, Subsystem, Name)
# or through internal/promset (promset.New("sub"), set.Counter("name", ...)).
subs = set(re.findall(r'(?:sub = "glb", |Subsystem: *|promset\.New\()"([a-z]+)"', src))
names = set(re.findall(r'Name: *"([a-z_]+)"', src)) | set(
    re.findall(r'\.(?:Counter|CounterVec|Gauge|GaugeVec|Histogram|HistogramVec)\(\s*"([a-z_]+)"', src))
registered = {"glb_" + n for n in names} | {"glb_%s_%s" % (s, n) for s in subs for n in names}
def base(m):
    for suffix in ("_bucket", "_count", "_sum"):
        if m.endswith(suffix) and m[: -len(suffix)] in registered:
            return m[: -len(suffix)]
    return m
unknown = sorted(m for m in used if base(m) not in registered)
if unknown:
    sys.exit("metrics in the dashboard or the alerts that no code registers: " + ", ".join(unknown))
print("dashboard: %d queries over %d glb metrics, all registered" % (len(exprs), len(used)))
PY
promtool check rules "$tmp/dashboard-rules.yml" >/dev/null
echo "deploy: all checks passed"
