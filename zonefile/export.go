package zonefile

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// LB is a load balancer of a zone as a file or a transfer carries it: the
// records a client of unknown location gets now.
type LB struct {
	ID      string
	Name    string // canonical
	Records []pools.Record
}

// Line is one record of a zone in presentation format, fully qualified,
// with the comment that goes before it ("" for none).
type Line struct {
	Comment string
	Text    string
}

// Lines is zone z as master-file lines: the SOA, the apex NS, the static
// records, then each load balancer's records after a comment naming it.
// It fails on a stored record that does not parse (the store refuses
// those).
func Lines(z *pools.Zone, lbs []LB) ([]Line, error) {
	apex := dns.Fqdn(pools.CanonicalName(z.Name))
	mname, rname := SOANames(z)
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	out := []Line{{Text: apex + "\t" + u(z.TTL) + "\tIN\tSOA\t" + dns.Fqdn(mname) + " " + dns.Fqdn(rname) + " " +
		u(z.Serial) + " " + u(z.SOA.Refresh) + " " + u(z.SOA.Retry) + " " + u(z.SOA.Expire) + " " + u(z.SOA.Minimum)}}
	for _, ns := range z.Nameservers {
		out = append(out, Line{Text: apex + "\t" + u(z.TTL) + "\tIN\tNS\t" + dns.Fqdn(pools.CanonicalName(ns))})
	}
	for i, r := range z.Records {
		t, err := recordLine(r, z.TTL)
		if err != nil {
			return nil, fmt.Errorf("record %d (%s %s): %w", i, r.Name, r.Type, err)
		}
		out = append(out, Line{Text: t})
	}
	for _, lb := range lbs {
		c := "load balancer " + lb.ID + " (" + lb.Name + "): the answer of a client of unknown location now"
		if len(lb.Records) == 0 {
			out = append(out, Line{Comment: c + ": none"})
			continue
		}
		for i, r := range lb.Records {
			t, err := recordLine(r, z.TTL)
			if err != nil {
				return nil, fmt.Errorf("load balancer %s: %w", lb.ID, err)
			}
			l := Line{Text: t}
			if i == 0 {
				l.Comment = c
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// recordLine is a record as a master-file line with every name fully
// qualified; the generic form stays generic.
func recordLine(r pools.Record, zoneTTL uint32) (string, error) {
	ttl := r.TTL
	if ttl == 0 {
		ttl = zoneTTL
	}
	owner := dns.Fqdn(pools.CanonicalName(r.Name))
	typ := strings.ToUpper(r.Type)
	head := owner + "\t" + strconv.FormatUint(uint64(ttl), 10) + "\tIN\t" + typ + "\t"
	if _, msg, ok := pools.GenericRData(r.Content); ok {
		if msg != "" {
			return "", fmt.Errorf("%s", msg)
		}
		return head + strings.Join(strings.Fields(r.Content), " "), nil
	}
	rr, err := dns.NewRR(owner + " " + strconv.FormatUint(uint64(ttl), 10) + " IN " + typ + " " + r.Content)
	if err != nil || rr == nil {
		return "", fmt.Errorf("does not parse: %v", err)
	}
	return head + RData(rr), nil
}

// Export writes zone z as a master file that BIND, Knot and NSD load as
// it is.
func Export(w io.Writer, z *pools.Zone, lbs []LB) error {
	lines, err := Lines(z, lbs)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "; zone %s, serial %d, written by glb\n", pools.CanonicalName(z.Name), z.Serial)
	fmt.Fprintf(bw, "$ORIGIN %s\n", dns.Fqdn(pools.CanonicalName(z.Name)))
	for _, l := range lines {
		if l.Comment != "" {
			fmt.Fprintf(bw, "; %s\n", l.Comment)
		}
		if l.Text != "" {
			fmt.Fprintln(bw, l.Text)
		}
	}
	return bw.Flush()
}
