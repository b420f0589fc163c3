package dnsserver

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func sortedEqual(got, want []string) bool {
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}

func (r digReply) wantSections(t *testing.T, auth, extra []string) {
	t.Helper()
	if !sortedEqual(r.auth, auth) {
		t.Errorf("authority %q, want %q\n%s", r.auth, auth, r.raw)
	}
	if !sortedEqual(r.extra, extra) {
		t.Errorf("additional %q, want %q\n%s", r.extra, extra, r.raw)
	}
}

// TestDigZoneCuts: what a resolver sees of a delegation below the apex
// and of the apex NS set, read by dig +norec.
func TestDigZoneCuts(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, prometheus.NewRegistry())
	port := digPort(t, s)
	ns := []string{"sub.glb.example.com. 300 IN NS ns.sub.glb.example.com.", "sub.glb.example.com. 300 IN NS ns.other.test."}
	glue := []string{"ns.sub.glb.example.com. 300 IN A 192.0.2.80", "ns.sub.glb.example.com. 300 IN AAAA 2001:db8::80"}

	for _, q := range []string{"sub.glb.example.com", "www.sub.glb.example.com", "ns.sub.glb.example.com"} {
		t.Run("referral with glue for "+q, func(t *testing.T) {
			r := dig(t, port, q, "A")
			r.wantStatus(t, "NOERROR")
			r.wantFlags(t, "qr") // no aa
			r.wantAnswer(t)
			r.wantSections(t, ns, glue)
		})
	}
	t.Run("DS at the cut from the parent", func(t *testing.T) {
		r := dig(t, port, "sub.glb.example.com", "DS")
		r.wantStatus(t, "NOERROR")
		r.wantFlags(t, "qr", "aa")
		// dig splits a long digest in two words.
		d := upperHex(testDigest)
		r.wantAnswer(t, "sub.glb.example.com. 300 IN DS 12345 13 2 "+d[:56]+" "+d[56:])
	})
	t.Run("DS at a cut without one: NODATA with SOA", func(t *testing.T) {
		r := dig(t, port, "nods.glb.example.com", "DS")
		r.wantStatus(t, "NOERROR")
		r.wantFlags(t, "qr", "aa")
		r.wantAnswer(t)
		r.wantSections(t, []string{digNegSOA}, nil)
	})
	t.Run("apex NS with glue", func(t *testing.T) {
		r := dig(t, port, "glb.example.com", "NS")
		r.wantFlags(t, "qr", "aa")
		r.wantAnswer(t, "glb.example.com. 300 IN NS ns1.glb.example.com.", "glb.example.com. 300 IN NS ns2.glb.example.com.")
		r.wantSections(t, nil, []string{"ns1.glb.example.com. 300 IN A 192.0.2.53", "ns2.glb.example.com. 300 IN A 192.0.2.54"})
	})
	t.Run("nothing unsolicited in additional", func(t *testing.T) {
		r := dig(t, port, "ns1.glb.example.com", "A")
		r.wantSections(t, nil, nil)
	})
}

func upperHex(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
