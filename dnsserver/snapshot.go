package dnsserver

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/dnsserver/dnssec"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// Snapshot is the DNS side of a steering snapshot: every zone with its
// names and records in wire form, ready to be copied into replies. It is
// immutable once built; build one with Compile.
type Snapshot struct {
	steer *steering.Snapshot
	// loc places the clients of this configuration (its operator
	// networks); nil when none can be placed.
	loc steering.Locator
	// zones by apex in lower-case wire form: a suffix of a query name in
	// that form is itself a valid key, so finding the zone is re-slicing.
	zones map[string]*zone
	// records[p] holds the origins of pool p of steer. By pool, and by
	// pointer, so that an update shares the records of every pool it does
	// not rebuild at the cost of a pointer each.
	records []*poolRecords
	lbs     []*steering.LB // by node.lb index, for metrics
	// names name the answer counts (count_names.go): Publish registers
	// them with analytics.Counts, which keeps them after the snapshot.
	names *countNames
	// poolNames are the names of the pools the load balancers use, by
	// pool index (nil for one none uses), shared by the next snapshot's
	// names where they did not change.
	poolNames []*poolNames
}

type zone struct {
	apex   []byte
	id     string // the zone's id in the store (UPDATE writes it back)
	nodes  map[string]*node
	soa    []byte // SOA tail with the zone TTL, for answers
	negSOA []byte // SOA tail with min(TTL, minimum), for negative answers
	hinfo  []byte // RFC 8482 HINFO tail
	// hasCuts: some name below the apex has NS records (referral.go).
	hasCuts bool
	// hasDNAME: some name has a DNAME (dname.go).
	hasDNAME bool
	// apexGlue is the additional section of an apex NS answer.
	apexGlue []glue
	// sec signs the zone's answers to DO queries; nil when unsigned.
	sec *dnssec.Zone
	// static holds each static record compiled, by the record with its
	// TTL resolved, so that the next compile of the zone (after an
	// UPDATE of a few of 10,000 records) parses only what is new. Only
	// compiles read it: the answer path never does.
	static map[pools.Record]staticRR
}

// staticRR is one static record compiled: its owner (wire, lower case),
// type, tail and, for a CNAME, its target (wire, lower case).
type staticRR struct {
	owner  []byte
	typ    uint16
	tail   []byte
	target []byte
}

// node is one existing name: with records, a load balancer, or neither
// (an empty non-terminal).
type node struct {
	name   []byte
	rrsets []rrset
	lb     *steering.LB
	lbIdx  int
	lbKey  uint64 // analytics.LBKey of the load balancer's id, for the sample
	// sorry4 and sorry6 are the load balancer's all_down addresses as
	// record tails (TTL written per answer).
	sorry4, sorry6 [][]byte
	// https is the load balancer's HTTPS record, nil when it has none.
	https *httpsRR
	// target of the name's CNAME (wire, lower case), when it has one.
	target []byte
	// cut is set on a delegation point; deleg is the cut this name is at
	// or below, nil where the zone is authoritative.
	cut, deleg *cut
	// underDNAME: a DNAME above the name redirects it (dname.go).
	underDNAME bool
	// types at the name, ascending, for compact denial (signed zones).
	types []uint16
}

type rrset struct {
	typ uint16
	rrs [][]byte // tails; the owner is the node's name
}

func (n *node) rrset(t uint16) *rrset {
	for i := range n.rrsets {
		if n.rrsets[i].typ == t {
			return &n.rrsets[i]
		}
	}
	return nil
}

// Compile builds the DNS snapshot of a steering snapshot. loc may be nil:
// every client is then of unknown location. It fails on a record that does
// not parse or lies outside its zone; the caller keeps its last good one.
func Compile(st *steering.Snapshot, loc steering.Locator) (*Snapshot, error) {
	return compile(st, loc, nil)
}

// compile is Compile sharing the answer counts' names with prev (nil:
// none), the snapshot the new one replaces.
func compile(st *steering.Snapshot, loc steering.Locator, prev *Snapshot) (*Snapshot, error) {
	s := &Snapshot{steer: st, loc: loc, zones: map[string]*zone{}}
	cfg := st.Config()
	byID := map[string]*zone{}
	for i := range cfg.Zones {
		z, err := compileSignedZone(&cfg.Zones[i], cfg.DNSSECKeys, nil)
		if err != nil {
			return nil, fmt.Errorf("zone %s (%s): %w", cfg.Zones[i].ID, cfg.Zones[i].Name, err)
		}
		if _, dup := s.zones[string(z.apex)]; dup {
			return nil, fmt.Errorf("zone %s: %s served twice", cfg.Zones[i].ID, cfg.Zones[i].Name)
		}
		s.zones[string(z.apex)] = z
		byID[cfg.Zones[i].ID] = z
	}
	for _, lb := range st.LoadBalancers() {
		z := byID[lb.ZoneID()]
		if z == nil {
			return nil, fmt.Errorf("load balancer %s: zone %s not served", lb.ID(), lb.ZoneID())
		}
		w, err := wireName(lb.Name())
		if err != nil {
			return nil, fmt.Errorf("load balancer %s: %w", lb.ID(), err)
		}
		n := z.add(w)
		n.setLB(lb, len(s.lbs))
		s.lbs = append(s.lbs, lb)
	}
	for _, z := range s.zones {
		z.nsecTypes()
	}
	s.records = make([]*poolRecords, st.NumPools())
	for p := range int32(st.NumPools()) {
		if err := s.compileOrigins(p); err != nil {
			return nil, err
		}
	}
	s.nameCounts(prev, nil)
	return s, nil
}

// wireName is a name in lower-case, uncompressed wire form.
func wireName(name string) ([]byte, error) {
	fq := dns.Fqdn(strings.ToLower(name))
	buf := make([]byte, 256)
	n, err := dns.PackDomainName(fq, buf, 0, nil, false)
	if err != nil {
		return nil, fmt.Errorf("name %q: %w", name, err)
	}
	return buf[:n], nil
}

// tail packs rr (owner ".") and drops the one-byte root owner.
func tail(rr dns.RR) ([]byte, error) {
	// Sized to the record: a zone of 100,000 records would otherwise
	// allocate 64 KiB for each.
	buf := make([]byte, dns.Len(rr)+1)
	n, err := dns.PackRR(rr, buf, 0, nil, false)
	if err != nil {
		buf = make([]byte, 65535)
		n, err = dns.PackRR(rr, buf, 0, nil, false)
	}
	if err != nil {
		return nil, err
	}
	return buf[1:n:n], nil
}

// compileZone compiles pz; prev (nil: none) is the zone it replaces,
// whose compiled static records are taken where a record is unchanged.
func compileZone(pz *pools.Zone, prev *zone) (*zone, error) {
	apexName := pools.CanonicalName(pz.Name)
	apex, err := wireName(apexName)
	if err != nil {
		return nil, err
	}
	z := &zone{apex: apex, id: pz.ID, nodes: map[string]*node{}, static: make(map[pools.Record]staticRR, len(pz.Records))}
	z.add(apex)
	var known map[pools.Record]staticRR
	if prev != nil && string(prev.apex) == string(apex) {
		known = prev.static
	}
	fq := func(n string) string { return dns.Fqdn(strings.ToLower(n)) }
	ttl := pz.TTL
	mname := ""
	if pz.SOA.MName != "" {
		mname = fq(pz.SOA.MName)
	} else if len(pz.Nameservers) > 0 {
		mname = fq(pz.Nameservers[0])
	} else {
		mname = fq(apexName)
	}
	rname := "hostmaster." + fq(apexName)
	if pz.SOA.RName != "" {
		// An e-mail address is accepted for convenience: its @ is the
		// first label boundary of the SOA RNAME.
		rname = fq(strings.Replace(pz.SOA.RName, "@", ".", 1))
	}
	soa := &dns.SOA{
		Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: ttl},
		Ns:  mname, Mbox: rname, Serial: pz.Serial,
		Refresh: pz.SOA.Refresh, Retry: pz.SOA.Retry, Expire: pz.SOA.Expire, Minttl: pz.SOA.Minimum,
	}
	if z.soa, err = tail(soa); err != nil {
		return nil, fmt.Errorf("soa: %w", err)
	}
	// RFC 2308 §5: a negative answer is cached for min(SOA TTL, MINIMUM).
	soa.Hdr.Ttl = min(ttl, pz.SOA.Minimum)
	if z.negSOA, err = tail(soa); err != nil {
		return nil, fmt.Errorf("soa: %w", err)
	}
	if z.hinfo, err = tail(&dns.HINFO{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeHINFO, Class: dns.ClassINET, Ttl: ttl}, Cpu: "RFC8482"}); err != nil {
		return nil, err
	}
	apexNode := z.nodes[string(apex)]
	apexNode.rrsets = append(apexNode.rrsets, rrset{typ: typeSOA, rrs: [][]byte{z.soa}})
	var nsSet rrset
	nsSet.typ = typeNS
	for _, ns := range pz.Nameservers {
		t, err := tail(&dns.NS{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: ttl}, Ns: fq(ns)})
		if err != nil {
			return nil, fmt.Errorf("nameserver %q: %w", ns, err)
		}
		nsSet.rrs = append(nsSet.rrs, t)
	}
	if len(nsSet.rrs) > 0 {
		apexNode.rrsets = append(apexNode.rrsets, nsSet)
	}
	for i, r := range pz.Records {
		key := pools.Record{Name: r.Name, Type: r.Type, Content: r.Content, TTL: r.TTL}
		if key.TTL == 0 {
			key.TTL = ttl
		}
		sr, ok := known[key]
		if !ok {
			if sr, err = compileStatic(apexName, key); err != nil {
				return nil, fmt.Errorf("record %d (%s %s %q): %w", i, r.Name, r.Type, r.Content, err)
			}
		}
		z.static[key] = sr
		n := z.add(sr.owner)
		if sr.target != nil {
			n.target = sr.target
		}
		if set := n.rrset(sr.typ); set != nil {
			set.rrs = append(set.rrs, sr.tail)
		} else {
			n.rrsets = append(n.rrsets, rrset{typ: sr.typ, rrs: [][]byte{sr.tail}})
		}
	}
	for _, n := range z.nodes {
		if n.rrset(typeCNAME) != nil && (len(n.rrsets) > 1 || n.lb != nil) {
			return nil, fmt.Errorf("%s: a CNAME cannot share its name with other records", wireString(n.name))
		}
	}
	z.compileCuts()
	z.compileDNAMEs()
	return z, nil
}

// compileStatic compiles static record r of the zone at apex, its TTL
// resolved.
func compileStatic(apex string, r pools.Record) (staticRR, error) {
	name := pools.CanonicalName(r.Name)
	if !pools.InZone(name, apex) {
		return staticRR{}, fmt.Errorf("%s is outside the zone", r.Name)
	}
	typ, t, rr, err := recordTail(dns.Fqdn(name), r.TTL, r)
	if err != nil {
		return staticRR{}, err
	}
	sr := staticRR{typ: typ, tail: t}
	if sr.owner, err = wireName(name); err != nil {
		return staticRR{}, err
	}
	if c, ok := rr.(*dns.CNAME); ok {
		if sr.target, err = wireName(c.Target); err != nil {
			return staticRR{}, err
		}
	}
	return sr, nil
}

// recordTail builds the wire tail of a static record, with its type; rr is
// the parsed record, nil for one in the generic form of RFC 3597, whose
// rdata is copied as it is (pools keeps any type that way).
func recordTail(owner string, ttl uint32, r pools.Record) (uint16, []byte, dns.RR, error) {
	if rd, msg, ok := pools.GenericRData(r.Content); ok {
		typ, known := pools.RRTypeCode(r.Type)
		if msg != "" || !known || typ == dns.TypeSOA || typ == dns.TypeCNAME || typ == dns.TypeNS {
			return 0, nil, nil, fmt.Errorf("generic form of type %s: %s", r.Type, msg)
		}
		t := make([]byte, 10+len(rd))
		binary.BigEndian.PutUint16(t[0:], typ)
		binary.BigEndian.PutUint16(t[2:], dns.ClassINET)
		binary.BigEndian.PutUint32(t[4:], ttl)
		binary.BigEndian.PutUint16(t[8:], uint16(len(rd)))
		copy(t[10:], rd)
		return typ, t, nil, nil
	}
	rr, err := dns.NewRR(owner + " " + strconv.FormatUint(uint64(ttl), 10) + " IN " + strings.ToUpper(r.Type) + " " + r.Content)
	if err != nil || rr == nil {
		return 0, nil, nil, fmt.Errorf("does not parse: %v", err)
	}
	typ := rr.Header().Rrtype
	if typ == dns.TypeSOA {
		return 0, nil, nil, fmt.Errorf("the SOA comes from the zone's soa field")
	}
	rr.Header().Name = "."
	t, err := tail(rr)
	if err != nil {
		return 0, nil, nil, err
	}
	return typ, t, rr, nil
}

// add returns the node of name (wire, lower case, inside z), creating it
// and every empty non-terminal between it and the apex.
func (z *zone) add(name []byte) *node {
	if n := z.nodes[string(name)]; n != nil {
		return n
	}
	n := &node{name: name}
	z.nodes[string(name)] = n
	if len(name) > len(z.apex) {
		z.add(name[1+int(name[0]):])
	}
	if z.hasCuts {
		// A name added after the cuts were found (a load balancer) is
		// still referred when it lies below one.
		n.deleg = z.enclosingCut(name)
	}
	return n
}

// wireString renders a wire name for error messages.
func wireString(w []byte) string {
	var b strings.Builder
	for len(w) > 1 {
		l := int(w[0])
		b.Write(w[1 : 1+l])
		b.WriteByte('.')
		w = w[1+l:]
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}

// ttlOffset is where the TTL sits in a record tail.
const ttlOffset = 4

func putTTL(t []byte, ttl uint32) { binary.BigEndian.PutUint32(t[ttlOffset:], ttl) }

// setLB makes n answer for lb, the load balancer at index i.
func (n *node) setLB(lb *steering.LB, i int) {
	n.lb, n.lbIdx, n.lbKey = lb, i, analytics.LBKey(lb.ID())
	n.sorry4, n.sorry6 = addressTails(lb.Sorry(steering.QTypeA)), addressTails(lb.Sorry(steering.QTypeAAAA))
	n.https = compileHTTPS(lb.HTTPS())
	if n.types != nil {
		// A node kept from the last snapshot (dnsserver.Update) keeps its
		// type bitmap: HTTPS may have come or gone with the load balancer.
		n.types = lbTypes(n)
	}
}

// addressTails builds A or AAAA record tails (type, class, TTL 0,
// rdlength, rdata) for addrs.
func addressTails(addrs []netip.Addr) [][]byte {
	var out [][]byte
	for _, a := range addrs {
		rd := a.AsSlice()
		typ := uint16(dns.TypeA)
		if a.Is6() {
			typ = dns.TypeAAAA
		}
		t := make([]byte, 10+len(rd))
		binary.BigEndian.PutUint16(t[0:], typ)
		binary.BigEndian.PutUint16(t[2:], dns.ClassINET)
		binary.BigEndian.PutUint16(t[8:], uint16(len(rd)))
		copy(t[10:], rd)
		out = append(out, t)
	}
	return out
}
