package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// testTSIGKeys is the contract of the TSIG key store: a key is created
// whole or not at all, its grants name existing zones and names inside
// them, its secret comes back only by name, and every write is audited
// without the secret.
func testTSIGKeys(t *testing.T, c context.Context, s pools.Store) {
	c = pools.WithCaller(c, pools.Caller{Actor: pools.ActorBootstrap, Method: "POST"})
	z, err := s.Create(c, Zone("glb.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	secret := pools.NewTSIGSecret(pools.TSIGHMACSHA256)
	grant := pools.TSIGGrant{Zone: z.ObjectMeta().ID, Name: "WWW.glb.example.com.", Match: pools.MatchACMEChallenge, Types: []string{"txt"}}
	rev0, _ := s.Revision(ctx(t))
	k, err := s.CreateTSIGKey(c, pools.TSIGKey{Name: "ACME.", Algorithm: pools.TSIGHMACSHA256, Grants: []pools.TSIGGrant{grant}, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if k.Name != "acme" || k.Grants[0].Name != "www.glb.example.com" || k.Grants[0].Types[0] != "TXT" || k.CreatedOn.IsZero() {
		t.Errorf("not canonical: %+v", k)
	}
	if rev, _ := s.Revision(ctx(t)); rev <= rev0 {
		t.Errorf("revision %d after create, was %d", rev, rev0)
	}
	_, err = s.CreateTSIGKey(c, pools.TSIGKey{Name: "acme", Algorithm: pools.TSIGHMACSHA512, Grants: []pools.TSIGGrant{grant}, Secret: secret})
	wantPaths(t, err, "name")
	_, err = s.CreateTSIGKey(c, pools.TSIGKey{Name: "bad", Algorithm: "hmac-md5", Grants: []pools.TSIGGrant{{Zone: z.ObjectMeta().ID, Name: "x", Match: "any", Types: []string{"SOA"}}}, Secret: secret})
	wantPaths(t, err, "algorithm", "grants[0].match", "grants[0].types[0]")
	_, err = s.CreateTSIGKey(c, pools.TSIGKey{Name: "other", Algorithm: pools.TSIGHMACSHA256, Grants: []pools.TSIGGrant{
		{Zone: "no-such-zone", Name: "a.glb.example.com", Match: pools.MatchExact, Types: []string{"TXT"}},
		{Zone: z.ObjectMeta().ID, Name: "a.example.org", Match: pools.MatchExact, Types: []string{"TXT"}},
	}, Secret: secret})
	wantPaths(t, err, "grants[0].zone", "grants[1].name")
	if _, err := s.TSIGKey(ctx(t), "other"); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("a refused key was stored: %v", err)
	}

	got, err := s.TSIGKey(ctx(t), "acme")
	if err != nil || got.Secret != secret || got.Algorithm != pools.TSIGHMACSHA256 || len(got.Grants) != 1 || got.Grants[0].Match != pools.MatchACMEChallenge {
		t.Fatalf("by name: %+v %v", got, err)
	}
	list, err := s.TSIGKeys(ctx(t))
	if err != nil || len(list) != 1 || list[0].Secret != "" {
		t.Fatalf("list: %+v %v", list, err)
	}
	dc := pools.WithCaller(ctx(t), pools.Caller{Actor: pools.ActorBootstrap, Method: "DELETE"})
	if err := s.DeleteTSIGKey(dc, "acme"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTSIGKey(dc, "acme"); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if _, err := s.TSIGKey(ctx(t), "acme"); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("deleted key still found: %v", err)
	}
	es := audit(t, s, pools.AuditFilter{Kind: pools.KindTSIGKey})
	if len(es) != 2 || es[0].Action != pools.ActionCreate || es[1].Action != pools.ActionDelete || es[0].ObjectID != "acme" || es[1].Actor != pools.ActorBootstrap {
		t.Fatalf("audit: %+v", es)
	}
	for _, e := range es {
		if b, _ := json.Marshal(e); bytes.Contains(b, []byte(secret)) {
			t.Errorf("an audit entry shows the secret: %s", b)
		}
	}
}
