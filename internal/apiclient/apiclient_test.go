package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSend: each request carries the headers its fields ask for, and the
// server's answer comes back whole, or as an *Error naming the status
// and keeping the body.
func TestSend(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen", strings.Join([]string{r.Method, r.URL.Path, r.Header.Get("Accept"),
			r.Header.Get("Content-Type"), r.Header.Get("Authorization"), r.Header.Get("If-Match"), string(body)}, "|"))
		if r.URL.Path == "/refused" {
			w.WriteHeader(http.StatusPreconditionFailed)
			io.WriteString(w, `{"detail":"stale"}`+"\n")
			return
		}
		io.WriteString(w, "0123456789")
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		name, token string
		r           Request
		seen, body  string
	}{
		{"bare GET", "", Request{Method: "GET", Path: "/a"}, "GET|/a|application/json||||", "0123456789"},
		{"token", "s3cret", Request{Method: "GET", Path: "/a"}, "GET|/a|application/json||Bearer s3cret||", "0123456789"},
		{"JSON body", "", Request{Method: "POST", Path: "/a", Body: []byte(`{}`)}, "POST|/a|application/json|application/json|||{}", "0123456789"},
		{"merge patch", "", Request{Method: "PATCH", Path: "/a", Body: []byte(`{}`), ContentType: "application/merge-patch+json", IfMatch: `"3"`},
			`PATCH|/a|application/json|application/merge-patch+json||"3"|{}`, "0123456789"},
		{"limit", "", Request{Method: "GET", Path: "/a", Limit: 4}, "GET|/a|application/json||||", "0123"},
	} {
		a, err := New(srv.URL+"/", c.token).Send(context.Background(), c.r)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if seen := a.Header.Get("X-Seen"); seen != c.seen || string(a.Body) != c.body || a.Status != http.StatusOK {
			t.Errorf("%s: server saw %q, want %q; answer %d %q, want 200 %q", c.name, seen, c.seen, a.Status, a.Body, c.body)
		}
	}
	_, err := New(srv.URL, "").Send(context.Background(), Request{Method: "DELETE", Path: "/refused"})
	var ae *Error
	if !errors.As(err, &ae) || ae.Status != http.StatusPreconditionFailed || string(ae.Body) != `{"detail":"stale"}`+"\n" {
		t.Fatalf("refusal: %#v", err)
	}
	if want := `DELETE /refused: 412 Precondition Failed: {"detail":"stale"}`; err.Error() != want {
		t.Errorf("refusal reads %q, want %q", err, want)
	}
}

// TestList: every page is read, in order, at the page size asked for,
// and no page after the last.
func TestList(t *testing.T) {
	t.Parallel()
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.RequestURI())
		pages := map[string]string{"1": `["a","b"]`, "2": `["c"]`}
		fmt.Fprintf(w, `{"result":%s,"result_info":{"total_pages":2}}`, pages[r.URL.Query().Get("page")])
	}))
	t.Cleanup(srv.Close)
	got, err := List[string](context.Background(), New(srv.URL, ""), "/things", 2, 0)
	if err != nil || strings.Join(got, ",") != "a,b,c" {
		t.Errorf("List: %v %v, want [a b c]", got, err)
	}
	if want := "/things?per_page=2&page=1 /things?per_page=2&page=2"; strings.Join(asked, " ") != want {
		t.Errorf("asked for %s, want %s", strings.Join(asked, " "), want)
	}
}
