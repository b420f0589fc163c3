package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// rumConfig is a measured_latency load balancer over two pools that
// browsers time: the rum settings come and go through the file as any
// other field.
const rumConfig = `zones:
  - id: example
    name: glb.example.com
    nameservers: [ns1.glb.example.com]
    soa: {rname: hostmaster.example.com}
pools:
  - id: web
    name: web
    origins: [{name: a, address: 192.0.2.1}]
    rum: {probe_url: "https://web.example.net/rum.gif"}
  - id: extra
    name: extra
    origins: [{name: x, address: 198.51.100.1}]
    rum: {probe_url: "https://extra.example.net/rum.gif"}
load_balancers:
  - id: shop
    zone: example
    name: shop.glb.example.com
    default_pools: [web, extra]
    fallback_pool: web
    steering_policy: measured_latency
    rum: {site_keys: [shop-site-key], min_samples: 5}
`

// TestRUM: a measured_latency load balancer's rum settings apply from a
// file and diff clean; glbctl rum prints the table a real glbd built from
// real reports, per network, the figures of its JSON, fastest first and
// marked; a bad --limit is the API's 400 naming limit.
func TestRUM(t *testing.T) {
	t.Parallel()
	n := startNode(t, "--rum-every", "200ms", "--rum-rate", "6000", "--rum-trusted-proxies", "127.0.0.1/32")
	file := writeFile(t, "rum.yaml", rumConfig)
	n.mustCtl(exitOK, "apply", "-f", file)
	n.mustCtl(exitOK, "diff", "-f", file)
	before := n.mustCtl(exitOK, "rum", "shop")
	if !strings.Contains(before, "shop.glb.example.com (shop), steering measured_latency, min_samples 5") {
		t.Errorf("rum before any report:\n%s", before)
	}

	// Network 1 finds web fast, network 2 extra; a third sends too few.
	report := func(client string, web, extra float64) {
		body := fmt.Sprintf(`{"key":"shop-site-key","m":[{"p":"web","ms":%g},{"p":"extra","ms":%g}]}`, web, extra)
		req, _ := http.NewRequest("POST", n.api+"/rum/v1/report", strings.NewReader(body))
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
	eventually(t, 10*time.Second, "the key served", func() (bool, string) {
		resp, err := http.Get(n.api + "/rum/v1/beacon.js?key=shop-site-key")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	for i := range 12 {
		report("203.0.113.7", 20+float64(i), 80+float64(i))
		report("198.18.4.9", 90+float64(i), 30+float64(i))
	}
	for range 3 {
		report("198.18.200.1", 50, 10)
	}

	var v api.RUMView
	eventually(t, 20*time.Second, "a table with the three networks", func() (bool, string) {
		out := n.mustCtl(exitOK, "rum", "shop", "-o", "json")
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("rum -o json: %v\n%s", err, out)
		}
		samples := 0
		for _, g := range v.Table.Networks {
			samples += g.Samples
		}
		return v.Table.NetworksTotal == 3 && samples == 2*24+2*3, out
	})
	fastest := map[string]string{}
	for _, g := range v.Table.Networks {
		fastest[g.Group] = g.Fastest
	}
	if fastest["203.0.113.0/24"] != "web" || fastest["198.18.4.0/24"] != "extra" || fastest["198.18.200.0/24"] != "" {
		t.Errorf("fastest per network %v, want web, extra and none (3 samples of 5)", fastest)
	}

	// The table prints the JSON's figures, row by row.
	out := n.mustCtl(exitOK, "rum", "shop")
	var want []string
	for _, g := range v.Table.Networks {
		for _, p := range g.Pools {
			samples := strconv.Itoa(p.Samples)
			if !p.Counted {
				samples += " (<min)"
			}
			mark := "-" // the table's empty cell
			if p.Pool == g.Fastest {
				mark = "*"
			}
			want = append(want, strings.Join(strings.Fields(fmt.Sprintf("network %s %s %.1f %.1f %s %s", g.Group, p.Name, p.MedianMs, p.P75Ms, samples, mark)), " "))
		}
	}
	parts := strings.SplitN(out, "\n\n", 2)
	if len(parts) != 2 || !strings.Contains(parts[0], "over the last 15m0s") {
		t.Fatalf("rum: no summary, then a table:\n%s", out)
	}
	var got []string
	for i, l := range strings.Split(strings.TrimSpace(parts[1]), "\n") {
		if i == 0 {
			if strings.Join(strings.Fields(l), " ") != "LEVEL GROUP POOL MEDIAN_MS P75_MS SAMPLES FASTEST" {
				t.Fatalf("header %q", l)
			}
			continue
		}
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rum table:\n%s\nwant the JSON's figures:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Network 1's rows: web first, marked fastest.
	var net1 []string
	for _, l := range got {
		if strings.HasPrefix(l, "network 203.0.113.0/24 ") {
			net1 = append(net1, l)
		}
	}
	if len(net1) != 2 || !strings.HasPrefix(net1[0], "network 203.0.113.0/24 web ") || !strings.HasSuffix(net1[0], " 12 *") {
		t.Errorf("network 1's rows %q: want web first, 12 samples, marked", net1)
	}

	// --limit 1: the network with the most samples, and a note.
	out = n.mustCtl(exitOK, "rum", "shop", "--limit", "1")
	if !strings.Contains(out, "1 of 3 client networks shown") || strings.Contains(out, "198.18.200.0/24") {
		t.Errorf("rum --limit 1:\n%s", out)
	}
	code, _, errOut := n.ctl("rum", "shop", "--limit", "5000")
	if code != exitFailed || !strings.Contains(errOut, "limit") {
		t.Errorf("rum --limit 5000: exit %d, stderr %q; want 1 and the API's 400 naming limit", code, errOut)
	}
}

// printRUM lists autonomous systems between countries and networks,
// and says when --limit cut them.
func TestPrintRUMASN(t *testing.T) {
	t.Parallel()
	built := time.Unix(1_800_000_000, 0).UTC()
	v := &api.RUMView{LoadBalancer: "l", Name: "shop", SteeringPolicy: pools.SteeringMeasuredLatency, Table: steering.RUMTable{
		MinSamples: 5, Built: &built, Window: "15m0s",
		Countries: []steering.RUMTableGroup{{Group: "FR", Fastest: "a", Pools: []steering.TraceMeasuredPool{{Pool: "a", Name: "a", MedianMs: 30, Samples: 9, Counted: true}}}},
		ASNs: []steering.RUMTableGroup{{Group: "AS64500", ASN: 64500, Fastest: "b", Pools: []steering.TraceMeasuredPool{
			{Pool: "b", Name: "b", MedianMs: 12.34, P75Ms: 20, Samples: 40, Counted: true}, {Pool: "a", Name: "a", MedianMs: 50, P75Ms: 60, Samples: 3}}}},
		ASNsTotal: 4,
	}}
	var out strings.Builder
	printRUM(&out, v)
	got := out.String()
	for _, want := range []string{"1 of 4 autonomous systems shown", "asn      AS64500  b     12.3", "3 (<min)"} {
		if !strings.Contains(got, want) {
			t.Errorf("printRUM output lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "country") > strings.Index(got, "AS64500") {
		t.Errorf("autonomous systems before countries:\n%s", got)
	}
}
