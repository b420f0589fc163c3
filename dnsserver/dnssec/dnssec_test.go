package dnssec

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/zonekeys"
)

const apex = "Signed.Example."

var t0 = time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)

func newZone(t testing.TB) (*Zone, []pools.ZoneKey) {
	t.Helper()
	keys, err := zonekeys.Ensure(apex, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	z, err := NewZone(apex, 300, keys)
	if err != nil || z == nil {
		t.Fatalf("NewZone = %v, %v", z, err)
	}
	return z, keys
}

func wire(t testing.TB, name string) []byte {
	t.Helper()
	b := make([]byte, 256)
	n, err := dns.PackDomainName(dns.Fqdn(strings.ToLower(name)), b, 0, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return b[:n]
}

func tails(t testing.TB, rrs ...string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		tl, err := tail(rr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tl)
	}
	return out
}

func unpackTail(t testing.TB, owner string, tl []byte) dns.RR {
	t.Helper()
	rr, _, err := dns.UnpackRR(append(wire(t, owner), tl...), 0)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// verify checks sig over rrs with the zone's DNSKEY as a resolver would.
func verify(t testing.TB, k *Key, sigTail []byte, owner string, rrs ...string) *dns.RRSIG {
	t.Helper()
	if sigTail == nil {
		t.Fatal("no signature")
	}
	sig := unpackTail(t, owner, sigTail).(*dns.RRSIG)
	var set []dns.RR
	for _, s := range rrs {
		rr, _ := dns.NewRR(s)
		set = append(set, rr)
	}
	if err := sig.Verify(k.DNSKEY(), set); err != nil {
		t.Fatalf("RRSIG.Verify: %v\n%s", err, sig)
	}
	if !sig.ValidityPeriod(time.Now()) {
		t.Fatalf("signature not valid now: %s", sig)
	}
	return sig
}

func TestKeyRoundTripAndDS(t *testing.T) {
	z, keys := newZone(t)
	k := keys[0]
	if k.Algorithm != 13 || k.Flags != 257 || k.State != pools.KeyActive || k.PrivateKey == "" {
		t.Fatalf("generated key %+v", k)
	}
	dnskey, ds, err := zonekeys.PublicKey(apex, k, 300)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dnskey+ds, k.PrivateKey) {
		t.Fatal("public parts contain the private key")
	}
	want := z.Active.DNSKEY().ToDS(dns.SHA256)
	got, err := dns.NewRR(ds)
	if err != nil || !strings.EqualFold(got.(*dns.DS).Digest, want.Digest) || got.(*dns.DS).DigestType != dns.SHA256 || got.(*dns.DS).KeyTag != k.Tag {
		t.Fatalf("DS %q (%v), want digest %s tag %d", ds, err, want.Digest, k.Tag)
	}
	// The CDS served at the apex is the DS the API gives the parent.
	cds := unpackTail(t, apex, z.CDS[0]).(*dns.CDS)
	if !strings.EqualFold(cds.Digest, want.Digest) || cds.KeyTag != k.Tag {
		t.Errorf("CDS %s, want the DS digest %s", cds, want.Digest)
	}
	cdnskey := unpackTail(t, apex, z.CDNSKEY[0]).(*dns.CDNSKEY)
	if cdnskey.PublicKey != k.PublicKey || cdnskey.Flags != 257 {
		t.Errorf("CDNSKEY %s, want the key", cdnskey)
	}
	bad := k
	other, _ := zonekeys.Generate(apex, pools.KeyActive, t0)
	bad.PublicKey = other.PublicKey
	if _, err := ParseKey(apex, bad); err == nil {
		t.Error("a key whose public part is another key's parsed")
	}
	bad = k
	bad.Tag++
	if _, err := ParseKey(apex, bad); err == nil {
		t.Error("a key with a wrong tag parsed")
	}
}

// TestZoneAtEachRolloverStep: the signer reads each step of a rollover
// as the zone must be served: both keys in the DNSKEY RRset throughout, the
// old key signing until the new one is activated, CDS for the keys the
// parent should hold.
func TestZoneAtEachRolloverStep(t *testing.T) {
	keys, _ := zonekeys.Ensure(apex, nil, t0)
	old := keys[0]
	keys, _, err := zonekeys.Rollover(apex, keys, t0, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	newKey := keys[1]
	z, err := NewZone(apex, 300, keys)
	if err != nil || z.Active.Tag != old.Tag || len(z.All) != 2 || len(z.DNSKEY) != 2 || len(z.CDS) != 2 {
		t.Fatalf("published zone: %v %+v", err, z)
	}
	keys, _, _ = zonekeys.Rollover(apex, keys, t0, 0, true)
	z, _ = NewZone(apex, 300, keys)
	if z.Active.Tag != newKey.Tag || len(z.DNSKEY) != 2 || len(z.CDS) != 1 {
		t.Fatalf("activated zone: active %d, %d DNSKEY, %d CDS", z.Active.Tag, len(z.DNSKEY), len(z.CDS))
	}
	keys, _, _ = zonekeys.Rollover(apex, keys, t0, 0, true)
	z, _ = NewZone(apex, 300, keys)
	if z.Active.Tag != newKey.Tag || len(z.All) != 1 || len(z.DNSKEY) != 1 || len(z.CDS) != 1 {
		t.Fatalf("idle zone: active %d, %d keys, %d DNSKEY, %d CDS", z.Active.Tag, len(z.All), len(z.DNSKEY), len(z.CDS))
	}
}

func TestCacheSignsOnceAndVerifies(t *testing.T) {
	z, _ := newZone(t)
	var hits, signed counter
	c := NewCache(64, Policy{}, Counters{Hits: &hits, Signed: &signed})
	owner := wire(t, "www.signed.example")
	a := tails(t, "x. 30 IN A 192.0.2.1", "x. 30 IN A 192.0.2.2")
	now := time.Now()
	sig := c.Sign(z, z.Active, owner, a, now)
	rr := verify(t, z.Active, sig, "www.signed.example.", "www.signed.example. 30 IN A 192.0.2.1", "www.signed.example. 30 IN A 192.0.2.2")
	if rr.OrigTtl != 30 || rr.Hdr.Ttl != 30 || rr.KeyTag != z.Active.Tag || rr.SignerName != "signed.example." || rr.Labels != 3 {
		t.Errorf("RRSIG fields: %s", rr)
	}
	// The other order is the same RRset: served from the cache.
	again := c.Sign(z, z.Active, owner, [][]byte{a[1], a[0]}, now)
	if &again[0] != &sig[0] || hits != 1 || signed != 1 {
		t.Errorf("second order: hits %d signed %d, same bytes %v", hits, signed, &again[0] == &sig[0])
	}
	// Another TTL is another RRset.
	if c.Sign(z, z.Active, owner, tails(t, "x. 60 IN A 192.0.2.1", "x. 60 IN A 192.0.2.2"), now); signed != 2 {
		t.Errorf("another TTL was not signed anew (signed %d)", signed)
	}
	if n := testing.AllocsPerRun(100, func() { c.Sign(z, z.Active, owner, a, now) }); n != 0 {
		t.Errorf("a cache hit allocates %.0f times", n)
	}
}

type counter int

func (c *counter) Inc() { *c++ }

func TestValidityWindowAndRefresh(t *testing.T) {
	z, _ := newZone(t)
	var signed counter
	pol := Policy{Validity: 10 * 24 * time.Hour, Jitter: 24 * time.Hour, Refresh: 4 * 24 * time.Hour}
	c := NewCache(1024, pol, Counters{Signed: &signed})
	now := time.Now()
	owner := wire(t, "signed.example")
	var exps []uint32
	for i := range 50 {
		a := tails(t, fmt.Sprintf("x. 30 IN TXT \"%d\"", i))
		rr := unpackTail(t, "signed.example.", c.Sign(z, z.Active, owner, a, now)).(*dns.RRSIG)
		lo, hi := now.Add(pol.Validity).Unix(), now.Add(pol.Validity+pol.Jitter).Unix()
		if int64(rr.Expiration) < lo || int64(rr.Expiration) > hi || int64(rr.Inception) != now.Add(-time.Hour).Unix() {
			t.Fatalf("window [%d, %d], want inception %d, expiration in [%d, %d]", rr.Inception, rr.Expiration, now.Add(-time.Hour).Unix(), lo, hi)
		}
		exps = append(exps, rr.Expiration)
	}
	slices.Sort(exps)
	if exps = slices.Compact(exps); len(exps) < 40 {
		t.Errorf("only %d distinct expirations among 50 signatures: no jitter", len(exps))
	}
	a := tails(t, "x. 30 IN TXT \"0\"")
	before := signed
	c.Sign(z, z.Active, owner, a, now.Add(pol.Validity-pol.Refresh-time.Second))
	if signed != before {
		t.Error("signature made anew before its refresh time")
	}
	c.Sign(z, z.Active, owner, a, now.Add(pol.Validity+pol.Jitter-pol.Refresh))
	if signed != before+1 {
		t.Error("signature not made anew after its refresh time")
	}
}

func TestCacheBounded(t *testing.T) {
	z, _ := newZone(t)
	c := NewCache(100, Policy{}, Counters{})
	if c.Slots() != 128 {
		t.Fatalf("slots = %d, want 128", c.Slots())
	}
	owner := wire(t, "signed.example")
	now := time.Now()
	for i := range 1000 {
		c.Sign(z, z.Active, owner, tails(t, fmt.Sprintf("x. 30 IN TXT \"%d\"", i)), now)
	}
	n := 0
	for i := range c.slots {
		if c.slots[i].Load() != nil {
			n++
		}
	}
	if n > c.Slots() || n < c.Slots()/2 {
		t.Errorf("%d entries in %d slots", n, c.Slots())
	}
}

func TestAppendNSEC(t *testing.T) {
	owner := wire(t, "www.signed.example")
	types := []uint16{dns.TypeA, dns.TypeNS, dns.TypeSOA, dns.TypeAAAA, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeDNSKEY, dns.TypeCAA}
	for _, tc := range []struct {
		types []uint16
		skip  uint16
		want  string
	}{
		{types, dns.TypeAAAA, "www.signed.example. 300 IN NSEC \\000.www.signed.example. A NS SOA RRSIG NSEC DNSKEY CAA"},
		{types, dns.TypeCAA, "www.signed.example. 300 IN NSEC \\000.www.signed.example. A NS SOA AAAA RRSIG NSEC DNSKEY"},
		{NXDomainTypes, 0, "www.signed.example. 300 IN NSEC \\000.www.signed.example. RRSIG NSEC NXNAME"},
	} {
		tl, ok := AppendNSEC(nil, owner, 300, tc.types, tc.skip)
		if !ok {
			t.Fatal("AppendNSEC refused")
		}
		got := unpackTail(t, "www.signed.example.", tl)
		want, err := dns.NewRR(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if !dns.IsDuplicate(got, want) {
			t.Errorf("NSEC = %s\nwant   %s", got, want)
		}
	}
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() { AppendNSEC(buf[:0], owner, 300, types, dns.TypeAAAA) }); n != 0 {
		t.Errorf("AppendNSEC allocates %.0f times", n)
	}
	long := wire(t, strings.Repeat("a.", 127))
	if _, ok := AppendNSEC(nil, long, 300, NXDomainTypes, 0); ok {
		t.Error("a successor over 255 bytes was written")
	}
}
