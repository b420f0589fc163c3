package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"

	"github.com/glb-dns/glb/api"
)

// writeASNDB writes a GeoLite2-ASN database of the networks (CIDR → AS
// number) to path, renaming the complete file over the old one.
func writeASNDB(t *testing.T, path string, nets map[string]uint32) {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoLite2-ASN", RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, asn := range nets {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		rec := mmdbtype.Map{"autonomous_system_number": mmdbtype.Uint32(asn),
			"autonomous_system_organization": mmdbtype.String(fmt.Sprintf("Example AS%d", asn))}
		if err := tree.Insert(n, rec); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".asn-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		t.Fatal(err)
	}
}

// postRUM posts n reports of the client (named in X-Forwarded-For, as a
// reverse proxy in front of glbd names it), each timing the pools as ms.
func postRUM(t *testing.T, g *glbd, key, client string, n int, ms map[string]float64) {
	t.Helper()
	var m []string
	for pool, v := range ms {
		m = append(m, fmt.Sprintf(`{"p":%q,"ms":%g}`, pool, v))
	}
	body := fmt.Sprintf(`{"key":%q,"m":[%s]}`, key, strings.Join(m, ","))
	for range n {
		req, _ := http.NewRequest("POST", g.api+"/rum/v1/report", strings.NewReader(body))
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("report from %s: %d", client, resp.StatusCode)
		}
	}
}

// TestRUMASNLevel: with --geoip-asn-db, measured_latency ranks a client
// network without min_samples of its own by its autonomous system's
// figures (the networks of the AS merged), while a network of the same
// AS with its own figures keeps them; dig answers so, explain says level
// asn with the AS and its counts, the rum view lists the AS; after
// SIGHUP with a new ASN database that moves the thin network to an AS
// nothing measured, health-check RTT (here: the configured order)
// decides for it. A City database given as the ASN database stops glbd
// at start, naming the field.
func TestRUMASNLevel(t *testing.T) {
	asnDB := filepath.Join(t.TempDir(), "asn.mmdb")
	writeASNDB(t, asnDB, map[string]uint32{"127.0.0.0/16": 64500, "127.1.0.0/16": 64501})
	g := startParallel(t, "--geoip-asn-db", asnDB, "--rum-every", "200ms", "--rum-rate", "6000",
		"--rum-trusted-proxies", "127.0.0.1/32")
	zone := zoneFor(t, g)
	pool := func(name, ip string) string {
		return g.must("POST", "/api/v1/pools", map[string]any{"name": name, "origins": []map[string]any{{"name": name, "address": ip}},
			"rum": map[string]any{"probe_url": "https://" + name + ".example.net/rum.gif"}})["id"].(string)
	}
	a, b := pool("a", "192.0.2.1"), pool("b", "192.0.2.2")
	lb := g.must("POST", "/api/v1/load_balancers", map[string]any{"zone": zone, "name": "www.glb.example.com",
		"steering_policy": "measured_latency", "default_pools": []string{a, b}, "fallback_pool": a,
		"rum": map[string]any{"site_keys": []string{"shop-site-key"}, "min_samples": 3}})["id"].(string)

	eventually(t, 10*time.Second, "the site key served", func() (bool, string) {
		resp, err := http.Get(g.api + "/rum/v1/beacon.js?key=shop-site-key")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	// AS64500: 127.0.1.0/24 finds a fastest (3 reports, its own figures),
	// 127.0.3.0/24 b (6 reports), 127.0.2.0/24 reports once (thin). The
	// AS merged: b fastest, 10 samples a pool.
	postRUM(t, g, "shop-site-key", "127.0.1.9", 3, map[string]float64{a: 10, b: 200})
	postRUM(t, g, "shop-site-key", "127.0.3.9", 6, map[string]float64{a: 200, b: 10})
	postRUM(t, g, "shop-site-key", "127.0.2.9", 1, map[string]float64{a: 200, b: 10})
	answer := func(subnet string) string {
		got, status := dig(t, g.dns, "www.glb.example.com", "A", "+subnet="+subnet)
		return status + " " + strings.Join(got, ",")
	}
	eventually(t, 20*time.Second, "the thin network of AS64500 gets the AS's fastest pool", func() (bool, string) {
		got := answer("127.0.2.0/24")
		return got == "NOERROR 192.0.2.2", got
	})
	for subnet, want := range map[string]string{"127.0.1.0/24": "NOERROR 192.0.2.1", "127.0.3.0/24": "NOERROR 192.0.2.2",
		"127.0.9.0/24": "NOERROR 192.0.2.2", "127.1.5.0/24": "NOERROR 192.0.2.1"} {
		if got := answer(subnet); got != want {
			t.Errorf("%s: %s, want %s", subnet, got, want)
		}
	}

	e := explainECS(t, g, lb, "127.0.2.0/24")
	m := e.Decision.Measured
	if m == nil || m.Level != "asn" || m.Group != "AS64500" || m.ASN != 64500 || e.Decision.Client.ASN != 64500 || len(m.Pools) != 2 {
		b, _ := json.Marshal(e.Decision)
		t.Fatalf("explain of the thin network: %s", b)
	}
	for _, p := range m.Pools {
		if p.Samples != 10 || !p.Counted {
			t.Errorf("explain: pool %s has %d samples at AS64500 (counted %t), want 10", p.Name, p.Samples, p.Counted)
		}
	}
	if e := explainECS(t, g, lb, "127.0.1.0/24"); e.Decision.Measured.Level != "network" || e.Decision.Measured.Group != "127.0.1.0/24" {
		t.Errorf("explain of the measured network: level %s group %s", e.Decision.Measured.Level, e.Decision.Measured.Group)
	}
	if e := explainECS(t, g, lb, "127.1.5.0/24"); e.Decision.Measured.Level != "rtt" || e.Decision.Client.ASN != 64501 {
		t.Errorf("explain in AS64501: level %s client AS %d", e.Decision.Measured.Level, e.Decision.Client.ASN)
	}

	var view struct{ Result api.RUMView }
	g.call("GET", "/api/v1/load_balancers/"+lb+"/rum", nil, &view)
	if as := view.Result.Table.ASNs; len(as) != 1 || as[0].Group != "AS64500" || as[0].ASN != 64500 || as[0].Fastest != b || as[0].Samples != 20 {
		t.Errorf("rum view asns %+v", as)
	}

	// A new ASN database, read on SIGHUP: 127.0.2.0/24 is now in an AS
	// with only its own (thin) figures.
	writeASNDB(t, asnDB, map[string]uint32{"127.0.0.0/16": 64500, "127.0.2.0/24": 64502, "127.1.0.0/16": 64501})
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the thin network, moved to AS64502, falls to the configured order", func() (bool, string) {
		got := answer("127.0.2.0/24")
		return got == "NOERROR 192.0.2.1", got
	})
	if e := explainECS(t, g, lb, "127.0.2.0/24"); e.Decision.Measured.Level != "rtt" || e.Decision.Client.ASN != 64502 {
		t.Errorf("after the reload: level %s client AS %d", e.Decision.Measured.Level, e.Decision.Client.ASN)
	}
	if got := answer("127.0.9.0/24"); got != "NOERROR 192.0.2.2" {
		t.Errorf("127.0.9.0/24, still in AS64500: %s", got)
	}
}

// TestASNDatabaseRefused: a City database given as --geoip-asn-db stops
// glbd at start with a message naming the field it lacks.
func TestASNDatabaseRefused(t *testing.T) {
	t.Parallel()
	// Bounded: a glbd that took the file would serve until killed.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, glbdBin, "serve", "--dns-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--geoip-asn-db", writeCountryDB(t)).CombinedOutput()
	if ctx.Err() != nil || err == nil || !strings.Contains(string(out), "autonomous_system_number") || !strings.Contains(string(out), "geoip") {
		t.Errorf("glbd with a Country database as ASN database: %v\n%s", err, out)
	}
}
