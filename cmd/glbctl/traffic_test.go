package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
)

// TestTrafficAndRegions: glbctl traffic shows the answers a real glbd
// gave, counted per pool and region (a client without ECS is placed
// nowhere, one sent as the oslo network's subnet in WEU and NO), and each
// filter narrows them as the API does; an unknown filter value is the
// API's 400, naming the values allowed. glbctl regions lists the table
// the counts place clients by.
func TestTrafficAndRegions(t *testing.T) {
	t.Parallel()
	n, _, _ := appliedNode(t)
	start := time.Now()

	// sent counts the answers per pool and region, as the counts should.
	sent := map[string]int{}
	ask := func(extra ...string) string {
		got := n.dig("www.glb.example.com", "A", extra...)
		switch {
		case strings.HasPrefix(got, "NOERROR www.glb.example.com. A 192.0.2."):
			sent["web unknown"]++
		case got == "NOERROR www.glb.example.com. A 198.51.100.1":
			sent["extra WEU"]++
		}
		return got
	}
	eventually(t, 5*time.Second, "www answers from the file", func() (bool, string) {
		got := ask()
		return strings.HasPrefix(got, "NOERROR www.glb.example.com. A 192.0.2."), got
	})
	for i := range 7 {
		ask()
		if i%2 == 0 {
			ask("+subnet=198.51.100.0/24")
		}
	}
	if sent["extra WEU"] != 4 {
		t.Fatalf("the oslo subnet was answered from extra %d times of 4: %v", sent["extra WEU"], sent)
	}
	end := time.Now()

	since, until := start.Add(-time.Minute).UTC().Format(time.RFC3339), end.Add(time.Minute).UTC().Format(time.RFC3339)
	var a api.Analytics
	eventually(t, 40*time.Second, "every node's counts written up to the last query", func() (bool, string) {
		out := n.mustCtl(exitOK, "traffic", "www", "--since", since, "--until", until, "--step", "10s", "--group-by", "pool,region", "-o", "json")
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("traffic -o json: %v\n%s", err, out)
		}
		return a.CompleteUntil.After(end), a.CompleteUntil.String()
	})
	if a.Step != 10 || strings.Join(a.GroupBy, ",") != "pool,region" || a.LoadBalancer != "www" {
		t.Errorf("traffic -o json: step %d, group_by %v, load balancer %q: the flags did not reach the API", a.Step, a.GroupBy, a.LoadBalancer)
	}

	// rows runs traffic and returns its table's rows after the header,
	// without the SHARE column, as "col col ... answers".
	rows := func(args ...string) []string {
		t.Helper()
		out := n.mustCtl(exitOK, append([]string{"traffic", "www", "--since", since, "--until", until}, args...)...)
		parts := strings.SplitN(out, "\n\n", 2)
		if len(parts) != 2 || !strings.HasPrefix(parts[0], "www.glb.example.com (www): ") {
			t.Fatalf("traffic %v: no summary line, then a table:\n%s", args, out)
		}
		var got []string
		for i, l := range strings.Split(strings.TrimSpace(parts[1]), "\n") {
			f := strings.Fields(l)
			if i == 0 {
				if f[len(f)-1] != "SHARE" {
					t.Fatalf("traffic %v: header %q", args, l)
				}
				continue
			}
			got = append(got, strings.Join(f[:len(f)-1], " "))
		}
		return got
	}
	want := func(what string, got []string, rows ...string) {
		t.Helper()
		if strings.Join(got, "; ") != strings.Join(rows, "; ") {
			t.Errorf("%s: rows\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(rows, "\n"))
		}
	}
	web, extra := fmt.Sprint(sent["web unknown"]), fmt.Sprint(sent["extra WEU"])
	// Other answers (REFUSED before the file was served) may count under
	// no pool: only the two pools are compared.
	var byPool []string
	for _, r := range rows("--group-by", "pool,region") {
		if strings.HasPrefix(r, "web ") || strings.HasPrefix(r, "extra ") {
			byPool = append(byPool, r)
		}
	}
	want("by pool and region", byPool, "web unknown "+web, "extra WEU "+extra)
	want("--region WEU", rows("--region", "WEU"), "extra "+extra)
	want("--country NO, by region and country", rows("--country", "NO", "--group-by", "region,country"), "WEU NO "+extra)
	want("--pool web, no groups", rows("--pool", "web", "--group-by", ""), web)
	want("--origin x", rows("--origin", "x", "--group-by", "origin"), "x "+extra)
	want("--rcode NXDOMAIN", rows("--rcode", "NXDOMAIN", "--pool", "web"))
	out := n.mustCtl(exitOK, "traffic", "www", "--since", since, "--until", until, "--step", "10s", "--group-by", "region", "--region", "WEU", "--by-step")
	var steps int
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[1] == "WEU" {
			if _, err := time.Parse(time.RFC3339, f[0]); err != nil {
				t.Errorf("--by-step row %q: %v", l, err)
			}
			var k int
			fmt.Sscan(f[2], &k)
			steps += k
		}
	}
	if steps != sent["extra WEU"] {
		t.Errorf("--by-step: WEU's steps add up to %d, want %d:\n%s", steps, sent["extra WEU"], out)
	}

	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--region", "MARS"}, exitFailed, []string{"400 Bad Request", `region: "MARS": one of WNAM`, "WEU"}},
		{[]string{"--country", "UK"}, exitFailed, []string{"400", `country: "UK"`}},
		{[]string{"--pool", "nosuch"}, exitFailed, []string{"400", `pool: "nosuch": one of`, `"web"`}},
		{[]string{"--group-by", "pool,planet"}, exitFailed, []string{"400", `group_by: "planet"`}},
		{[]string{"--rcode", "noerror"}, exitFailed, []string{"400", "rcode"}},
		{[]string{"--step", "7s"}, exitFailed, []string{"400", "step: must be a multiple of 10s"}},
		{[]string{"--since", "yesterday"}, exitFailed, []string{"400", "since: must be an RFC 3339 time"}},
		{[]string{"--planet", "mars"}, exitUsage, []string{"-planet"}},
		{[]string{"-o", "xml"}, exitUsage, []string{"-o"}},
	} {
		code, _, errOut := n.ctl(append([]string{"traffic", "www"}, c.args...)...)
		if code != c.code {
			t.Errorf("traffic www %v: exit %d, want %d\n%s", c.args, code, c.code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("traffic www %v: stderr lacks %q:\n%s", c.args, w, errOut)
			}
		}
	}
	if code, _, errOut := n.ctl("traffic", "nosuch"); code != exitFailed || !strings.Contains(errOut, `404 Not Found: no load balancer with id or name "nosuch"`) {
		t.Errorf("traffic nosuch: exit %d\n%s", code, errOut)
	}
	n.mustCtl(exitUsage, "traffic")
	// By name too, as the API finds it.
	if out := n.mustCtl(exitOK, "traffic", "www.glb.example.com", "--since", since, "--until", until, "--region", "WEU"); !strings.Contains(out, "www.glb.example.com (www): "+extra+" answers") {
		t.Errorf("traffic by name:\n%s", out)
	}

	out = n.mustCtl(exitOK, "regions")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 14 || !strings.HasPrefix(lines[0], "CODE ") {
		t.Fatalf("regions: %d lines, want a header and 13:\n%s", len(lines), out)
	}
	var weu string
	for _, l := range lines {
		if strings.HasPrefix(l, "WEU ") {
			weu = l
		}
	}
	if !strings.Contains(weu, "Western Europe") || !strings.Contains(weu, " NO ") {
		t.Errorf("regions: WEU's row %q lacks its name or Norway", weu)
	}
	var rs []api.Region
	if err := json.Unmarshal([]byte(n.mustCtl(exitOK, "regions", "-o", "json")), &rs); err != nil || len(rs) != 13 || rs[0].Code == "" {
		t.Errorf("regions -o json: %d regions, %v", len(rs), err)
	}
	n.mustCtl(exitUsage, "regions", "extra")
}
