package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/glb-dns/glb/console"
)

// TestMount: the console's files under /ui/ (/ and /ui lead there),
// everything else to the API.
func TestMount(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "api "+r.URL.Path) })
	srv := httptest.NewServer(console.Mount(api))
	defer srv.Close()
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for path, want := range map[string]string{
		"/ui/": "<title>glb console</title>", "/ui": "<title>glb console</title>", "/": "<title>glb console</title>",
		"/ui/app.js": "import", "/ui/api.js": "/api/v1/events", "/ui/style.css": "box-sizing",
		"/api/v1/pools": "api /api/v1/pools", "/healthz": "api /healthz",
	} {
		resp, body := get(path)
		if resp.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %.80q, want %q", path, resp.StatusCode, body, want)
		}
	}
	resp, _ := get("/ui/app.js")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("app.js served as %q: browsers refuse a module of another type", ct)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	if resp, body := get("/nope"); resp.StatusCode != 200 || body != "api /nope" {
		t.Errorf("/nope: %d %q, want the API's", resp.StatusCode, body)
	}
	if resp, _ := get("/ui/nope.js"); resp.StatusCode != 404 {
		t.Errorf("/ui/nope.js: %d", resp.StatusCode)
	}
}
