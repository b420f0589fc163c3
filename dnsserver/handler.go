package dnsserver

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"time"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// maxChain bounds how many CNAMEs one answer follows inside the served
// zones: a loop configured by an operator ends here.
const maxChain = 8

// worker holds what one reading goroutine (a UDP socket, a TCP
// connection) reuses from query to query, so that nothing is allocated
// per query.
type worker struct {
	// xfr: the last query is a transfer for Config.Transfers (TCP only).
	xfr   bool
	r     request
	b     builder
	out   []byte
	tails [][]byte // the RRset being signed
	// dname holds the names DNAMEs synthesise (dname.go), two so that one
	// DNAME's target can be the next one's input.
	dname [2][maxNameLen]byte
	timed uint32 // queries handled, so that one in latencySample is timed
	// arrived is when the reader's last read returned, zero if the reader
	// does not tell (the handler then reads the clock itself).
	arrived time.Time
	// ans are steering decisions, reused from query to query: they hold
	// Decide's working memory, which a fresh one would zero every time.
	// An HTTPS query decides both families, [0] for A and [1] for AAAA.
	ans [2]steering.Answer
	// tapped counts queries towards the dnstap sample (tap.Offer),
	// sampledQueries towards the traffic sample (analytics.Sample.Offer).
	tapped, sampledQueries uint32
	// udp and peer are the socket a UDP datagram came on and its sender,
	// set by UDP readers so that an UPDATE or a signed query can be
	// answered on a goroutine of its own (handoff.go); udp nil answers
	// them in line.
	udp  *net.UDPConn
	peer netip.AddrPort
	// reserve is room the reply must leave for a TSIG (tsig_query.go).
	reserve int
}

func newWorker() *worker {
	return &worker{out: make([]byte, 0, 65535), tails: make([][]byte, 0, 256)}
}

// handle answers one raw query from src and returns the reply, or nil to
// send nothing. It is a convenience for tests; servers reuse a worker.
func (s *Server) handle(msg []byte, src netip.Addr, tcp bool, out []byte) []byte {
	w := &worker{out: out}
	return w.handle(s, msg, src, tcp)
}

// handle answers one raw query from src into the worker's buffer and
// returns the reply, or nil to send nothing. It allocates nothing on the
// answer path, takes no lock and logs nothing.
func (w *worker) handle(s *Server, msg []byte, src netip.Addr, tcp bool) (reply []byte) {
	now := w.clock()
	w.r = request{}
	r := &w.r
	if !r.parse(msg) {
		s.metrics.dropped.Inc()
		return nil
	}
	if w.udp != nil && (r.opcode == opcodeUpdate && s.cfg.Updates != nil || r.signedQuery()) && s.handOff(w, msg) {
		// It needs the store (keys, zones): answered meanwhile on a
		// goroutine of its own, which counts it.
		return nil
	}
	w.b = builder{buf: w.out[:0], r: r, tcp: tcp, reserve: w.reserve, dname: &w.dname}
	b := &w.b
	b.sig.tails, b.sig.cache, b.sig.now = w.tails[:0], s.sigs, now
	defer func() {
		if p := recover(); p != nil {
			// Whatever slipped through is answered SERVFAIL and counted;
			// the server carries on.
			s.metrics.panics.Inc()
			*b = builder{buf: w.out[:0], r: r, tcp: tcp, cell: b.cell}
			b.start()
			b.rcode = rcodeServFail
			b.setEDE(edeOther, edeTextPanic)
			reply = b.finish()
		}
		if b.nested {
			return // the answer to the query inside counted itself
		}
		if s.edge.rrl != nil && !tcp && !b.cookieValid && reply != nil {
			reply = s.limit(b, src, uint32(now.UnixMilli()), reply)
		}
		s.metrics.query(r.qtype, b.rcode, b.truncated, w.sampled(now))
		if b.cell != 0 {
			s.cfg.Counts.Add(now, analytics.WithRcode(b.cell, b.rcode))
		}
		if b.sampleLB != 0 && s.cfg.Sample != nil {
			s.cfg.Sample.Offer(&w.sampledQueries, now, b.sampleLB, b.sampleSubnet, r.qtype)
		}
		if s.cfg.Tap != nil && reply != nil {
			s.cfg.Tap.Offer(&w.tapped, msg, reply, src, tcp, now)
		}
	}()
	b.start()
	if r.opcode == opcodeUpdate && s.cfg.Updates != nil {
		// A write, parsed and applied off the answer path (rfc2136.go).
		return s.update(b, msg)
	}
	if r.opcode != 0 {
		// Only QUERY is served. The reply carries the opcode and QR and
		// nothing else: no flag, no section, not even an OPT.
		b.flags = flagQR | uint16(r.opcode)<<11
		b.rcode = rcodeNotImp
		b.noOPT = true
		return b.finish()
	}
	if r.cookieErr {
		s.edge.m.cookieMalformed.Inc()
	}
	if r.malformed || r.qd != 1 || r.optErr || r.ecsErr || r.cookieErr {
		b.rcode = rcodeFormErr
		if !r.malformed && r.qd == 1 {
			b.question()
		}
		return b.finish()
	}
	b.question()
	if r.signedQuery() {
		return s.signedQuery(b, msg, src, tcp)
	}
	if r.opt && r.version != 0 {
		b.rcode = rcodeBadVers
		return b.finish()
	}
	if r.nsid && len(s.edge.nsid) > 0 {
		b.nsid = s.edge.nsid
	}
	if r.cookie {
		s.cookie(b, src, now)
	}
	if r.qclass == classCH {
		s.chaos(b)
		return b.finish()
	}
	lv := s.live.Load()
	if lv == nil {
		// Not ready: SERVFAIL makes resolvers try another server now and
		// cache nothing for long, which REFUSED would not promise.
		b.rcode = rcodeServFail
		b.setEDE(edeNotReady, edeTextNotReady)
		return b.finish()
	}
	z := lv.snap.findZone(r.name())
	if z == nil || r.qclass != classIN {
		b.rcode = rcodeRefused
		b.setEDE(edeNotAuthoritative, edeTextNotServed)
		return b.finish()
	}
	if r.qtype == typeAXFR || r.qtype == typeIXFR {
		if tcp && s.cfg.Transfers != nil {
			// Handed to the transfer service over this connection.
			w.xfr = true
			return nil
		}
		// Nodes replicate through the store; secondaries transfer over
		// TCP from a node that serves transfers.
		b.rcode = rcodeRefused
		b.setEDE(edeProhibited, edeTextTransfer)
		return b.finish()
	}
	b.flags |= flagAA
	b.apex = z.apex
	s.answer(lv, z, b, src, &w.ans)
	w.tails = b.sig.tails[:0] // keep what signing grew
	return b.finish()
}

// findZone returns the longest served zone containing name (lower-case
// wire form), nil if none: each suffix at a label boundary is a key.
func (s *Snapshot) findZone(name []byte) *zone {
	for off := 0; off < len(name); off += 1 + int(name[off]) {
		if z := s.zones[string(name[off:])]; z != nil {
			return z
		}
	}
	return nil
}

// answer fills the sections for a query inside zone z, following CNAMEs
// that lead to other served names. answers are the worker's, reused for
// every load balancer decision.
func (s *Server) answer(lv *live, z *zone, b *builder, src netip.Addr, answers *[2]steering.Answer) {
	snap := lv.snap
	name := b.r.name()
	qtype := b.r.qtype
	for i := range maxChain {
		b.enter(z)
		if c := z.delegation(name); c != nil && (qtype != typeDS || !bytes.Equal(name, c.name)) {
			if i == 0 {
				s.referral(z, c, b)
			}
			// A CNAME into a delegated subtree ends here: the resolver
			// follows the target to the child's servers itself.
			return
		}
		n := z.nodes[string(name)]
		if n == nil || n.underDNAME {
			// Only a missing or occluded name can lie below a DNAME: one
			// that exists answers without the walk up its labels.
			if d, prefix := z.dnameAbove(name); d != nil && b.dname != nil {
				// The DNAME, a CNAME made from it, and the chain followed
				// on from the new name as from a CNAME's.
				if name = b.synthesize(d, name, prefix, &b.dname[i%2]); name == nil {
					return
				}
				if z = snap.findZone(name); z == nil {
					return
				}
				continue
			}
		}
		if n == nil {
			if i == 0 && s.rumName(z, name, b, src) {
				return
			}
			b.rcode = rcodeNXDomain
			b.negative(z, name, nil)
			return
		}
		if qtype == typeANY {
			// RFC 8482: one synthesised HINFO instead of every RRset.
			b.answer(n.name, z.hinfo)
			b.seal(n.name, false)
			return
		}
		var target []byte
		if n.lb != nil && (qtype == typeA || qtype == typeAAAA || n.rrset(qtype) == nil) {
			ans := &answers[0]
			s.decide(lv, n, b, src, ans)
			switch ans.Down {
			case steering.DownRefused:
				b.rcode = rcodeRefused
				b.flags &^= flagAA
				return
			case steering.DownNoData:
				b.negative(z, name, n)
				return
			case steering.DownAddresses:
				tails := n.sorry4
				if qtype == typeAAAA {
					tails = n.sorry6
				}
				if len(tails) == 0 || qtype != typeA && qtype != typeAAAA {
					b.negative(z, name, n)
					return
				}
				for _, t := range tails {
					b.answerTTL(n.name, t, ans.TTL)
				}
				b.seal(n.name, false)
				return
			}
			if ans.N > 0 {
				ttl := ans.TTL
				for _, oi := range ans.Records() {
					t := snap.originTail(oi)
					b.answerTTL(n.name, t, ttl)
				}
				b.seal(n.name, false)
				if !ans.CNAME || qtype == typeCNAME {
					return
				}
				target = snap.hostTail(ans.Origins[0])
			} else if qtype == typeA || qtype == typeAAAA {
				b.negative(z, name, n)
				return
			} else if qtype == typeHTTPS && n.https != nil {
				// Reached only when no address was asked for (https.go).
				s.answerHTTPS(lv, z, n, b, src, answers)
				return
			}
		}
		if target == nil {
			if set := n.rrset(qtype); set != nil {
				for _, t := range set.rrs {
					b.answer(n.name, t)
				}
				b.seal(n.name, false)
				if qtype == typeNS && len(n.name) == len(z.apex) {
					b.glue(z.apexGlue)
				}
				return
			}
			c := n.rrset(typeCNAME)
			if c == nil {
				b.negative(z, name, n) // NODATA, empty non-terminals too
				return
			}
			b.answer(n.name, c.rrs[0])
			b.seal(n.name, false)
			target = n.target
		}
		// Follow the CNAME when its target is served here too, so that a
		// resolver needs no second query.
		if z = snap.findZone(target); z == nil {
			return
		}
		name = target
	}
}

// decide runs the steering decision for a load balancer name.
func (s *Server) decide(lv *live, n *node, b *builder, src netip.Addr, ans *steering.Answer) {
	lb := n.lb
	qtype := steering.QTypeOther
	switch b.r.qtype {
	case typeA:
		qtype = steering.QTypeA
	case typeAAAA:
		qtype = steering.QTypeAAAA
	}
	var req steering.Request
	lb.FillRequest(&req, src, b.r.ecsPrefix(), qtype, lv.snap.loc)
	lv.snap.steer.Decide(lb, &req, steering.FastRand{}, ans, nil)
	if ans.FailOpen {
		b.setEDE(edeStaleAnswer, edeTextFailOpen)
	}
	if ans.N > 0 || ans.Down != steering.DownFallback {
		b.scope = max(b.scope, ans.Scope)
		lv.lbm[n.lbIdx].count(ans)
	}
	if b.cell == 0 {
		b.cell = lv.cell(n, &req, ans)
		b.sampleLB, b.sampleSubnet = n.lbKey, req.Subnet
	}
}

// cell is the answer-count key of a decision (its response code comes
// when the reply is finished); 0 when nothing counts. A query counts once,
// under the first load balancer its answer met.
func (lv *live) cell(n *node, req *steering.Request, ans *steering.Answer) uint64 {
	if !lv.counted {
		return 0
	}
	pool, origin := uint8(analytics.NoPool), uint8(analytics.NoOrigin)
	if ans.Down == steering.DownFallback && ans.Pool >= 0 {
		pool = uint8(min(lv.lbm[n.lbIdx].slot(ans.Pool), analytics.NoPool))
		if ans.N > 0 {
			origin = uint8(ans.Origins[0] % pools.MaxOriginsPerPool)
		}
	}
	return analytics.Key(lv.epoch, n.lbIdx, pool, origin, analytics.RegionIndex(req.Client.Region), analytics.CountryIndex(req.Client.Country))
}

// builder writes a reply into a caller's buffer.
type builder struct {
	buf    []byte
	r      *request
	tcp    bool
	flags  uint16
	rcode  int
	an, ns uint16
	ar     uint16 // additional records besides the OPT
	qd     uint16
	qend   int
	scope  int
	noOPT  bool
	// cell is the answer-count key of the query's first load balancer
	// decision without its response code; 0 when none counts.
	cell uint64
	// sampleLB and sampleSubnet are that query's load balancer
	// (analytics.LBKey) and client subnet, for the traffic sample.
	sampleLB     uint64
	sampleSubnet netip.Prefix
	truncated    bool
	sig          signing
	// reserve is room kept free for a TSIG; nested: the reply is that of
	// a query answered inside this one (a signed query's), which counted
	// itself.
	reserve int
	nested  bool

	// Options and what RRL needs to classify the reply.
	nsid        []byte // NSID to send, nil for none
	cookie      bool   // send cookieOut
	cookieValid bool   // the query's server cookie was good
	cookieOut   [8 + serverCookieLen]byte
	apex        []byte // zone of the answer (NXDOMAIN bucket)
	cut         *cut   // set by a referral

	// dname is the worker's room for synthesised names (dname.go).
	dname *[2][maxNameLen]byte

	// Extended DNS Error to send (ede.go).
	edeOn   bool
	edeCode uint16
	edeText string
}

func (b *builder) start() {
	b.buf = append(b.buf[:0], make([]byte, headerLen)...)
	b.flags = flagQR | b.r.flags&(flagRD|flagCD)
	b.qend = headerLen
}

func (b *builder) question() {
	b.buf = append(b.buf, b.r.question...)
	b.qd = 1
	b.qend = len(b.buf)
}

// owner writes a name, as a pointer into the question when it is the
// query name or one of its suffixes (the pointer keeps the asker's case).
func (b *builder) owner(name []byte) {
	r := b.r
	if b.qd == 1 {
		q := r.name()
		if d := len(q) - len(name); d >= 0 && len(name) > 1 && bytes.Equal(q[d:], name) {
			for off := 0; off <= d; off += 1 + int(q[off]) {
				if off == d {
					p := headerLen + d
					b.buf = append(b.buf, 0xc0|byte(p>>8), byte(p))
					return
				}
			}
		}
	}
	b.buf = append(b.buf, name...)
}

func (b *builder) answer(owner, t []byte) {
	b.owner(owner)
	b.record(t)
	b.an++
}

func (b *builder) answerTTL(owner, t []byte, ttl uint32) {
	b.owner(owner)
	at := b.record(t)
	putTTL(b.buf[at:], ttl)
	b.an++
}

func (b *builder) authority(owner, t []byte) {
	b.owner(owner)
	b.record(t)
	b.ns++
}

// finish writes the OPT record and the header, truncating a UDP reply
// that does not fit the payload size the client offered.
func (b *builder) finish() []byte {
	r := b.r
	opt := r.opt && !b.noOPT
	echoECS := opt && r.ecs && !r.ecsErr && b.rcode != rcodeFormErr && b.rcode != rcodeBadVers
	optLen := 0
	if opt {
		optLen = 11
		if echoECS {
			optLen += 8 + r.ecsBytes
		}
		if b.nsid != nil {
			optLen += 4 + len(b.nsid)
		}
		if b.cookie {
			optLen += 4 + len(b.cookieOut)
		}
		optLen += b.edeLen()
	}
	limit := 65535
	if !b.tcp {
		limit = minUDPPayload
		if r.opt {
			limit = max(minUDPPayload, min(int(r.udpSize), maxUDPPayload))
		}
	}
	if len(b.buf)+optLen+b.reserve > limit {
		// No partial RRset: every section goes and TC tells the resolver
		// to ask again over TCP.
		b.buf = b.buf[:b.qend]
		b.an, b.ns, b.ar = 0, 0, 0
		b.flags |= flagTC
		b.truncated = true
	}
	ar := b.ar
	if opt {
		ar++
		var ttl uint32
		ttl |= uint32(b.rcode>>4) << 24
		if r.do {
			ttl |= 0x8000
		}
		var h [11]byte
		binary.BigEndian.PutUint16(h[1:], typeOPT)
		binary.BigEndian.PutUint16(h[3:], maxUDPPayload)
		binary.BigEndian.PutUint32(h[5:], ttl)
		binary.BigEndian.PutUint16(h[9:], uint16(optLen-11))
		b.buf = append(b.buf, h[:]...)
		if echoECS {
			var e [8]byte
			binary.BigEndian.PutUint16(e[0:], optionECS)
			binary.BigEndian.PutUint16(e[2:], uint16(4+r.ecsBytes))
			binary.BigEndian.PutUint16(e[4:], r.ecsFam)
			e[6] = r.ecsSrc
			e[7] = uint8(min(b.scope, int(r.ecsSrc)))
			b.buf = append(b.buf, e[:]...)
			b.buf = append(b.buf, r.ecsAddr[:r.ecsBytes]...)
		}
		if b.nsid != nil {
			b.option(optionNSID, b.nsid)
		}
		if b.cookie {
			b.option(optionCookie, b.cookieOut[:])
		}
		b.writeEDE()
	}
	h := b.buf[:headerLen]
	binary.BigEndian.PutUint16(h[0:], r.id)
	binary.BigEndian.PutUint16(h[2:], b.flags|uint16(b.rcode&0xf))
	binary.BigEndian.PutUint16(h[4:], b.qd)
	binary.BigEndian.PutUint16(h[6:], b.an)
	binary.BigEndian.PutUint16(h[8:], b.ns)
	binary.BigEndian.PutUint16(h[10:], ar)
	return b.buf
}

// option appends one EDNS option to the OPT record being written.
func (b *builder) option(code uint16, data []byte) {
	var h [4]byte
	binary.BigEndian.PutUint16(h[0:], code)
	binary.BigEndian.PutUint16(h[2:], uint16(len(data)))
	b.buf = append(b.buf, h[:]...)
	b.buf = append(b.buf, data...)
}
