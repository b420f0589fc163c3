package healthcheck

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/glb-dns/glb/pools"
)

// spec is how one monitor checks, shared by every origin it applies to:
// a hundred thousand targets hold a few specs rather than a copy each,
// and comparing two targets' specs is comparing two pointers.
type spec struct {
	params
	header map[string][]string // the monitor's, without Host

	httpOnce sync.Once
	httpSpec *httpSpec // see http
}

// params are the comparable fields of a spec.
type params struct {
	typ           pools.MonitorType
	port          int // resolved: never 0 for http and https
	method, path  string
	host          string        // the monitor's Host header
	timeout       time.Duration // one attempt
	interval      time.Duration
	retries       int
	expectedCodes string
	expectedBody  string
	follow        bool
	insecure      bool
	up, down      int

	// udp, dns and tls monitors (pools.Monitor).
	send, expect, encoding  string
	queryName, queryType    string
	protocol, rcode, answer string
	serverName              string
	minDays                 int
	starttls                bool

	// grpc and icmp monitors.
	service        string
	tls            bool
	count, maxLoss int
}

// newSpec resolves a monitor's defaults; unit is one second outside tests.
func newSpec(m *pools.Monitor, unit time.Duration) *spec {
	s := &spec{params: params{
		typ:           m.Type,
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
		send:          m.Send,
		expect:        m.Expect,
		encoding:      m.PayloadEncoding,
		queryName:     m.QueryName,
		queryType:     m.QueryType,
		protocol:      m.Protocol,
		rcode:         m.ExpectedRcode,
		answer:        m.ExpectedAnswer,
		serverName:    m.ServerName,
		minDays:       m.MinDaysValid,
		starttls:      m.StartTLS,
		service:       m.Service,
		tls:           m.TLS,
		count:         m.Count,
		maxLoss:       m.MaxLoss,
	}}
	if s.typ == "" {
		s.typ = pools.MonitorHTTP
	}
	if s.method == "" {
		s.method = http.MethodGet
	}
	if s.path == "" {
		s.path = "/"
	}
	if s.port == 0 {
		switch s.typ {
		case pools.MonitorHTTP:
			s.port = 80
		case pools.MonitorHTTPS, pools.MonitorTLS:
			s.port = 443
		case pools.MonitorDNS:
			s.port = 53
		case pools.MonitorSMTP:
			s.port = 25
		}
	}
	for k, vs := range m.Header {
		if strings.EqualFold(k, "Host") {
			if len(vs) > 0 {
				s.host = vs[0]
			}
			continue
		}
		if s.header == nil {
			s.header = map[string][]string{}
		}
		s.header[k] = append([]string(nil), vs...)
	}
	return s
}

// equal compares everything that decides how a check runs; a monitor's
// description or revision is not part of it.
func (s *spec) equal(o *spec) bool {
	return s.params == o.params && maps.EqualFunc(s.header, o.header, slices.Equal)
}

// specs returns the spec of every monitor of cfg by id. A monitor whose
// check did not change keeps its spec from prev, so that the targets
// using it compare equal by pointer.
func specs(cfg *pools.Config, unit time.Duration, prev map[string]*spec) map[string]*spec {
	out := make(map[string]*spec, len(cfg.Monitors))
	for i := range cfg.Monitors {
		m := &cfg.Monitors[i]
		s := newSpec(m, unit)
		if old := prev[m.ID]; old != nil && old.equal(s) {
			s = old
		}
		out[m.ID] = s
	}
	return out
}

// target is everything that decides how one origin of one pool is checked.
type target struct {
	*spec
	pool, poolName string
	origin         string
	address        string // IP or hostname, as configured
	host           string // Host header: the origin's, else the monitor's
}

func newTarget(p *pools.Pool, s *spec, o *pools.Origin) *target {
	return &target{spec: s, pool: p.ID, poolName: p.Name, origin: o.Name, address: o.Address, host: hostOf(s, o)}
}

// is reports whether t checks origin o of pool p under s as it would be
// built afresh, without building it: Update asks this of every origin of
// every configuration, and nearly always the answer is yes.
func (t *target) is(p *pools.Pool, s *spec, o *pools.Origin) bool {
	return t.spec == s && t.pool == p.ID && t.poolName == p.Name && t.origin == o.Name &&
		t.address == o.Address && t.host == hostOf(s, o)
}

// hostOf is the Host header of an origin's checks. The origin's wins: one
// monitor serves many origins, and each origin may be a different
// virtual host.
func hostOf(s *spec, o *pools.Origin) string {
	if vs := o.Header["Host"]; len(vs) > 0 {
		return vs[0] // the usual spelling, without walking the map
	}
	for k, vs := range o.Header {
		if strings.EqualFold(k, "Host") && len(vs) > 0 {
			return vs[0]
		}
	}
	return s.host
}

// monitored is the spec pool p is checked with, nil when it is not
// checked: disabled, without a monitor or naming one that does not exist.
// Disabled pools are not probed since steering never answers with them;
// enabling one makes its origins new pairs, checked at once. The same
// holds for disabled origins (Update skips them).
func monitored(p *pools.Pool, specs map[string]*spec) *spec {
	if p.Monitor == "" || !p.Enabled {
		return nil
	}
	return specs[p.Monitor]
}
