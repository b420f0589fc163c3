package healthcheck

import (
	"net/http"
	"strings"
	"time"

	"github.com/glb-dns/glb/pools"
)

// targets lists what this node checks for a configuration: every enabled
// origin of every enabled pool whose monitor exists. Disabled pools and
// origins are not probed (steering never answers with them); enabling one
// makes it a new pair, checked at once. unit is one second outside tests.
func targets(cfg *pools.Config, unit time.Duration) map[pools.OriginKey]*target {
	out := map[pools.OriginKey]*target{}
	if cfg == nil {
		return out
	}
	monitors := make(map[string]*pools.Monitor, len(cfg.Monitors))
	for i := range cfg.Monitors {
		monitors[cfg.Monitors[i].ID] = &cfg.Monitors[i]
	}
	for i := range cfg.Pools {
		p := &cfg.Pools[i]
		m := monitors[p.Monitor]
		if p.Monitor == "" || m == nil || !p.Enabled {
			continue
		}
		for _, o := range p.Origins {
			if !o.Enabled {
				continue
			}
			t := newTarget(p, m, &o, unit)
			out[t.key()] = t
		}
	}
	return out
}

func newTarget(p *pools.Pool, m *pools.Monitor, o *pools.Origin, unit time.Duration) *target {
	t := &target{
		pool:          p.ID,
		poolName:      p.Name,
		origin:        o.Name,
		typ:           m.Type,
		address:       o.Address,
		port:          m.Port,
		method:        m.Method,
		path:          m.Path,
		timeout:       time.Duration(max(m.Timeout, 1)) * unit,
		interval:      time.Duration(max(m.Interval, 1)) * unit,
		retries:       max(m.Retries, 0),
		expectedCodes: m.ExpectedCodes,
		expectedBody:  m.ExpectedBody,
		follow:        m.FollowRedirects,
		insecure:      m.AllowInsecure,
		up:            m.ConsecutiveUp,
		down:          m.ConsecutiveDown,
	}
	if t.typ == "" {
		t.typ = pools.MonitorHTTP
	}
	if t.method == "" {
		t.method = http.MethodGet
	}
	if t.path == "" {
		t.path = "/"
	}
	if t.port == 0 {
		switch t.typ {
		case pools.MonitorHTTP:
			t.port = 80
		case pools.MonitorHTTPS:
			t.port = 443
		}
	}
	for k, vs := range m.Header {
		if strings.EqualFold(k, "Host") {
			if len(vs) > 0 {
				t.host = vs[0]
			}
			continue
		}
		if t.header == nil {
			t.header = map[string][]string{}
		}
		t.header[k] = append([]string(nil), vs...)
	}
	// The origin's Host wins: one monitor serves many origins, and each
	// origin may be a different virtual host.
	for k, vs := range o.Header {
		if strings.EqualFold(k, "Host") && len(vs) > 0 {
			t.host = vs[0]
		}
	}
	return t
}
