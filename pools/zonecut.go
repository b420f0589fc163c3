package pools

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Zone cuts: NS records on a name below the apex delegate that subtree to
// other servers (RFC 1034 §4.2.1). The parent keeps only the NS set, the
// DS set and the glue addresses of nameservers inside the subtree; any
// other data there would never be served, so it is refused rather than
// silently hidden. The same holds for a load balancer.

// Cuts lists the delegation points of z: the distinct canonical names
// below the apex that carry NS records.
func (z *Zone) Cuts() []string {
	apex := CanonicalName(z.Name)
	var out []string
	seen := map[string]bool{}
	for _, r := range z.Records {
		n := CanonicalName(r.Name)
		if strings.EqualFold(r.Type, "NS") && n != apex && InZone(n, apex) && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// CutAt returns the delegation point among cuts that name is at or below,
// if any.
func CutAt(name string, cuts []string) (string, bool) {
	for _, c := range cuts {
		if InZone(name, c) {
			return c, true
		}
	}
	return "", false
}

// cutRefs is what the stores' References also answer for cut checks;
// validation without it (refs nil) checks a zone on its own.
type cutRefs interface {
	// ZoneCuts lists the delegation points of the zone with that id.
	ZoneCuts(id string) []string
	// LoadBalancersOf lists the canonical names of the load balancers
	// stored in the zone with that id.
	LoadBalancersOf(zoneID string) []string
}

// checkCuts refuses data the parent cannot serve: anything but NS, DS and
// A/AAAA glue at a cut, anything but glue below one, DS away from a cut,
// and (against the store) a load balancer that the zone's cuts would
// hide.
func (z *Zone) checkCuts(refs References, e *errs) {
	cuts := z.Cuts()
	for i, r := range z.Records {
		checkAtCut(e, fmt.Sprintf("records[%d]", i), r, cuts)
	}
	cr, ok := refs.(cutRefs)
	if !ok || z.ID == "" || len(cuts) == 0 {
		return
	}
	for _, lb := range cr.LoadBalancersOf(z.ID) {
		if c, below := CutAt(lb, cuts); below {
			for i, r := range z.Records {
				if strings.EqualFold(r.Type, "NS") && CanonicalName(r.Name) == c {
					e.add(fmt.Sprintf("records[%d].name", i), "the zone cut %q would hide load balancer %q", c, lb)
					break
				}
			}
		}
	}
}

// checkAtCut checks one record (p its path in errors) against the zone's
// cuts: below a cut only glue, at one only NS, DS and glue, and a DS only
// at a cut.
func checkAtCut(e *errs, p string, r Record, cuts []string) {
	name := CanonicalName(r.Name)
	typ := strings.ToUpper(r.Type)
	c, below := CutAt(name, cuts)
	switch {
	case typ == "DS" && (!below || c != name):
		e.add(p+".type", "a DS record belongs at a zone cut (a name below the apex with NS records); %q is none", r.Name)
	case !below || typ == "A" || typ == "AAAA":
	case c == name && (typ == "NS" || typ == "DS"):
	case c == name:
		e.add(p+".type", "%s at the zone cut %q: only NS, DS and A/AAAA glue may be there (the subtree is delegated)", typ, c)
	default:
		e.add(p+".name", "%q is below the zone cut %q: only A/AAAA glue may be there (the subtree is delegated)", r.Name, c)
	}
}

// checkCut refuses a load balancer at or below a cut of its zone.
func (l *LoadBalancer) checkCut(refs References, e *errs) {
	cr, ok := refs.(cutRefs)
	if !ok {
		return
	}
	if c, below := CutAt(CanonicalName(l.Name), cr.ZoneCuts(l.Zone)); below {
		e.add("name", "%q is at or below the zone cut %q: that subtree is delegated to other nameservers", l.Name, c)
	}
}

func (r *txRefs) ZoneCuts(id string) []string {
	o, err := r.tx.Get(KindZone, id)
	if err != nil {
		return nil // ZoneName reports it
	}
	return o.(*Zone).Cuts()
}

func (r *txRefs) LoadBalancersOf(zoneID string) []string {
	refs, err := r.tx.Referrers(KindZone, zoneID)
	if err != nil {
		if r.err == nil {
			r.err = err
		}
		return nil
	}
	var out []string
	for _, ref := range refs {
		if ref.Kind == KindLoadBalancer.Singular() {
			out = append(out, CanonicalName(ref.Name))
		}
	}
	return out
}

// checkDS validates DS content: key tag, algorithm, digest type and a
// hex digest of the length the digest type defines (RFC 4034 §5.3).
func checkDS(content string) string {
	f := strings.Fields(content)
	if len(f) < 4 {
		return `want "key-tag algorithm digest-type digest", e.g. "12345 13 2 3A1B..."`
	}
	if _, err := strconv.ParseUint(f[0], 10, 16); err != nil {
		return "key tag is not a number in [0, 65535]"
	}
	if _, err := strconv.ParseUint(f[1], 10, 8); err != nil {
		return "algorithm is not a number in [0, 255]"
	}
	dt, err := strconv.ParseUint(f[2], 10, 8)
	if err != nil {
		return "digest type is not a number in [0, 255]"
	}
	digest, err := hex.DecodeString(strings.Join(f[3:], ""))
	if err != nil || len(digest) == 0 {
		return "digest is not hexadecimal"
	}
	if want, known := map[uint64]int{1: 20, 2: 32, 4: 48}[dt]; known && len(digest) != want {
		return fmt.Sprintf("digest type %d has %d-byte digests, not %d", dt, want, len(digest))
	}
	return ""
}
