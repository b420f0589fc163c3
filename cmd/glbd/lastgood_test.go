package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// TestLastGoodFileIsTheConfigAsJSON: the file holds exactly what
// json.Marshal makes of the configuration, write after write, whatever
// the encoder kept from the writes before (a pool changed, one deleted,
// one added, a load balancer toggled, no networks at all).
func TestLastGoodFileIsTheConfigAsJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	enc := &configEncoder{}
	check := func(what string, cfg *pools.Config) {
		t.Helper()
		if err := saveLastGood(dir, cfg, enc); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, lastGoodFile))
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the file differs from json.Marshal:\n got %.400s\nwant %.400s", what, got, want)
		}
	}
	cfg := estate(20)
	cfg.Networks = nil
	check("first write", cfg)

	next := *cfg
	next.Revision++
	next.Pools = slices.Clone(cfg.Pools)
	next.Pools[3].Origins = slices.Clone(next.Pools[3].Origins)
	next.Pools[3].Origins[0].Weight = 0.25
	next.Pools[3].Revision++
	next.Pools[3].ModifiedOn = time.Unix(1e9, 0).UTC()
	next.Pools = slices.Delete(next.Pools, 7, 8)
	extra := next.Pools[0]
	extra.ID, extra.Name = "extra", "extra pool"
	next.Pools = append(next.Pools, extra)
	next.LoadBalancers = slices.Clone(cfg.LoadBalancers)
	next.LoadBalancers[2].Enabled = false
	next.LoadBalancers[2].Revision++
	next.Networks = []pools.Network{{Meta: pools.Meta{ID: "n1"}, CIDR: "10.0.0.0/8", Region: "WEU"}}
	check("after a change", &next)
	if len(enc.pools) != len(next.Pools) {
		t.Errorf("the encoder keeps %d pools, the configuration has %d: it must not keep deleted ones", len(enc.pools), len(next.Pools))
	}
}

// TestLastGoodReusesUnchangedObjects: a pool whose id, revision and
// modification time are unchanged is not encoded again.
func TestLastGoodReusesUnchangedObjects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := estate(3)
	p := &cfg.Pools[1]
	marker := []byte(`{"id":"p1","name":"kept from before"}`)
	enc := &configEncoder{pools: map[string]encoded{p.ID: {rev: p.Revision, modified: p.ModifiedOn, doc: marker}}}
	if err := saveLastGood(dir, cfg, enc); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, lastGoodFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, marker) {
		t.Error("an unchanged pool was encoded again")
	}
	p.Revision++
	if err := saveLastGood(dir, cfg, enc); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, lastGoodFile)); bytes.Contains(got, marker) {
		t.Error("a pool with a new revision was written from what was kept")
	}
}
