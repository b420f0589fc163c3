package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// TestFileErrorsNamePathAndLine: the file is as strict as the API, and
// each problem names the object's path and the line it is on, in YAML and
// in JSON (tab-indented, as json.MarshalIndent writes it).
func TestFileErrorsNamePathAndLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file string
		want       []string
	}{
		{"unknown field", "pools:\n  - id: web\n    name: web\n    origins:\n      - name: a\n        address: 192.0.2.1\n        colour: red\n",
			[]string{"f.yaml:7: pools[0].origins[0].colour: unknown field"}},
		{"wrong type", "monitors:\n  - id: m\n    interval: \"10\"\n",
			[]string{`f.yaml:3: monitors[0].interval: must be an integer`}},
		{"unknown kind", "zones: []\npool:\n  - id: x\n",
			[]string{"f.yaml:2: pool: unknown field; want one of zones, monitors, networks, pools, load_balancers"}},
		{"no id", "networks:\n  - cidr: 192.0.2.0/24\n",
			[]string{"f.yaml:2: networks[0].id: required"}},
		{"duplicate id", "pools:\n  - {id: web, name: a}\n  - {id: web, name: b}\n",
			[]string{`f.yaml:3: pools[1].id: "web" is also the id of pools[0]`}},
		{"not a list", "zones: {id: x}\n", []string{"f.yaml:1: zones: must be a list of objects"}},
		{"not an object", "zones:\n  - example\n", []string{"f.yaml:2: zones[0]: must be an object"}},
		{"every problem at once", "pools:\n  - id: a\n    colour: red\n  - id: b\n    minimum_origins: one\n",
			[]string{"f.yaml:3: pools[0].colour: unknown field", "f.yaml:5: pools[1].minimum_origins: must be an integer"}},
		{"JSON", "{\n\t\"pools\": [\n\t\t{\n\t\t\t\"id\": \"web\",\n\t\t\t\"origins\": [{\"name\": \"a\", \"weight\": \"heavy\"}]\n\t\t}\n\t]\n}\n",
			[]string{"f.yaml:5: pools[0].origins[0].weight: must be a number"}},
		{"key in a map", "load_balancers:\n  - id: www\n    region_pools:\n      WEU: [a]\n      ENAM: a\n",
			[]string{"f.yaml:5: load_balancers[0].region_pools.ENAM: must be an array"}},
		{"https of a load balancer", "load_balancers:\n  - id: www\n    https:\n      alpn: [h2, h3]\n      prot: 443\n      port: \"443\"\n",
			[]string{"f.yaml:5: load_balancers[0].https.prot: unknown field", "f.yaml:6: load_balancers[0].https.port: must be an integer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseConfigFile("f.yaml", []byte(c.file))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if n := strings.Count(err.Error(), "\n  f.yaml:"); n != len(c.want) {
				t.Errorf("%d problems reported, want %d:\n%v", n, len(c.want), err)
			}
		})
	}
}

func TestFileSyntaxAndEmpty(t *testing.T) {
	t.Parallel()
	for name, file := range map[string]string{
		"empty":         "  \n",
		"syntax":        "zones: [\n",
		"duplicate key": "zones: []\nzones: []\n",
		"not a mapping": "- a\n",
	} {
		if _, err := parseConfigFile("f.yaml", []byte(file)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := parseConfigFile("f.yaml", []byte("{}")); err != nil {
		t.Errorf("an explicit empty configuration: %v", err)
	}
}

// TestYAML12: country and region codes stay strings; YAML 1.1 would read
// NO (Norway) as false.
func TestYAML12(t *testing.T) {
	t.Parallel()
	f, err := parseConfigFile("f.yaml", []byte("networks:\n  - {id: n, cidr: 192.0.2.0/24, country: NO}\nload_balancers:\n  - id: l\n    country_pools:\n      NO: [p]\n      ON: [p]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := f.entries[0].obj.(*pools.Network).Country; c != "NO" {
		t.Errorf("country %q", c)
	}
	if cp := f.entries[1].obj.(*pools.LoadBalancer).CountryPools; len(cp["NO"]) != 1 || len(cp["ON"]) != 1 {
		t.Errorf("country_pools %v", cp)
	}
}

// TestDefaultsAndCanonicalFormAreNotDifferences: a file that leaves out
// defaults, spells a name in capitals with a trailing dot, or writes []
// where the store keeps nothing, equals what the store returns.
func TestDefaultsAndCanonicalFormAreNotDifferences(t *testing.T) {
	t.Parallel()
	f, err := parseConfigFile("f.yaml", []byte("zones:\n  - {id: z, name: GLB.Example.COM., nameservers: [ns1.example.com], records: []}\n"+
		"pools:\n  - {id: p, name: p, check_regions: [], origins: [{name: a, address: 192.0.2.1}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	stored := map[pools.Kind]string{
		pools.KindZone: `{"id":"z","revision":4,"created_on":"2026-01-01T00:00:00Z","modified_on":"2026-01-02T00:00:00Z","name":"glb.example.com",` +
			`"nameservers":["ns1.example.com"],"soa":{"mname":"","rname":"","refresh":14400,"retry":3600,"expire":604800,"minimum":300},"ttl":300,"records":[],"serial":77}`,
		pools.KindPool: `{"id":"p","revision":2,"name":"p","description":"","enabled":true,"minimum_origins":1,"monitor":"","check_regions":null,` +
			`"latitude":null,"longitude":null,"origin_steering":{"policy":"random"},"origins":[{"name":"a","address":"192.0.2.1","enabled":true,"weight":1,"zone":""}]}`,
	}
	for _, e := range f.entries {
		cur, fes, err := pools.Decode(e.kind, mustDoc(t, stored[e.kind]))
		if err != nil || len(fes) > 0 {
			t.Fatal(err, fes)
		}
		d, err := diffObjects(cur, e.obj)
		if err != nil || len(d) > 0 {
			t.Errorf("%s: %v %v", e.key(), d, err)
		}
	}
}

func mustDoc(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
