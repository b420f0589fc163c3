package api

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/glb-dns/glb/outbound"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// Prefix is the path under which the resources live.
const Prefix = "/api/v1"

// Explainer shows the whole steering decision for one client of one load
// balancer. The steering engine implements it. ecs is the zero Prefix when
// the query carries no client subnet; qtype is "A" or "AAAA". An unknown
// load balancer is pools.ErrNotFound.
type Explainer interface {
	Explain(ctx context.Context, lbID string, client netip.Addr, ecs netip.Prefix, qtype string) (*Explanation, error)
}

// Options configure the API handler.
type Options struct {
	// Store holds the configuration. Required.
	Store pools.Store
	// Token is the bearer token required on /api/v1; empty disables auth.
	Token string
	// Explainer answers /load_balancers/{id}/explain; nil answers 501.
	Explainer Explainer
	// Snapshot returns the steering snapshot being served and how it
	// locates a client subnet, for traffic previews (nil snapshot: none
	// loaded yet); a nil Snapshot answers 501.
	Snapshot func() (*steering.Snapshot, steering.Locator)
	// Ready reports that a snapshot is loaded (/readyz); nil means ready.
	Ready func() bool
	// Health returns the agreed health view (optional): with it, a pool's
	// health shows the state every node agrees on beside each node's view.
	Health func() *pools.Health
	// OwnView returns this node's current view of a pool, straight from
	// its checker (optional). It stands in for the store's copy of this
	// node, which lags by up to a publication, so that a pool's per-node
	// checks agree with the agreed state, which takes our own results at
	// once: a page redrawn on a health event shows the change in both.
	OwnView func(pool string) pools.NodeHealth
	// Registry receives the HTTP metrics and is served at /metrics; nil
	// uses a fresh registry.
	Registry *prometheus.Registry
	// Logger; nil discards.
	Logger *slog.Logger
	// Now is the clock for health ages; nil is time.Now.
	Now func() time.Time
	// Transfers tells what secondaries last transferred
	// (/zones/{id}/transfer); nil: none do.
	Transfers TransferState
	// EventsInterval is how often /events compares the revision and the
	// agreed health; zero is one second.
	EventsInterval time.Duration
	// Outbound is where the URLs written (notification receivers, rollout
	// guards) may lead; nil is outbound's default policy.
	Outbound *outbound.Policy
	// Resolver finds the addresses of those URLs' host names; nil is the
	// system's.
	Resolver *net.Resolver
	// NodeGoneAfter is how long a node may go without a report before
	// GET /nodes calls it gone; zero is pools.NodeGoneAfter.
	NodeGoneAfter time.Duration
}

type server struct {
	Options
	log    *slog.Logger
	tokens *tokenCache
	// scopes is what zone-scoped tokens are judged by (zone_scope.go).
	scopes scopeViews
}

// New returns the HTTP handler of the API, /healthz, /readyz and /metrics.
// The handler is a chi router (chi.Routes), so that its routes can be
// walked.
func New(o Options) http.Handler {
	s := &server{Options: o, log: o.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With("component", "api")
	if s.Registry == nil {
		s.Registry = prometheus.NewRegistry()
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	s.tokens = newTokenCache(s.Store, s.Now, s.log)

	r := chi.NewRouter()
	// Authentication comes before routing, so that 404 and 405 cannot map
	// the API for a client without a token; GetHead then serves HEAD on
	// every GET route (RFC 9110 §9.3.2) and net/http drops the body.
	r.Use(newHTTPMetrics(s.Registry).middleware, s.recoverer, s.authAPI, middleware.GetHead)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, newProblem(http.StatusNotFound, "no such route: "+r.URL.Path))
	})
	mux := r
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if mux.Match(chi.NewRouteContext(), m, r.URL.Path) {
				allow = append(allow, m)
				if m == http.MethodGet {
					allow = append(allow, http.MethodHead)
				}
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeProblem(w, newProblem(http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path))
	})

	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", s.readyz)
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))

	r.Group(func(r chi.Router) {
		r.Get(Prefix+"/openapi.json", serveOpenAPI)
		for _, k := range pools.Kinds {
			h := resource{s: s, kind: k}
			collection{h.list, h.create, h.get, h.replace, h.patch, h.delete}.mount(r, Prefix+"/"+string(k), "id")
		}
		r.Get(Prefix+"/pools/{id}/health", s.poolHealth)
		r.Get(Prefix+"/load_balancers/{id}/explain", s.explain)
		r.Post(Prefix+"/load_balancers/{id}/preview", s.preview)
		r.Get(Prefix+"/load_balancers/{id}/rum", s.rumView)           // rum.go
		r.Get(Prefix+"/load_balancers/{id}/versions", s.listVersions) // versions.go
		r.Get(Prefix+"/load_balancers/{id}/versions/{n}", s.getVersion)
		r.Post(Prefix+"/load_balancers/{id}/versions/{n}/rollback", s.rollback)
		r.Get(Prefix+"/events", s.events)
		r.Get(Prefix+"/regions", s.listRegions)
		r.Get(Prefix+"/analytics", s.analytics)
		r.Get(Prefix+"/zones/{id}/dnssec", s.dnssecStatus)
		r.Post(Prefix+"/zones/{id}/dnssec/rollover", s.dnssecRollover)
		s.accessRoutes(r)
		s.tsigRoutes(r)
		s.shiftRoutes(r)
		s.rolloutRoutes(r)
		s.notificationRoutes(r)
		s.zoneFileRoutes(r)
		s.nodeRoutes(r)
		s.feedRoutes(r) // feeds.go
	})
	return r
}

// served is the snapshot being served, for a handler that needs it to
// judge or preview something (what: "to preview with"); when there is no
// steering engine (501) or no snapshot loaded yet (503) it answers the
// request itself and returns ok false.
func (s *server) served(w http.ResponseWriter, r *http.Request, what string) (snap *steering.Snapshot, locate steering.Locator, ok bool) {
	if s.Snapshot == nil {
		s.writeError(w, r, newProblem(http.StatusNotImplemented, "this server has no steering engine "+what))
		return nil, nil, false
	}
	if snap, locate = s.Snapshot(); snap == nil {
		s.writeError(w, r, newProblem(http.StatusServiceUnavailable, "no configuration snapshot loaded yet "+what))
		return nil, nil, false
	}
	return snap, locate, true
}

// collection is the handlers of a collection at a path: list and create
// on it; get, replace, patch and delete on path/{key}. A nil one is not
// routed (405, naming the methods that are).
type collection struct {
	list, create, get, replace, patch, delete http.HandlerFunc
}

func (c collection) mount(r chi.Router, path, key string) {
	item := path + "/{" + key + "}"
	for _, h := range []struct {
		method, pattern string
		fn              http.HandlerFunc
	}{
		{http.MethodGet, path, c.list}, {http.MethodPost, path, c.create},
		{http.MethodGet, item, c.get}, {http.MethodPut, item, c.replace},
		{http.MethodPatch, item, c.patch}, {http.MethodDelete, item, c.delete},
	} {
		if h.fn != nil {
			r.Method(h.method, h.pattern, h.fn)
		}
	}
}

func (s *server) readyz(w http.ResponseWriter, _ *http.Request) {
	if s.Ready != nil && !s.Ready() {
		writeProblem(w, newProblem(http.StatusServiceUnavailable, "no configuration snapshot loaded yet"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// recoverer turns a handler panic into a logged 500, so that one bad
// request cannot take the API (and the DNS server beside it) down.
func (s *server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			rec := recover()
			if rec == nil {
				return
			}
			if rec == http.ErrAbortHandler {
				panic(rec)
			}
			s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", rec)
			writeProblem(w, newProblem(http.StatusInternalServerError, "internal error; see the server log"))
		}()
		next.ServeHTTP(w, r)
	})
}
