package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/api/apitest"
	"github.com/glb-dns/glb/pools"
)

// TestIfNoneMatchRFC9110 holds GET to RFC 9110 §13.1.2: a list matches
// when any tag does, * matches an existing object, and the comparison is
// weak (W/"3" names revision 3).
func TestIfNoneMatchRFC9110(t *testing.T) {
	e := parallelEnv(t, nil)
	id := e.create(pools.KindNetwork, networkBody("10.3.0.0/16"))["id"].(string)
	path := "/api/v1/networks/" + id
	for range 2 {
		if r := e.do("PATCH", path, `{"description": "again"}`); r.status != http.StatusOK {
			t.Fatalf("PATCH: %d %s", r.status, r.body)
		}
	}
	for _, c := range []struct {
		inm  []string // one header line each
		want int
	}{
		{[]string{`"3"`}, http.StatusNotModified},
		{[]string{`"1", "3"`}, http.StatusNotModified},
		{[]string{`"1","3"`}, http.StatusNotModified},
		{[]string{`*`}, http.StatusNotModified},
		{[]string{`W/"3"`}, http.StatusNotModified},
		{[]string{`W/"1", W/"3"`}, http.StatusNotModified},
		{[]string{`"a,b", "3"`}, http.StatusNotModified}, // a comma inside a tag
		{[]string{`"1"`, `"3"`}, http.StatusNotModified}, // two header lines
		{[]string{`"1", "2"`}, http.StatusOK},
		{[]string{`"2"`}, http.StatusOK},
		{[]string{`"33"`}, http.StatusOK},
		{[]string{`3`}, http.StatusOK},       // not a tag: malformed matches nothing
		{[]string{`"3`}, http.StatusOK},      // unterminated
		{[]string{`"1" "3"`}, http.StatusOK}, // no comma between tags
		{[]string{`W/ "3"`}, http.StatusOK},  // W/ must be followed by the quote
		{[]string{`"3,4"`}, http.StatusOK},   // one tag, not two
		{[]string{`"1", *`}, http.StatusOK},  // * only alone
	} {
		for _, method := range []string{"GET", "HEAD"} {
			req, err := http.NewRequest(method, e.srv.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range c.inm {
				req.Header.Add("If-None-Match", v)
			}
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("%s If-None-Match %q: %d, want %d", method, c.inm, resp.StatusCode, c.want)
			}
			if et := resp.Header.Get("ETag"); et != `"3"` {
				t.Errorf("%s If-None-Match %q: ETag %q, want \"3\"", method, c.inm, et)
			}
		}
	}
	// If-Match stays strong: a weak tag never matches, even the current one.
	e.do("PUT", path, networkBody("10.3.0.0/16"), "If-Match", `W/"3"`).problem(t, http.StatusPreconditionFailed)
	if r := e.do("PUT", path, networkBody("10.3.0.0/16"), "If-Match", `"3"`); r.status != http.StatusOK {
		t.Fatalf("If-Match current: %d %s", r.status, r.body)
	}
	e.do("GET", "/api/v1/networks/nope", nil, "If-None-Match", "*").problem(t, http.StatusNotFound)
}

// documentedGETs lists every GET path of the document with its {id}
// filled from f.
func documentedGETs(t *testing.T, f fixture) []string {
	t.Helper()
	ids := map[string]string{"zones": f.zone, "monitors": f.monitor, "pools": f.pool, "load_balancers": f.lb, "networks": f.network}
	var out []string
	for path, item := range apitest.Must(t).Doc().Paths.Map() {
		if item.Get == nil || path == "/api/v1/events" {
			// The event stream does not end; events_test.go covers it.
			continue
		}
		if kind, _, ok := strings.Cut(strings.TrimPrefix(path, "/api/v1/"), "/{id}"); ok {
			if ids[kind] == "" {
				continue // shifts: shift_test.go, with a steering engine to start one
			}
			path = strings.Replace(path, "{id}", ids[kind], 1)
		}
		path = strings.Replace(path, "{name}", "nope", 1) // answers 404 to both
		path = strings.Replace(path, "{n}", "1", 1)       // the load balancer's creation
		if strings.HasSuffix(path, "/explain") {
			path += "?client=192.0.2.1"
		}
		if strings.HasSuffix(path, "/analytics") {
			path += "?load_balancer=" + f.lb
		}
		out = append(out, path)
	}
	slices.Sort(out)
	return out
}

// TestHEADOnEveryGETRoute: HEAD is GET without the body (RFC 9110
// §9.3.2), on the probes and /metrics too.
func TestHEADOnEveryGETRoute(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil) // a steering snapshot: /safety judges with one
	paths := documentedGETs(t, e.fixture())
	if len(paths) < 5*2+6 {
		t.Fatalf("%d GET routes documented: %v", len(paths), paths)
	}
	for _, path := range paths {
		get, head := e.do("GET", path, nil), e.do("HEAD", path, nil)
		if get.status != http.StatusOK && !strings.Contains(path, "nope") || head.status != get.status {
			t.Errorf("%s: GET %d, HEAD %d", path, get.status, head.status)
		}
		if len(head.body) != 0 {
			t.Errorf("HEAD %s: %d bytes of body", path, len(head.body))
		}
		for _, h := range []string{"Content-Type", "ETag"} {
			if head.header.Get(h) != get.header.Get(h) {
				t.Errorf("%s: %s %q on HEAD, %q on GET", path, h, head.header.Get(h), get.header.Get(h))
			}
		}
	}
	// HEAD is listed wherever GET is allowed.
	r := e.do("DELETE", "/api/v1/pools", nil)
	r.problem(t, http.StatusMethodNotAllowed)
	if allow := r.header.Get("Allow"); allow != "GET, HEAD, POST" {
		t.Errorf("Allow %q", allow)
	}
}

// TestAuthenticationBeforeRouting: without a token, nothing under /api/v1
// tells a route from a non-route.
func TestAuthenticationBeforeRouting(t *testing.T) {
	e := parallelEnv(t, func(o *api.Options) { o.Token = "s3cret-token" })
	anon := []string{"Authorization", ""}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/nonexistent"},
		{"GET", "/api/v1"},
		{"GET", "/api/v1/"},
		{"DELETE", "/api/v1/pools"},
		{"POST", "/api/v1/zones/x"},
		{"HEAD", "/api/v1/nonexistent"},
		{"GET", "/api%2Fv1/nonexistent"},
		{"GET", "/api/v1/pools"},
	} {
		r := e.do(c.method, c.path, nil, anon...)
		if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s %s without a token: %d %q", c.method, c.path, r.status, r.header.Get("WWW-Authenticate"))
		}
	}
	e.do("GET", "/api/v1/nonexistent", nil).problem(t, http.StatusNotFound)
	e.do("DELETE", "/api/v1/pools", nil).problem(t, http.StatusMethodNotAllowed)
	// Outside /api/v1 nothing needs a token, and routing answers as usual.
	e.do("GET", "/nonexistent", nil, anon...).problem(t, http.StatusNotFound)
	e.do("POST", "/healthz", nil, anon...).problem(t, http.StatusMethodNotAllowed)
}

// TestUndocumentedMethodsAre405: every documented path answers 405 with
// Allow for each method it does not list; the contract client checks
// that Allow names exactly the documented methods.
func TestUndocumentedMethodsAre405(t *testing.T) {
	e := parallelEnv(t, nil)
	paths := documentedGETs(t, e.fixture())
	for _, path := range paths {
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
			req, _ := http.NewRequest(m, e.srv.URL+path, nil)
			if _, _, err := apitest.Must(t).Route(req); err == nil {
				continue
			}
			if r := e.do(m, path, nil); r.status != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d, want 405", m, path, r.status)
			}
		}
	}
}

// TestMissingContentTypeReadAsJSON pins the documented rule: a body with
// no Content-Type at all is JSON; a different media type is 415.
func TestMissingContentTypeReadAsJSON(t *testing.T) {
	e := parallelEnv(t, nil)
	if r := e.do("POST", "/api/v1/networks", `{"cidr": "10.9.0.0/16"}`, "Content-Type", ""); r.status != http.StatusCreated {
		t.Fatalf("POST without Content-Type: %d %s", r.status, r.body)
	}
	e.do("POST", "/api/v1/networks", `{"cidr": "10.8.0.0/16"}`, "Content-Type", "text/plain").problem(t, http.StatusUnsupportedMediaType)
}
