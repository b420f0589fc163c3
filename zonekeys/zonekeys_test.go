package zonekeys

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

const apex = "Signed.Example."

var t0 = time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)

// TestGenerateAndPublicParts: a zone's key is a combined signing key of
// algorithm 13, and its public parts are the DNSKEY and a SHA-256 DS of it
// that never carry the private key.
func TestGenerateAndPublicParts(t *testing.T) {
	k, err := Generate(apex, pools.KeyActive, t0)
	if err != nil {
		t.Fatal(err)
	}
	if k.Algorithm != 13 || k.Flags != 257 || k.Role != pools.KeyRoleCSK || k.State != pools.KeyActive || k.PrivateKey == "" || !k.CreatedOn.Equal(t0) {
		t.Fatalf("generated key %+v", k)
	}
	dnskeyRR, dsRR, err := PublicKey(apex, k, 300)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dnskeyRR+dsRR, k.PrivateKey) {
		t.Fatal("public parts contain the private key")
	}
	rr, err := dns.NewRR(dnskeyRR)
	if err != nil {
		t.Fatalf("DNSKEY %q: %v", dnskeyRR, err)
	}
	key := rr.(*dns.DNSKEY)
	if key.Hdr.Name != "signed.example." || key.Hdr.Ttl != 300 || key.PublicKey != k.PublicKey || key.KeyTag() != k.Tag {
		t.Errorf("DNSKEY %s, want the key at the lower-cased apex, TTL 300, tag %d", key, k.Tag)
	}
	rr, err = dns.NewRR(dsRR)
	if err != nil {
		t.Fatalf("DS %q: %v", dsRR, err)
	}
	ds := rr.(*dns.DS)
	if want := key.ToDS(dns.SHA256); ds.DigestType != dns.SHA256 || !strings.EqualFold(ds.Digest, want.Digest) || ds.KeyTag != k.Tag || ds.Hdr.Ttl != 300 {
		t.Errorf("DS %s, want digest %s of the key", ds, want.Digest)
	}
}

func TestRolloverSteps(t *testing.T) {
	keys, _ := Ensure(apex, nil, t0)
	old := keys[0]
	if again, _ := Ensure(apex, keys, t0); len(again) != 1 {
		t.Fatalf("Ensure added a key to a zone that has one: %d", len(again))
	}
	wait := 10 * time.Minute
	_, _, err := Rollover(apex, keys, t0.Add(time.Minute), wait, false)
	var early *TooEarlyError
	if !errors.As(err, &early) || !early.After.Equal(t0.Add(wait)) {
		t.Fatalf("rollover before the wait: %v, want TooEarlyError after %s", err, t0.Add(wait))
	}
	now := t0.Add(wait)
	states := func(ks []pools.ZoneKey) string {
		var s []string
		for _, k := range ks {
			s = append(s, fmt.Sprintf("%d:%s", k.Tag, k.State))
		}
		return strings.Join(s, " ")
	}
	keys, ph, err := Rollover(apex, keys, now, wait, false)
	if err != nil || ph != PhasePublished || len(keys) != 2 || keys[0].ID != old.ID || keys[0].State != pools.KeyActive || keys[1].State != pools.KeyPublished {
		t.Fatalf("publish: %s %s %v", ph, states(keys), err)
	}
	newKey := keys[1]
	if !OfferedToParent(keys[0]) || !OfferedToParent(keys[1]) {
		t.Errorf("published: the parent is not offered both keys' DS")
	}
	if _, _, err := Rollover(apex, keys, now.Add(time.Second), wait, false); !errors.Is(err, ErrTooEarly) {
		t.Fatalf("activate right after publish: %v, want too early", err)
	}
	now = now.Add(wait)
	keys, ph, err = Rollover(apex, keys, now, wait, false)
	if err != nil || ph != PhaseActivated || keys[0].State != pools.KeyRetired || keys[1].State != pools.KeyActive {
		t.Fatalf("activate: %s %s %v", ph, states(keys), err)
	}
	if OfferedToParent(keys[0]) || !OfferedToParent(keys[1]) {
		t.Errorf("activated: the parent is offered the retired key's DS, or not the active one's")
	}
	keys, ph, err = Rollover(apex, keys, now, wait, true)
	if err != nil || ph != PhaseIdle || len(keys) != 1 || keys[0].ID != newKey.ID || keys[0].State != pools.KeyActive {
		t.Fatalf("retire (forced): %s %s %v", ph, states(keys), err)
	}
}
