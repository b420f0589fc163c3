package dnsserver

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// edge is what the server needs on the public internet beyond answering:
// identity (NSID, CHAOS), cookies, response rate limiting; built by New.
type edge struct {
	nsid         []byte
	chaosID      []byte
	chaosVersion []byte
	cookies      atomic.Pointer[cookieKeys]
	rrl          *rrl // nil: off
	m            *edgeMetrics
}

func newEdge(cfg *Config, reg prometheus.Registerer) (*edge, error) {
	if err := cfg.RRL.defaults(); err != nil {
		return nil, err
	}
	e := &edge{nsid: []byte(cfg.NSID), rrl: newRRL(cfg.RRL)}
	var err error
	if e.chaosID, err = chaosTXT(cfg.NSID); err != nil {
		return nil, err
	}
	if e.chaosVersion, err = chaosTXT(cfg.VersionString); err != nil {
		return nil, err
	}
	if len(e.nsid) > 512 {
		return nil, fmt.Errorf("nsid: %d bytes, at most 512", len(e.nsid))
	}
	e.cookies.Store(randomCookieKeys())
	if e.m, err = newEdgeMetrics(reg); err != nil {
		return nil, err
	}
	return e, nil
}

type edgeMetrics struct {
	cookieClient, cookieValid, cookieInvalid, cookieMalformed prometheus.Counter
	rrlSlipped, rrlDropped                                    prometheus.Counter
	tcpEvicted                                                prometheus.Counter
}

func newEdgeMetrics(reg prometheus.Registerer) (*edgeMetrics, error) {
	const ns, sub = "glb", "dns"
	cookies := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "cookies_total",
		Help: "Queries with a DNS cookie, by what the server made of it (client_only, valid, invalid, malformed).",
	}, []string{"result"})
	rrl := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "rrl_limited_total",
		Help: "Responses over the rate limit, by action (slipped: sent truncated; dropped).",
	}, []string{"action"})
	evicted := prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "tcp_evicted_total",
		Help: "Idle TCP connections closed to admit a new one at the connection limit.",
	})
	for _, c := range []prometheus.Collector{cookies, rrl, evicted} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return &edgeMetrics{
		cookieClient: cookies.WithLabelValues("client_only"), cookieValid: cookies.WithLabelValues("valid"),
		cookieInvalid: cookies.WithLabelValues("invalid"), cookieMalformed: cookies.WithLabelValues("malformed"),
		rrlSlipped: rrl.WithLabelValues("slipped"), rrlDropped: rrl.WithLabelValues("dropped"),
		tcpEvicted: evicted,
	}, nil
}
