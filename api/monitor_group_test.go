package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// TestPoolHealthMonitorGroup: a pool with a monitor group shows, per
// origin, each monitor's view over the nodes (up, down, mixed, not
// checked) and each node's per-monitor results; a pool written with
// monitor beside a different group is refused with a 400 naming monitor.
func TestPoolHealthMonitorGroup(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := newEnv(t, func(o *api.Options) { o.Now = func() time.Time { return now } })
	httpID := e.create(pools.KindMonitor, monitorBody())["id"].(string)
	tcpBody := monitorBody()
	tcpBody["type"], tcpBody["port"] = "tcp", 443
	tcpID := e.create(pools.KindMonitor, tcpBody)["id"].(string)
	gpBody := poolBody("")
	gpBody["monitors"] = []map[string]any{{"monitor": httpID}, {"monitor": tcpID, "must_be_healthy": true}}
	pool := e.create(pools.KindPool, gpBody)["id"].(string)

	bad := poolBody(httpID)
	bad["name"] = "bad"
	bad["monitors"] = []map[string]any{{"monitor": tcpID, "must_be_healthy": true}}
	p := e.do("POST", "/api/v1/pools", bad).problem(t, http.StatusBadRequest)
	if len(p.Errors) != 1 || p.Errors[0].Path != "monitor" || !strings.Contains(p.Errors[0].Message, "conflicts with monitors") {
		t.Errorf("monitor beside a different group: %+v", p.Errors)
	}

	view := func(node, region string, tcpUp bool) pools.NodeHealth {
		tcp := pools.MonitorState{Monitor: tcpID, Healthy: tcpUp}
		st := pools.OriginState{Pool: pool, Origin: "a", Healthy: tcpUp, RTT: 4 * time.Millisecond, CheckedAt: now}
		if !tcpUp {
			tcp.Reason, st.Reason = "connection refused", "monitor "+tcpID+": connection refused"
		}
		st.Monitors = []pools.MonitorState{{Monitor: httpID, Healthy: true, RTT: 4 * time.Millisecond}, tcp}
		return pools.NodeHealth{Node: node, Region: region, Published: now, Origins: []pools.OriginState{st}}
	}
	for _, n := range []pools.NodeHealth{view("fra-1", "WEU", false), view("iad-1", "ENAM", true)} {
		if err := e.store.PublishHealth(t.Context(), pools.FullUpdate(n)); err != nil {
			t.Fatal(err)
		}
	}
	var got struct{ Result api.PoolHealth }
	e.do("GET", "/api/v1/pools/"+pool+"/health", nil).json(t, &got)
	h := got.Result
	if len(h.Monitors) != 2 || h.Monitors[1].Monitor != tcpID || !h.Monitors[1].MustBeHealthy {
		t.Fatalf("pool's group %+v", h.Monitors)
	}
	a, b := h.Origins[0], h.Origins[1]
	want := []api.MonitorView{
		{Monitor: httpID, State: api.StateUp, NodesUp: 2},
		{Monitor: tcpID, MustBeHealthy: true, State: api.StateMixed, NodesUp: 1, NodesDown: 1, Reason: "connection refused"},
	}
	if len(a.Monitors) != 2 || a.Monitors[0] != want[0] || a.Monitors[1] != want[1] {
		t.Errorf("origin a's monitors %+v, want %+v", a.Monitors, want)
	}
	// Checks are in region order: ENAM (iad-1) first.
	if c := a.Checks; len(c) != 2 || len(c[1].Monitors) != 2 || c[1].Monitors[1].Healthy || c[1].Monitors[1].Reason != "connection refused" ||
		c[1].Monitors[0].RTTMs != 4 || !c[0].Monitors[1].Healthy {
		t.Errorf("origin a's checks %+v", c)
	}
	if len(b.Monitors) != 2 || b.Monitors[0].State != api.StateNotChecked || b.Monitors[1].State != api.StateNotChecked {
		t.Errorf("origin b, never checked: %+v", b.Monitors)
	}

	// A merge patch moves between the two spellings when it clears the
	// one it leaves, and is refused when it would leave both.
	p = e.do("PATCH", "/api/v1/pools/"+pool, map[string]any{"monitor": httpID}).problem(t, http.StatusBadRequest)
	if len(p.Errors) != 1 || p.Errors[0].Path != "monitor" {
		t.Errorf("monitor patched beside the group: %+v", p.Errors)
	}
	var one struct{ Result pools.Pool }
	e.do("PATCH", "/api/v1/pools/"+pool, map[string]any{"monitor": httpID, "monitors": nil}).json(t, &one)
	if one.Result.Monitor != httpID || one.Result.Monitors == nil || len(one.Result.Monitors) != 0 {
		t.Errorf("group to single monitor: monitor %q, monitors %#v", one.Result.Monitor, one.Result.Monitors)
	}
	e.do("PATCH", "/api/v1/pools/"+pool, map[string]any{"monitor": nil, "monitors": []map[string]any{{"monitor": tcpID}}}).json(t, &one)
	if one.Result.Monitor != "" || len(one.Result.Monitors) != 1 || one.Result.Monitors[0].Monitor != tcpID {
		t.Errorf("single monitor to group: monitor %q, monitors %+v", one.Result.Monitor, one.Result.Monitors)
	}
}
