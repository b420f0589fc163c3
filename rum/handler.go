package rum

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/pools"
)

//go:embed beacon.js
var beaconJS string

// MaxReportBytes bounds a report's body; MaxMeasurements its times.
const (
	MaxReportBytes  = 4096
	MaxMeasurements = 16
)

// Handler serves GET /rum/v1/beacon.js and POST /rum/v1/report. It needs
// no API token: the beacon runs in anyone's browser. What a report may
// say is bounded by the site key (its load balancers' pools), its size,
// the client network's rate and the values' range.
type Handler struct {
	// Config is the served configuration (nil before there is one).
	Config    func() *pools.Config
	Collector *Collector
	// TrustedProxies may say who the client is in X-Forwarded-For (the
	// proxies in front of the API); anyone else's header is ignored.
	TrustedProxies []netip.Prefix

	reports *prometheus.CounterVec
}

// Register registers the handler's metrics on reg.
func (h *Handler) Register(reg prometheus.Registerer) error {
	h.reports = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "glb", Subsystem: "rum", Name: "reports_total",
		Help: "RUM reports by result (accepted, invalid, unknown_key, origin_refused, rate_limited)."}, []string{"result"})
	for _, r := range []string{"accepted", "invalid", "unknown_key", "origin_refused", "rate_limited"} {
		h.reports.WithLabelValues(r)
	}
	return reg.Register(h.reports)
}

func (h *Handler) count(result string) {
	if h.reports != nil {
		h.reports.WithLabelValues(result).Inc()
	}
}

// site is what a site key stands for: its load balancers' settings, the
// pools they measure and the zone of the unique name.
type site struct {
	rums  []*pools.LoadBalancerRUM
	pools []beaconPool
	zone  string
}

type beaconPool struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

func (h *Handler) site(key string) *site {
	cfg := h.Config()
	if cfg == nil || key == "" {
		return nil
	}
	zones := map[string]string{}
	for _, z := range cfg.Zones {
		zones[z.ID] = pools.CanonicalName(z.Name)
	}
	probes := map[string]string{}
	for _, p := range cfg.Pools {
		if p.RUM != nil && p.RUM.ProbeURL != "" {
			probes[p.ID] = p.RUM.ProbeURL
		}
	}
	var s *site
	seen := map[string]bool{}
	for i := range cfg.LoadBalancers {
		l := &cfg.LoadBalancers[i]
		if l.RUM == nil || !l.RUM.HasSiteKey(key) {
			continue
		}
		if s == nil {
			s = &site{zone: zones[l.Zone]}
		}
		s.rums = append(s.rums, l.RUM)
		for _, id := range l.DefaultPools {
			if u, ok := probes[id]; ok && !seen[id] {
				seen[id] = true
				s.pools = append(s.pools, beaconPool{ID: id, URL: u})
			}
		}
	}
	return s
}

func (s *site) allows(origin string) bool {
	for _, r := range s.rums {
		if len(r.AllowedOrigins) == 0 || r.AllowsOrigin(origin) {
			return true
		}
	}
	return false
}

func (s *site) measures(pool string) bool {
	for _, p := range s.pools {
		if p.ID == pool {
			return true
		}
	}
	return false
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/rum/v1/beacon.js" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.beacon(w, r)
	case r.URL.Path == "/rum/v1/report" && r.Method == http.MethodPost:
		h.report(w, r)
	case r.URL.Path == "/rum/v1/report" && r.Method == http.MethodOptions:
		h.cors(w, r, nil)
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == "/rum/v1/beacon.js" || r.URL.Path == "/rum/v1/report":
		w.Header().Set("Allow", map[bool]string{true: "GET, HEAD", false: "POST, OPTIONS"}[strings.HasSuffix(r.URL.Path, ".js")])
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) beacon(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	s := h.site(key)
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if s == nil {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "/* glb: no load balancer has the RUM site key %q */\n", strings.Map(func(c rune) rune {
			if c < ' ' || c == '*' || c == '/' {
				return -1
			}
			return c
		}, key))
		return
	}
	cfg, _ := json.Marshal(struct {
		Key   string       `json:"key"`
		Zone  string       `json:"zone"`
		Pools []beaconPool `json:"pools"`
	}{key, s.zone, s.pools})
	// json.Marshal escapes <, > and & : the config cannot end the script.
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write([]byte(strings.Replace(beaconJS, "/*GLB_RUM_CONFIG*/null", string(cfg), 1)))
}

// cors answers for the site's origins (any origin with a site that
// allows any).
func (h *Handler) cors(w http.ResponseWriter, r *http.Request, s *site) {
	o := r.Header.Get("Origin")
	if o == "" {
		return
	}
	w.Header().Set("Vary", "Origin")
	w.Header().Set("Access-Control-Allow-Origin", o)
	w.Header().Set("Access-Control-Allow-Credentials", "true")
	w.Header().Set("Access-Control-Allow-Methods", "POST")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
	w.Header().Set("Access-Control-Max-Age", "86400")
}

type report struct {
	Key   string `json:"key"`
	Token string `json:"token"`
	M     []struct {
		P  string  `json:"p"`
		Ms float64 `json:"ms"`
	} `json:"m"`
}

func (h *Handler) report(w http.ResponseWriter, r *http.Request) {
	body := http.MaxBytesReader(w, r.Body, MaxReportBytes)
	var rep report
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.refuse(w, "invalid", http.StatusRequestEntityTooLarge, "body", fmt.Sprintf("at most %d bytes", MaxReportBytes))
			return
		}
		h.refuse(w, "invalid", http.StatusBadRequest, "body", "not a RUM report: "+err.Error())
		return
	}
	s := h.site(rep.Key)
	if s == nil {
		h.refuse(w, "unknown_key", http.StatusForbidden, "key", "no load balancer has this RUM site key")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !s.allows(o) {
		h.refuse(w, "origin_refused", http.StatusForbidden, "Origin", o+" is not in the load balancer's rum.allowed_origins")
		return
	}
	h.cors(w, r, s)
	if rep.Token != "" && !TokenOK([]byte(rep.Token)) {
		h.refuse(w, "invalid", http.StatusBadRequest, "token", "8 to 40 characters of a-z and 0-9")
		return
	}
	if len(rep.M) == 0 || len(rep.M) > MaxMeasurements {
		h.refuse(w, "invalid", http.StatusBadRequest, "m", fmt.Sprintf("1 to %d measurements", MaxMeasurements))
		return
	}
	ms := make([]Measurement, 0, len(rep.M))
	seen := map[string]bool{}
	for i, m := range rep.M {
		switch {
		case !s.measures(m.P):
			h.refuse(w, "invalid", http.StatusBadRequest, fmt.Sprintf("m[%d].p", i), "not a pool with rum.probe_url of this site key's load balancers")
			return
		case seen[m.P]:
			h.refuse(w, "invalid", http.StatusBadRequest, fmt.Sprintf("m[%d].p", i), "measured twice")
			return
		case !(m.Ms >= MinMs && m.Ms <= MaxMs):
			h.refuse(w, "invalid", http.StatusBadRequest, fmt.Sprintf("m[%d].ms", i), fmt.Sprintf("must be in [%g, %g]", float64(MinMs), float64(MaxMs)))
			return
		}
		seen[m.P] = true
		ms = append(ms, Measurement{Pool: m.P, Ms: m.Ms})
	}
	client, ok := h.client(r)
	if !ok {
		h.refuse(w, "invalid", http.StatusBadRequest, "client", "no client address")
		return
	}
	if err := h.Collector.Add(Network(client), rep.Token, ms); err != nil {
		h.count("rate_limited")
		w.Header().Set("Retry-After", "60")
		http.Error(w, "rate limited", http.StatusTooManyRequests)
		return
	}
	h.count("accepted")
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) refuse(w http.ResponseWriter, result string, code int, field, msg string) {
	h.count(result)
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": http.StatusText(code), "status": code,
		"detail": field + ": " + msg, "errors": []map[string]string{{"field": field, "message": msg}}})
}

// client is the reporting browser's address: the peer, or when the peer
// is a trusted proxy, the last address in X-Forwarded-For that is not one.
func (h *Handler) client(r *http.Request) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	peer = peer.Unmap()
	if !h.trusted(peer) {
		return peer, true
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer, true
		}
		a = a.Unmap()
		if !h.trusted(a) {
			return a, true
		}
	}
	return peer, true
}

func (h *Handler) trusted(a netip.Addr) bool {
	for _, p := range h.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
