// Package transfer lets secondaries follow glb's zones: AXFR (RFC 5936)
// and IXFR (RFC 1995) out over TCP, NOTIFY (RFC 1996) on every change.
//
// A zone transfers as its export does (package zonefile): its static
// records, and each load balancer as the records a client of unknown
// location gets now. Each snapshot the node publishes is observed: a new
// serial is a new version, kept with the difference from the last one in
// a journal for IXFR (AXFR when the journal no longer reaches back). A
// health change alone changes a load balancer's records without a new
// serial from the store, so the service asks the store for one (a write
// of the zone), at most once per min_interval: a serial always stands for
// one content, the same on every node.
//
// The DNS handler hands transfer requests over (dnsserver.Transferer);
// miekg/dns types stay inside this package.
package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
	"github.com/glb-dns/glb/zonefile"
)

// Keys finds TSIG keys by name (the store).
type Keys interface {
	TSIGKey(ctx context.Context, name string) (pools.TSIGKey, error)
}

// Store writes a zone to advance its serial (the store).
type Store interface {
	Get(ctx context.Context, k pools.Kind, id string) (pools.Object, error)
	Replace(ctx context.Context, o pools.Object, ifRevision int64) (pools.Object, error)
}

// Config configures a Service.
type Config struct {
	// Keys holds the TSIG keys that sign requests. Required.
	Keys Keys
	// Store advances a zone's serial when health alone changed what it
	// transfers; nil leaves it (and the change) until the next write.
	Store Store
	// Logger; nil discards.
	Logger *slog.Logger
	// NotifyInterval is the time between NOTIFY retries. Default 2 s.
	NotifyInterval time.Duration
	// NotifyTries bounds the NOTIFYs of one change to one secondary.
	// Default 15.
	NotifyTries int
	// JournalSize bounds the changes kept for IXFR per zone. Default 64.
	JournalSize int
}

// Service serves transfers and sends NOTIFYs. Observe feeds it.
type Service struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	zones  map[string]*zoneState // by zone id
	byName map[string]*zoneState // by canonical apex

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// offered is the latest snapshot Offer left for the observer.
	offered atomic.Pointer[steering.Snapshot]
	kick    chan struct{}
}

// New returns a service; Close stops its NOTIFYs and serial writes.
func New(cfg Config) *Service {
	if cfg.NotifyInterval <= 0 {
		cfg.NotifyInterval = 2 * time.Second
	}
	if cfg.NotifyTries <= 0 {
		cfg.NotifyTries = 15
	}
	if cfg.JournalSize <= 0 {
		cfg.JournalSize = 64
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{cfg: cfg, log: log.With("component", "transfer"), zones: map[string]*zoneState{},
		byName: map[string]*zoneState{}, ctx: ctx, cancel: cancel, kick: make(chan struct{}, 1)}
	s.wg.Add(1)
	go s.observer()
	return s
}

// Offer hands the snapshot the node now serves to the observer, without
// waiting: building a large zone's version must not hold up publication.
// Only the latest offered snapshot is observed.
func (s *Service) Offer(snap *steering.Snapshot) {
	s.offered.Store(snap)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Service) observer() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.kick:
			s.Observe(s.offered.Load())
		}
	}
}

// Close stops the NOTIFY and serial goroutines and waits for them.
func (s *Service) Close() {
	s.cancel()
	s.wg.Wait()
}

// version is one serial of a zone and what it transfers.
type version struct {
	serial uint32
	soa    *dns.SOA
	rrs    []dns.RR // every record but the SOA, in the export's order
	digest [32]byte // of rrs, to tell a change without a new serial
}

// change is what a serial changed: IXFR's difference sequence.
type change struct {
	from, to *dns.SOA
	del, add []dns.RR
}

type zoneState struct {
	id, name string
	settings pools.ZoneTransfer
	allow    []netip.Prefix
	signed   bool
	input    [32]byte // inputKey of cur's build
	cur      *version
	journal  []change
	// lastBump is when this node last asked the store for a serial;
	// bumpAt is set while one waits for min_interval.
	lastBump time.Time
	bumpAt   time.Time
	// secondaries by address: what each last transferred.
	secondaries map[netip.Addr]*Secondary
	// notifyGen counts the changes notified: a NOTIFY loop ends when a
	// newer one starts.
	notifyGen int
}

// Secondary is what a secondary last asked of a zone.
type Secondary struct {
	Address string    `json:"address"`
	Kind    string    `json:"kind"`   // AXFR or IXFR
	Asked   uint32    `json:"asked"`  // the serial it had (IXFR), 0 for AXFR
	Serial  uint32    `json:"serial"` // the serial it was sent
	At      time.Time `json:"at"`
}

// Secondaries returns what each secondary last asked of zone id, by
// address.
func (s *Service) Secondaries(zoneID string) []Secondary {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.zones[zoneID]
	if z == nil {
		return []Secondary{}
	}
	out := make([]Secondary, 0, len(z.secondaries))
	for _, sec := range z.secondaries {
		out = append(out, *sec)
	}
	slices.SortFunc(out, func(a, b Secondary) int { return strings.Compare(a.Address, b.Address) })
	return out
}

// Serial returns the serial zone id transfers now (0: none).
func (s *Service) Serial(zoneID string) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if z := s.zones[zoneID]; z != nil && z.cur != nil {
		return z.cur.serial
	}
	return 0
}

// Observe takes the snapshot the node now serves: each zone that
// transfers gets a new version when its serial moved, and a serial write
// when its content moved without one.
func (s *Service) Observe(snap *steering.Snapshot) {
	if snap == nil {
		return
	}
	cfg := snap.Config()
	seen := map[string]bool{}
	for i := range cfg.Zones {
		z := &cfg.Zones[i]
		if !z.Transfer.Enabled() {
			continue
		}
		seen[z.ID] = true
		lbs := zonefile.StaticLBs(snap, z.ID)
		key := inputKey(z, lbs)
		s.mu.Lock()
		zs := s.zones[z.ID]
		same := zs != nil && zs.input == key
		s.mu.Unlock()
		if same {
			continue
		}
		v, err := build(z, lbs)
		if err != nil {
			s.log.Error("zone cannot be transferred", "zone", z.Name, "err", err)
			continue
		}
		s.observeZone(z, v, key)
	}
	s.mu.Lock()
	for id, zs := range s.zones {
		if !seen[id] {
			delete(s.zones, id)
			delete(s.byName, zs.name)
			zs.notifyGen++
		}
	}
	s.mu.Unlock()
}

// inputKey sums what a zone's version is built from: the zone as stored
// and its load balancers' records, so that a snapshot that changes
// neither costs no rebuild.
func inputKey(z *pools.Zone, lbs []zonefile.LB) [32]byte {
	h := sha256.New()
	b, _ := json.Marshal(z)
	h.Write(b)
	for _, lb := range lbs {
		b, _ := json.Marshal(lb)
		h.Write(b)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (s *Service) observeZone(z *pools.Zone, v *version, key [32]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := pools.CanonicalName(z.Name)
	zs := s.zones[z.ID]
	if zs == nil {
		zs = &zoneState{id: z.ID, secondaries: map[netip.Addr]*Secondary{}}
		s.zones[z.ID] = zs
	}
	if zs.name != name {
		delete(s.byName, zs.name)
		zs.name = name
		s.byName[name] = zs
	}
	zs.settings = *z.Transfer
	zs.allow = z.Transfer.AllowPrefixes()
	zs.signed = z.DNSSEC.Enabled
	if v.digest == zs.cur.digestOr(v.digest) || v.serial != zs.cur.serial {
		// Built into the current version: the same input need not be
		// built again. A change waiting for its serial is built again
		// each time, so that a failed serial write is tried again.
		zs.input = key
	}
	switch {
	case zs.cur == nil:
		zs.cur = v
		s.notify(zs)
	case v.serial != zs.cur.serial:
		zs.journal = append(zs.journal, diff(zs.cur, v))
		if len(zs.journal) > s.cfg.JournalSize {
			zs.journal = slices.Delete(zs.journal, 0, len(zs.journal)-s.cfg.JournalSize)
		}
		zs.cur = v
		s.notify(zs)
	case v.digest != zs.cur.digest:
		// Health alone changed what the zone transfers: that needs a
		// serial of its own, at most once per min_interval.
		s.scheduleBump(zs)
	}
}

// digestOr is v's digest, or def for no version.
func (v *version) digestOr(def [32]byte) [32]byte {
	if v == nil {
		return def
	}
	return v.digest
}

// build is a zone's version: its export's records.
func build(z *pools.Zone, lbs []zonefile.LB) (*version, error) {
	lines, err := zonefile.Lines(z, lbs)
	if err != nil {
		return nil, err
	}
	v := &version{serial: z.Serial}
	h := sha256.New()
	for i, l := range lines {
		if l.Text == "" {
			continue
		}
		rr, err := dns.NewRR(l.Text)
		if err != nil || rr == nil {
			return nil, errors.New("record " + l.Text + " does not parse")
		}
		if i == 0 {
			v.soa = rr.(*dns.SOA)
			continue
		}
		v.rrs = append(v.rrs, rr)
		h.Write([]byte(l.Text))
		h.Write([]byte{'\n'})
	}
	if v.soa == nil {
		return nil, errors.New("no SOA")
	}
	h.Sum(v.digest[:0])
	return v, nil
}

// diff is the change from a to b: the records a has that b lacks, and
// the records b has that a lacks.
func diff(a, b *version) change {
	key := func(rr dns.RR) string { return strings.ToLower(rr.String()) }
	in := func(v *version) map[string]bool {
		m := make(map[string]bool, len(v.rrs))
		for _, rr := range v.rrs {
			m[key(rr)] = true
		}
		return m
	}
	ak, bk := in(a), in(b)
	c := change{from: a.soa, to: b.soa}
	for _, rr := range a.rrs {
		if !bk[key(rr)] {
			c.del = append(c.del, rr)
		}
	}
	for _, rr := range b.rrs {
		if !ak[key(rr)] {
			c.add = append(c.add, rr)
		}
	}
	return c
}

// scheduleBump asks the store for a new serial of zs, now or once
// min_interval has passed since the last time; s.mu is held.
func (s *Service) scheduleBump(zs *zoneState) {
	if s.cfg.Store == nil || !zs.bumpAt.IsZero() {
		return
	}
	at := zs.lastBump.Add(time.Duration(zs.settings.Interval()) * time.Second)
	if now := time.Now(); at.Before(now) {
		at = now
	}
	zs.bumpAt = at
	id := zs.id
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(time.Until(at))
		defer t.Stop()
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		s.bump(id)
	}()
}

// bump writes zone id back unchanged: the store advances its serial,
// and the snapshot that follows carries the new content under it.
func (s *Service) bump(id string) {
	s.mu.Lock()
	zs := s.zones[id]
	if zs != nil {
		zs.bumpAt, zs.lastBump = time.Time{}, time.Now()
	}
	s.mu.Unlock()
	if zs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(pools.WithCaller(s.ctx, pools.Caller{Actor: pools.ActorCluster, Method: "TRANSFER"}), 10*time.Second)
	defer cancel()
	o, err := s.cfg.Store.Get(ctx, pools.KindZone, id)
	if err != nil {
		s.log.Warn("serial for a health change: read zone", "zone", id, "err", err)
		return
	}
	if _, err := s.cfg.Store.Replace(ctx, o, o.ObjectMeta().Revision); err != nil && !errors.Is(err, pools.ErrStale) {
		// Stale: another node or a write gave the zone a new serial.
		s.log.Warn("serial for a health change: write zone", "zone", id, "err", err)
		return
	}
	s.log.Info("zone serial advanced: a health change changed what it transfers", "zone", zs.name)
}
