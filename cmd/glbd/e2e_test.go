package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// configure creates over REST a zone, a pool "web" of three origins, a pool
// "extra" of one, and www.glb.example.com over "web" answering every
// eligible origin.
func configure(t *testing.T, g *glbd) (web, extra, lb map[string]any) {
	t.Helper()
	zone := g.must("POST", "/api/v1/zones", map[string]any{
		"name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"},
		"records": []map[string]any{{"name": "ns1.glb.example.com", "type": "A", "content": "127.0.0.1"}},
	})
	web = g.must("POST", "/api/v1/pools", map[string]any{"name": "web", "origins": []map[string]any{
		{"name": "a", "address": "192.0.2.1"}, {"name": "b", "address": "192.0.2.2"}, {"name": "c", "address": "192.0.2.3"},
	}})
	extra = g.must("POST", "/api/v1/pools", map[string]any{"name": "extra", "origins": []map[string]any{
		{"name": "x", "address": "198.51.100.1"},
	}})
	lb = g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone["id"], "name": "www.glb.example.com",
		"default_pools": []any{web["id"]}, "fallback_pool": web["id"], "answers": 0,
	})
	return web, extra, lb
}

// answersWithin asserts that www's A answer becomes want within 1 s of the
// API's 2xx, and returns how long it took.
func answersWithin(t *testing.T, g *glbd, what string, want ...string) time.Duration {
	t.Helper()
	took := eventually(t, time.Second, what, func() (bool, string) {
		got, status := dig(t, g.dns, "www.glb.example.com", "A")
		return status == "NOERROR" && slices.Equal(got, want), status + " " + strings.Join(got, ",")
	})
	t.Logf("%s: DNS answer changed %v after the API's 2xx", what, took.Round(time.Millisecond))
	return took
}

func testPropagation(t *testing.T, g *glbd) {
	web, extra, lb := configure(t, g)
	answersWithin(t, g, "create", "192.0.2.1", "192.0.2.2", "192.0.2.3")

	path := "/api/v1/pools/" + web["id"].(string)
	g.must("PATCH", path, map[string]any{"origins": []map[string]any{
		{"name": "a", "address": "192.0.2.1", "weight": 0}, {"name": "b", "address": "192.0.2.2"}, {"name": "c", "address": "192.0.2.3"},
	}})
	answersWithin(t, g, "weight change", "192.0.2.2", "192.0.2.3")

	g.must("PATCH", path, map[string]any{"origins": []map[string]any{
		{"name": "a", "address": "192.0.2.1", "weight": 0}, {"name": "b", "address": "192.0.2.2"}, {"name": "c", "address": "192.0.2.3", "enabled": false},
	}})
	answersWithin(t, g, "origin disabled", "192.0.2.2")

	g.must("PATCH", "/api/v1/load_balancers/"+lb["id"].(string), map[string]any{"default_pools": []any{extra["id"], web["id"]}})
	answersWithin(t, g, "pool added to default_pools", "198.51.100.1")
}

func TestEndToEndEmbedded(t *testing.T) {
	t.Parallel()
	testPropagation(t, startGlbd(t, ""))
}

func TestEndToEndPostgres(t *testing.T) {
	t.Parallel()
	testPropagation(t, startGlbd(t, "", "--database-url", freshDatabase(t)))
}

// TestEndToEndTwoNodesShareChanges: a change made through one node's API
// reaches another node's DNS within a second (NOTIFY).
func TestEndToEndTwoNodesShareChanges(t *testing.T) {
	t.Parallel()
	a, b := startTwoNodes(t)
	configure(t, a)
	answersWithin(t, b, "change made on node a, seen on node b", "192.0.2.1", "192.0.2.2", "192.0.2.3")
}

// proxy forwards TCP to target until closed; closing it cuts every
// connection, as a database going down does.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestStaticStability: with PostgreSQL gone after start, DNS keeps
// answering and the API answers 503 problem+json; a node started with the
// store unreachable serves DNS from the last good snapshot in its data
// directory.
func TestStaticStability(t *testing.T) {
	t.Parallel()
	url := freshDatabase(t)
	u, _ := http.NewRequest("GET", url, nil) // parse host:port of the URL
	p := newProxy(t, u.URL.Host)
	proxied := strings.Replace(url, u.URL.Host, p.ln.Addr().String(), 1)
	dataDir := t.TempDir()
	g := startGlbd(t, dataDir, "--database-url", proxied)
	configure(t, g)
	answersWithin(t, g, "configured", "192.0.2.1", "192.0.2.2", "192.0.2.3")

	p.close()
	var problem map[string]any
	eventually(t, 10*time.Second, "API answers 503 with the store down", func() (bool, string) {
		req, _ := http.NewRequest("GET", g.api+"/api/v1/pools", nil)
		resp, err := g.http.Do(req)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 503 && resp.Header.Get("Content-Type") == "application/problem+json",
			resp.Status + " " + resp.Header.Get("Content-Type")
	})
	_ = problem
	for range 5 {
		if got, status := dig(t, g.dns, "www.glb.example.com", "A"); status != "NOERROR" || len(got) != 3 {
			t.Fatalf("store down: DNS answered %s %v, want the three origins", status, got)
		}
	}
	g.stop()

	g2 := startGlbd(t, dataDir, "--database-url", proxied)
	if got, status := dig(t, g2.dns, "www.glb.example.com", "A"); status != "NOERROR" || len(got) != 3 {
		t.Fatalf("restart with the store unreachable: DNS answered %s %v, want the last good answer", status, got)
	}
	if status := g2.call("GET", "/readyz", nil, nil); status != 200 {
		t.Errorf("/readyz = %d with a last good snapshot loaded, want 200", status)
	}
}

// TestExplainThroughGlbd: the explain endpoint runs the served snapshot's
// decision for a client located by an operator network.
func TestExplainThroughGlbd(t *testing.T) {
	g := startParallel(t)
	web, _, lb := configure(t, g)
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "198.51.100.0/24", "zone": "zone-1", "region": "WEU", "country": "FR"})
	answersWithin(t, g, "configured", "192.0.2.1", "192.0.2.2", "192.0.2.3")
	var out struct {
		Result struct {
			LocatedBy string `json:"located_by"`
			Decision  struct {
				Client struct {
					Zone    string `json:"zone"`
					Region  string `json:"region"`
					Country string `json:"country"`
					Prefix  int    `json:"prefix"`
				} `json:"client"`
				Pool struct {
					ID string `json:"id"`
				} `json:"pool"`
				Records []struct {
					Value string `json:"value"`
				} `json:"records"`
			} `json:"decision"`
		} `json:"result"`
	}
	// Explain reads the snapshot, which follows the write; the deadlines
	// are a loaded machine's.
	eventually(t, 10*time.Second, "explain sees the network", func() (bool, string) {
		status := g.call("GET", "/api/v1/load_balancers/"+lb["id"].(string)+"/explain?client=198.51.100.7", nil, &out)
		d := out.Result.Decision
		return status == 200 && d.Client.Zone == "zone-1", fmt.Sprintf("%d %+v", status, d.Client)
	})
	d := out.Result.Decision
	if d.Client.Region != "WEU" || d.Client.Country != "FR" || d.Client.Prefix != 24 || out.Result.LocatedBy != "198.51.100.7/32" {
		t.Errorf("client %+v located by %s", d.Client, out.Result.LocatedBy)
	}
	if d.Pool.ID != web["id"] || len(d.Records) != 3 {
		t.Errorf("decision pool %s records %v, want pool web with three records", d.Pool.ID, d.Records)
	}
	// An ECS subnet with source prefix 0 is the client opting out, as on
	// the DNS path: the resolver's address locates it still, even where
	// the load balancer trusts ECS.
	g.must("PATCH", "/api/v1/load_balancers/"+lb["id"].(string), map[string]any{"location_strategy": map[string]any{"prefer_ecs": "always"}})
	eventually(t, 10*time.Second, "explain trusts ECS", func() (bool, string) {
		status := g.call("GET", "/api/v1/load_balancers/"+lb["id"].(string)+"/explain?client=198.51.100.7&ecs=203.0.113.0/24", nil, &out)
		return status == 200 && out.Result.LocatedBy == "203.0.113.0/24", fmt.Sprintf("%d located by %s", status, out.Result.LocatedBy)
	})
	status := g.call("GET", "/api/v1/load_balancers/"+lb["id"].(string)+"/explain?client=198.51.100.7&ecs=203.0.113.0/0", nil, &out)
	if d := out.Result.Decision; status != 200 || out.Result.LocatedBy != "198.51.100.7/32" || d.Client.Zone != "zone-1" {
		t.Errorf("ECS /0: %d, client %+v located by %s; want the resolver's address", status, d.Client, out.Result.LocatedBy)
	}
}
