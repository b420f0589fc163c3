package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

type openAPIDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]map[string]any `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

func loadOpenAPI(t *testing.T) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	dec := json.NewDecoder(bytes.NewReader(api.OpenAPI()))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	return doc
}

// TestOpenAPIDescribesEveryRoute holds the document and the router equal:
// a route added without documenting it (or the reverse) fails here.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	h := api.New(api.Options{Store: openStore(t)})
	routes, ok := h.(chi.Routes)
	if !ok {
		t.Fatalf("api.New returned %T, not chi.Routes", h)
	}
	var served []string
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		served = append(served, method+" "+route)
		if method == http.MethodGet {
			// middleware.GetHead serves HEAD on every GET route.
			served = append(served, http.MethodHead+" "+route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, item := range loadOpenAPI(t).Paths {
		for method := range item {
			if method == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(served)
	slices.Sort(documented)
	if !slices.Equal(served, documented) {
		t.Fatalf("routes and OpenAPI operations differ\nserved:     %v\ndocumented: %v", served, documented)
	}
	// 5 kinds × 6 operations, health, explain, the document, 3 probes,
	// 4 token operations, the audit log, and a zone's DNSSEC state and
	// rollover, and HEAD beside each of the 5×2+6 GETs, the 2 token GETs,
	// the audit log's and the DNSSEC state's; the event stream's GET and
	// HEAD; the traffic preview; the TSIG keys' 4 operations and 2 HEADs;
	// shifts: list, get (each with HEAD), start and end; the safety rules
	// broken now (GET and HEAD); notifications: list, get and deliveries
	// (each with HEAD), create, replace, delete and test; the global
	// safety rules (GET, HEAD, PUT); the regions (GET, HEAD); the analytics
	// (GET, HEAD); a load balancer's versions: list and get (each with
	// HEAD) and rollback; rollouts: list and get (each with HEAD), start,
	// pause, resume and abort; a zone file's import and export (GET,
	// HEAD); a zone's transfer state (GET, HEAD); the nodes: list and get
	// (each with HEAD), drain and undrain; a load balancer's RUM table
	// (GET, HEAD); an origin's feed (GET, HEAD, PUT) and Alertmanager's
	// webhook.
	if len(served) != 5*6+6+5+2+5*2+6+3+1+2+1+6+6+2+10+3+2+2+5+8+3+2+6+2+4 {
		t.Fatalf("%d routes: %v", len(served), served)
	}
}

// TestOpenAPISchemasMatchTypes keeps every documented schema's fields and
// defaults equal to the Go types' JSON fields and default values.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	zone := pools.DefaultZone()
	cases := map[string]any{
		"Zone": zone, "SOA": zone.SOA, "Record": pools.Record{},
		"Monitor":          pools.DefaultMonitor(),
		"Pool":             pools.DefaultPool(),
		"Origin":           pools.DefaultOrigin(),
		"OriginSteering":   pools.DefaultPool().OriginSteering,
		"LoadBalancer":     pools.DefaultLoadBalancer(),
		"RandomSteering":   pools.DefaultLoadBalancer().RandomSteering,
		"LocationStrategy": pools.DefaultLoadBalancer().LocationStrategy,
		"ZonalAffinity":    pools.DefaultLoadBalancer().ZonalAffinity,
		"Network":          pools.Network{},
		"SafetyRules":      pools.SafetyRules{},
		"Region":           api.Region{},
		"FieldError":       pools.FieldError{},
		"Referrer":         pools.Referrer{},
		"Token":            pools.Token{},
		"AuditEntry":       pools.AuditEntry{},
		"HealthTransition": pools.HealthTransition{},
		"RegionHealth":     pools.RegionHealth{},
		"ZoneDNSSEC":       zone.DNSSEC,
		"ExplainDNSSEC":    api.ExplainDNSSEC{},
		"Problem":          api.Problem{},
		"PoolHealth":       api.PoolHealth{},
		"OriginHealth":     api.OriginHealth{},
		"NodeCheck":        api.NodeCheck{},
		"NodeMonitorCheck": api.NodeMonitorCheck{},
		"MonitorView":      api.MonitorView{},
		"PoolMonitor":      pools.PoolMonitor{},
		"Explanation":      api.Explanation{},
		"Trace":            steering.Trace{},
		"TraceLB":          steering.TraceLB{},
		"TraceClient":      steering.TraceClient{},
		"TraceCandidate":   steering.TraceCandidate{},
		"TracePool":        steering.TracePool{},
		"TraceAffinity":    steering.TraceAffinity{},
		"TraceOrigins":     steering.TraceOrigins{},
		"TraceWeight":      steering.TraceWeight{},
		"TraceRecord":      steering.TraceRecord{},
		"TraceRTT":         steering.TraceRTT{},
		"RevisionEvent":    api.RevisionEvent{},
		"HealthEvent":      api.HealthEvent{},
		"HealthChange":     api.HealthChange{},
		"PreviewRequest":   api.PreviewRequest{},
		"PreviewClient":    api.PreviewClient{},
		"PreviewEdits":     api.PreviewEdits{},
		"Preview":          api.Preview{},
		"Shares":           steering.Shares{},
		"PoolShare":        steering.PoolShare{},
		"OriginShare":      steering.OriginShare{},
		"CandidateOrder":   steering.CandidateOrder{},
		"OrderPool":        steering.OrderPool{},
		"LoadShedding":     pools.DefaultPool().LoadShedding,
		"AllDown":          pools.DefaultLoadBalancer().AllDown,
		"Safety":           pools.DefaultLoadBalancer().Safety,
		"Shift":            pools.Shift{},
		"ShiftTarget":      pools.ShiftTarget{},
		"ShiftHarm":        pools.ShiftHarm{},
		"Rollout":          pools.Rollout{},
		"RolloutGuards":    pools.RolloutGuards{},
		"TraceAllDown":     steering.TraceAllDown{},
		"TraceShed":        steering.TraceShed{},
		// Notifications.
		"Notification":          pools.Subscription{},
		"NewNotification":       api.NewNotification{},
		"NotificationEvent":     pools.Event{},
		"NotificationEventData": pools.EventData{},
		"Delivery":              pools.Delivery{},
		// Analytics.
		"Analytics":       api.Analytics{},
		"AnalyticsSeries": api.AnalyticsSeries{},
		"AnalyticsPoint":  api.AnalyticsPoint{},
		"PreviewSample":   api.PreviewSample{},
		"PoolMove":        steering.PoolMove{},
		// Versions.
		"Version":        pools.Version{},
		"VersionObjects": pools.VersionObjects{},
		"VersionChange":  pools.VersionChange{},
		"Rollback":       pools.Rollback{},
		"RollbackResult": api.RollbackResult{},
		// Feeds.
		"FeedView":           api.FeedView{},
		"FeedAlert":          pools.FeedAlert{},
		"FeedRequest":        pools.FeedRequest{},
		"ByLoad":             pools.ByLoad{},
		"TraceLoad":          steering.TraceLoad{},
		"AlertmanagerResult": api.AlertmanagerResult{},
		"IgnoredAlert":       api.IgnoredAlert{},
	}
	for name, v := range cases {
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("no schema %s", name)
			continue
		}
		fields := jsonNames(reflect.TypeOf(v))
		var props []string
		for p := range s.Properties {
			props = append(props, p)
		}
		slices.Sort(fields)
		slices.Sort(props)
		if !slices.Equal(fields, props) {
			t.Errorf("schema %s has %v, the Go type %v", name, props, fields)
		}
		b, _ := json.Marshal(v)
		var defaults map[string]any
		_ = json.Unmarshal(b, &defaults)
		for p, sch := range s.Properties {
			d, has := sch["default"]
			if !has {
				continue
			}
			got, present := defaults[p]
			if !present && (d == nil || d == "" || d == float64(0) || d == false) {
				continue // omitempty zero value
			}
			if !reflect.DeepEqual(got, d) {
				t.Errorf("%s.%s: documented default %v, Go default %v", name, p, d, got)
			}
		}
	}
}

func jsonNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			out = append(out, jsonNames(f.Type)...)
			continue
		}
		if name != "-" && f.IsExported() {
			out = append(out, name)
		}
	}
	return out
}

func TestOpenAPIServed(t *testing.T) {
	e := parallelEnv(t, nil)
	r := e.do("GET", "/api/v1/openapi.json", nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" || !bytes.Equal(r.body, api.OpenAPI()) {
		t.Fatalf("GET openapi.json: %d %q", r.status, r.header.Get("Content-Type"))
	}
}
