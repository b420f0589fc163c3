package apitest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/api/apitest"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
)

// TestDocumentIsValid: kin-openapi's loader and validator accept the
// document (Must fails otherwise).
func TestDocumentIsValid(t *testing.T) {
	t.Parallel()
	doc := apitest.Must(t).Doc()
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}
}

// TestEveryObjectSchemaIsClosed: a schema that names its properties must
// say what else may appear, else an undocumented member would pass.
func TestEveryObjectSchemaIsClosed(t *testing.T) {
	t.Parallel()
	var raw any
	if err := json.Unmarshal(api.OpenAPI(), &raw); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["properties"].(map[string]any); ok {
				if _, ok := v["additionalProperties"]; !ok {
					t.Errorf("%s has properties but no additionalProperties", path)
				}
			}
			for k, e := range v {
				walk(e, path+"/"+k)
			}
		case []any:
			for _, e := range v {
				walk(e, path+"/[]")
			}
		}
	}
	walk(raw, "#")
}

// addField serves the real API with one member added to the object of
// every single-object answer, as a field added to a Go type and not to
// the document would.
func addField(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var doc struct {
			Result map[string]any `json:"result"`
		}
		if json.Unmarshal(body, &doc) == nil && doc.Result != nil {
			doc.Result["colour"] = "blue"
			body, _ = json.Marshal(doc)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

func TestUndocumentedFieldFailsValidation(t *testing.T) {
	t.Parallel()
	store := embeddedtest.Open(t)
	srv := httptest.NewServer(addField(api.New(api.Options{Store: store})))
	t.Cleanup(srv.Close)

	c := apitest.Must(t)
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/networks", strings.NewReader(`{"cidr": "10.0.0.0/8"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %d %s", resp.StatusCode, body)
	}
	err = c.Check(req, resp.StatusCode, resp.Header, body)
	if err == nil {
		t.Fatal("a response with an undocumented member passed validation")
	}
	// The message names the member and where it is.
	for _, want := range []string{"POST /api/v1/networks", "201", `"/result"`, `"colour"`, "unsupported"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %s: %v", want, err)
		}
	}
	// Without the added member the same answer passes.
	var doc struct {
		Result map[string]any `json:"result"`
	}
	_ = json.Unmarshal(body, &doc)
	delete(doc.Result, "colour")
	clean, _ := json.Marshal(doc)
	if err := c.Check(req, resp.StatusCode, resp.Header, clean); err != nil {
		t.Fatalf("the documented answer fails: %v", err)
	}
}

// TestCheckRefusesWhatIsNotDocumented: status, headers, HEAD and 304
// bodies, routes and Allow are held to the document too.
func TestCheckRefusesWhatIsNotDocumented(t *testing.T) {
	t.Parallel()
	c := apitest.Must(t)
	js := http.Header{"Content-Type": {"application/json"}}
	problem := http.Header{"Content-Type": {"application/problem+json"}}
	withETag := http.Header{"Content-Type": {"application/json"}, "Etag": {`"1"`}}
	net := []byte(`{"result":{"id":"n","cidr":"10.0.0.0/8"}}`)
	prob := func(status int) []byte {
		b, _ := json.Marshal(api.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status})
		return b
	}
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               []byte
		want               string // "" passes
	}{
		{"documented", "GET", "/api/v1/networks/n", 200, withETag, net, ""},
		{"no ETag", "GET", "/api/v1/networks/n", 200, js, net, `"ETag" missing`},
		{"undocumented status", "GET", "/api/v1/networks/n", 418, problem, prob(418), "status 418"},
		{"wrong media type", "GET", "/api/v1/networks/n", 200, http.Header{"Content-Type": {"text/html"}, "Etag": {`"1"`}}, net, "text/html"},
		{"wrong type", "GET", "/api/v1/networks/n", 200, withETag, []byte(`{"result":{"id":"n","cidr":8}}`), `"/result/cidr"`},
		{"304 without ETag", "GET", "/api/v1/networks/n", 304, http.Header{}, nil, `"ETag" missing`},
		{"304", "GET", "/api/v1/networks/n", 304, http.Header{"Etag": {`"1"`}}, nil, ""},
		{"304 with a body", "GET", "/api/v1/networks/n", 304, http.Header{"Etag": {`"1"`}}, net, "body"},
		{"HEAD", "HEAD", "/api/v1/networks/n", 200, withETag, nil, ""},
		{"HEAD with a body", "HEAD", "/api/v1/networks/n", 200, withETag, net, "body"},
		{"undocumented route", "GET", "/api/v1/widgets", 200, js, []byte(`{}`), "404"},
		{"unknown route 404", "GET", "/api/v1/widgets", 404, problem, prob(404), ""},
		{"unknown route 401", "GET", "/api/v1/widgets", 401, http.Header{"Content-Type": {"application/problem+json"}, "Www-Authenticate": {"Bearer"}}, prob(401), ""},
		{"401 outside the API", "GET", "/widgets", 401, http.Header{"Content-Type": {"application/problem+json"}, "Www-Authenticate": {"Bearer"}}, prob(401), "404"},
		{"405", "DELETE", "/api/v1/networks", 405, http.Header{"Content-Type": {"application/problem+json"}, "Allow": {"GET, HEAD, POST"}}, prob(405), ""},
		{"405 wrong Allow", "DELETE", "/api/v1/networks", 405, http.Header{"Content-Type": {"application/problem+json"}, "Allow": {"GET, POST"}}, prob(405), "Allow"},
		{"405 without Allow", "DELETE", "/api/v1/networks", 405, problem, prob(405), "Allow"},
		{"wrong method answered 404", "DELETE", "/api/v1/networks", 404, problem, prob(404), "405"},
	} {
		req := httptest.NewRequest(tc.method, "http://127.0.0.1"+tc.path, nil)
		err := c.Check(req, tc.status, tc.header, tc.body)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: passed", tc.name)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: message lacks %q: %v", tc.name, tc.want, err)
		}
	}
}

// TestClientReports: the checking client reports a mismatch on the test
// that made the request, and hands the body on unchanged.
func TestClientReports(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok","extra":1}`))
	}))
	t.Cleanup(srv.Close)
	rec := &recorder{TB: t}
	resp, err := apitest.Must(t).Client(rec, nil).Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(b, []byte(`{"status":"ok","extra":1}`)) {
		t.Errorf("body %s", b)
	}
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "extra") {
		t.Errorf("reported %q", rec.errs)
	}
}

type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, strings.TrimSpace(fmt.Sprintf(format, args...)))
}
