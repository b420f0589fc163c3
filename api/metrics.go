package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/internal/promset"
)

// httpMetrics counts requests by route pattern (never the raw path: ids
// would make the label set unbounded), method and status class.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	set := promset.New("api")
	m := &httpMetrics{
		requests: set.CounterVec("requests_total", "API requests by route pattern, method and status class.", "route", "method", "code"),
		duration: set.HistogramVec("request_duration_seconds", "API request latency by route pattern and method.",
			[]float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}, "route", "method"),
	}
	reg.MustRegister(set.Collectors()...)
	return m
}

var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

func (m *httpMetrics) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)

		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		method := r.Method
		if !knownMethods[method] {
			method = "OTHER"
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		m.requests.WithLabelValues(route, method, strconv.Itoa(status/100)+"xx").Inc()
		m.duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	})
}
