package pools

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMonitorGroupValidation(t *testing.T) {
	base := `{"name": "p", "origins": [{"name": "a", "address": "192.0.2.1"}], `
	for _, tc := range []struct {
		body, path, want string
	}{
		{`"monitors": [{"monitor": "t", "must_be_healthy": true, "monitoring_only": true}]}`, "monitors[0]", "exclude each other"},
		{`"monitors": [{"monitor": "t"}, {"monitor": "t"}]}`, "monitors[1].monitor", `monitor "t" is already monitors[0]`},
		{`"monitors": [{"monitor": ""}]}`, "monitors[0].monitor", "required"},
		{`"monitor": "h", "monitors": [{"monitor": "t", "must_be_healthy": true}]}`, "monitor", "conflicts with monitors"},
		{`"monitor": "h", "monitors": [{"monitor": "h"}]}`, "monitor", "conflicts with monitors"},
		{`"monitors": [{"monitor": "1"}, {"monitor": "2"}, {"monitor": "3"}, {"monitor": "4"}, {"monitor": "5"}, {"monitor": "6"}, {"monitor": "7"}, {"monitor": "8"}, {"monitor": "9"}]}`, "monitors", "at most 8"},
	} {
		p := decode[Pool](t, base+tc.body)
		if msg := problem(t, p.Validate(nil), tc.path); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q at %s, want it to say %q", tc.body, msg, tc.path, tc.want)
		}
	}
	for _, body := range []string{
		`"monitor": "h", "monitors": [{"monitor": "h", "must_be_healthy": true}]}`,
		`"monitors": [{"monitor": "h"}, {"monitor": "t", "must_be_healthy": true}, {"monitor": "x", "monitoring_only": true}]}`,
	} {
		p := decode[Pool](t, base+body)
		if err := p.Validate(nil); err != nil {
			t.Errorf("%s refused: %v", body, err)
		}
	}
	var p Pool
	if err := json.Unmarshal([]byte(base+`"monitors": [{"monitor": "h", "must": true}]}`), &p); err == nil {
		t.Error("an unknown field of a group member was accepted")
	}
}

func TestGroupOfSingleMonitor(t *testing.T) {
	p := Pool{Monitor: "h"}
	if g := p.Group(); len(g) != 1 || g[0] != (PoolMonitor{Monitor: "h", MustBeHealthy: true}) {
		t.Errorf("Group of monitor h = %+v", g)
	}
	p.Monitors = []PoolMonitor{{Monitor: "t", MonitoringOnly: true}}
	if g := p.Group(); len(g) != 1 || g[0].Monitor != "t" {
		t.Errorf("Group with monitors = %+v", g)
	}
	if (&Pool{}).Checked() || !p.Uses("t") || !p.Uses("h") || p.Uses("x") {
		t.Error("Checked/Uses wrong")
	}
}
