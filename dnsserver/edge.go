package dnsserver

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/internal/promset"
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
	set := promset.New("dns")
	cookies := set.CounterVec("cookies_total",
		"Queries with a DNS cookie, by what the server made of it (client_only, valid, invalid, malformed).", "result")
	rrl := set.CounterVec("rrl_limited_total", "Responses over the rate limit, by action (slipped: sent truncated; dropped).", "action")
	evicted := set.Counter("tcp_evicted_total", "Idle TCP connections closed to admit a new one at the connection limit.")
	if err := set.Register(reg); err != nil {
		return nil, err
	}
	return &edgeMetrics{
		cookieClient: cookies.WithLabelValues("client_only"), cookieValid: cookies.WithLabelValues("valid"),
		cookieInvalid: cookies.WithLabelValues("invalid"), cookieMalformed: cookies.WithLabelValues("malformed"),
		rrlSlipped: rrl.WithLabelValues("slipped"), rrlDropped: rrl.WithLabelValues("dropped"),
		tcpEvicted: evicted,
	}, nil
}
