package outbound

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/tabledns"
)

// counting is a real HTTP server on addr that counts what reaches it:
// connections as well as requests, so that "no request sent" is seen at
// the socket.
type counting struct {
	*httptest.Server
	conns, reqs atomic.Int64
}

func newCounting(t *testing.T, addr string, h http.HandlerFunc) *counting {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{}
	c.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.reqs.Add(1)
		h(w, r)
	}))
	c.Server.Listener.Close()
	c.Server.Listener = ln
	c.Server.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	c.Server.Start()
	t.Cleanup(c.Close)
	return c
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

// TestClientRefusesAtConnect: a loopback server is not connected to
// under the default policy, and is once allowed.
func TestClientRefusesAtConnect(t *testing.T) {
	t.Parallel()
	srv := newCounting(t, "127.0.0.1:0", ok)
	refused := (&Policy{}).Client(10*time.Second, nil)
	_, err := refused.Get(srv.URL)
	if re := Refusal(err); re == nil || re.Rule != "loopback 127.0.0.0/8" {
		t.Fatalf("GET %s: %v, want refused as loopback", srv.URL, err)
	}
	if n := srv.conns.Load(); n != 0 {
		t.Fatalf("the refused server saw %d connections", n)
	}
	p, err := New([]string{"127.0.0.1/32"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Client(10*time.Second, nil).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || srv.reqs.Load() != 1 {
		t.Fatalf("allowed: %s, %d requests", resp.Status, srv.reqs.Load())
	}
}

// TestClientFollowsNoRedirect: an allowed server's redirect to another
// (here also allowed) is the answer, not a second request.
func TestClientFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	target := newCounting(t, "127.0.0.1:0", ok)
	redirect := newCounting(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/x", http.StatusFound)
	})
	p, _ := New([]string{"127.0.0.1"}, nil)
	resp, err := p.Client(10*time.Second, nil).Post(redirect.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || target.conns.Load() != 0 {
		t.Fatalf("got %s; the redirect target saw %d connections", resp.Status, target.conns.Load())
	}
}

// TestRebindingRefusedAtConnect: a name that resolves to an allowed
// address when its URL is checked and to a refused one at the request is
// refused at the request, on the address connected to; the refused
// server sees no connection.
func TestRebindingRefusedAtConnect(t *testing.T) {
	t.Parallel()
	good := newCounting(t, "127.0.0.2:0", ok)
	bad := newCounting(t, "127.0.0.3:0", ok)
	_, port, _ := net.SplitHostPort(good.Listener.Addr().String())
	_, badPort, _ := net.SplitHostPort(bad.Listener.Addr().String())
	ns := tabledns.Start(t)
	res := Resolver(ns.Addr)
	p, err := New([]string{"127.0.0.2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns.Set("hooks.rebind.test", "127.0.0.2")
	url := "http://hooks.rebind.test:" + port + "/in"
	if err := p.CheckURL(ctx, res, url); err != nil {
		t.Fatalf("when written: %v", err)
	}
	client := p.Client(10*time.Second, res)
	resp, err := client.Post(url, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if good.reqs.Load() != 1 {
		t.Fatalf("the allowed receiver saw %d requests", good.reqs.Load())
	}
	// Now the name leads to the refused address (same port numbering
	// as the refused server's).
	ns.Set("hooks.rebind.test", "127.0.0.3")
	badURL := "http://hooks.rebind.test:" + badPort + "/in"
	if err := p.CheckURL(ctx, res, badURL); Refusal(err) == nil {
		t.Fatalf("checked now: %v, want refused", err)
	}
	_, err = p.Client(10*time.Second, res).Post(badURL, "application/json", strings.NewReader("{}"))
	re := Refusal(err)
	if re == nil || re.Addr.String() != "127.0.0.3" || re.Host != "hooks.rebind.test" {
		t.Fatalf("after rebinding: %v, want refused at 127.0.0.3", err)
	}
	if n := bad.conns.Load(); n != 0 {
		t.Fatalf("the refused server saw %d connections", n)
	}
	if ns.Asked("hooks.rebind.test") < 3 {
		t.Fatalf("the resolver was asked %d times: the test's DNS server was not the one used", ns.Asked("hooks.rebind.test"))
	}
}

// TestCheckURL: an address written in the URL is checked as such; a name
// that does not resolve is refused (it cannot be checked); a name allowed
// by name passes whatever it resolves to.
func TestCheckURL(t *testing.T) {
	t.Parallel()
	ns := tabledns.Start(t)
	res := Resolver(ns.Addr)
	ns.Set("meta.test", "169.254.169.254")
	ns.Set("ula.test", "2001:db8::1", "fd00::5")
	ns.Set("hooks.corp.test", "10.1.2.3")
	p, _ := New([]string{"hooks.corp.test"}, nil)
	ctx := context.Background()
	for _, c := range []struct{ url, want string }{
		{"http://[fd00:ec2::254]/latest", "link-local fd00:ec2::254/128"},
		{"http://169.254.169.254/latest", "link-local 169.254.0.0/16"},
		{"https://meta.test/x", "link-local 169.254.0.0/16"},
		{"https://ula.test/x", "private fc00::/7"},
		{"https://missing.test/x", "does not resolve"},
		{"https://hooks.corp.test/x", ""},
		{"https://192.0.2.10/x", ""},
	} {
		err := p.CheckURL(ctx, res, c.url)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.url, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.url, err, c.want)
		}
	}
}
