package dnsserver

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// Group commit of the UPDATEs of one zone.
//
// Each zone has a committer: a queue, and a goroutine that runs while the
// queue is not empty. It takes the updates waiting, signed with one key
// (the audit entry names one actor), checks and applies each in the order
// they came, each against the zone as the ones before it left it, and
// writes them in one store transaction. An update whose prerequisites
// fail or that its key may not make is refused alone; the others of the
// batch go on. The committer keeps the zone as it last read or wrote it,
// so that the next batch neither reads nor parses the whole zone again;
// a write made stale by another writer drops that copy, and the batch is
// tried again from the start against what the store now holds, for as
// long as its updates may wait. Contention is thus never a refusal.

// maxBatch bounds the updates of one write.
const maxBatch = 256

// committerIdle is how long a zone's committer is kept, with its parsed
// copy of the zone, after its last batch: long enough that a client's
// next update finds it, short enough that zones updated once (a
// certificate a quarter) do not each keep a copy for good.
const committerIdle = time.Minute

// committers holds the committer of each zone that has had an UPDATE in
// the last committerIdle.
type committers struct {
	mu        sync.Mutex
	m         map[string]*committer
	lastSweep time.Time
}

type committer struct {
	mu      sync.Mutex
	pending []*pendingUpdate
	running bool
	// idleSince is when the committer last ran out of updates.
	idleSince time.Time

	// Only the running committer reads and writes these.
	apex []byte // the zone's apex (wire, lower case)
	base *zoneBase
}

// zoneBase is a zone as stored at its revision, with its records parsed.
type zoneBase struct {
	pz   *pools.Zone
	recs []upRec
}

// pendingUpdate is one UPDATE waiting for its zone's committer.
type pendingUpdate struct {
	req      *dns.Msg
	key      *pools.TSIGKey
	deadline time.Time
	// rf is the outcome once done is closed, nil when applied or nothing
	// changed; outcome names it for the metrics.
	rf      *refusal
	outcome string
	done    chan struct{}
}

// submit queues req for z's committer and waits for its outcome.
func (c *committers) submit(s *Server, z *zone, req *dns.Msg, key *pools.TSIGKey) *refusal {
	p := &pendingUpdate{req: req, key: key, deadline: time.Now().Add(updateWait), done: make(chan struct{})}
	now := time.Now()
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*committer{}
	}
	if now.Sub(c.lastSweep) >= committerIdle {
		c.sweep(now)
	}
	zc := c.m[z.id]
	if zc == nil {
		zc = &committer{apex: z.apex}
		c.m[z.id] = zc
	}
	// Queued under c.mu, so that a sweep never drops a committer an
	// update is about to join.
	zc.mu.Lock()
	zc.pending = append(zc.pending, p)
	start := !zc.running
	zc.running = true
	zc.mu.Unlock()
	c.mu.Unlock()
	if start {
		go s.runCommitter(zc, z.id)
	}
	<-p.done // the committer answers every update it takes, in bounded time
	return p.rf
}

// sweep drops the committers idle for committerIdle at now; c.mu is
// held.
func (c *committers) sweep(now time.Time) {
	c.lastSweep = now
	for id, zc := range c.m {
		zc.mu.Lock()
		idle := !zc.running && len(zc.pending) == 0 && now.Sub(zc.idleSince) >= committerIdle
		zc.mu.Unlock()
		if idle {
			delete(c.m, id)
		}
	}
}

// len is the number of committers kept.
func (c *committers) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// runCommitter commits batches until the queue is empty.
func (s *Server) runCommitter(zc *committer, zoneID string) {
	for {
		zc.mu.Lock()
		batch := nextBatch(&zc.pending)
		if len(batch) == 0 {
			zc.running, zc.idleSince = false, time.Now()
			zc.mu.Unlock()
			return
		}
		zc.mu.Unlock()
		s.commitSafely(zc, zoneID, batch)
		for _, p := range batch {
			s.metrics.updates.WithLabelValues(p.outcome).Inc()
			close(p.done)
		}
	}
}

// commitSafely is commitBatch, with a panic answered SERVFAIL and counted
// as the handler's are: the committer and the server carry on.
func (s *Server) commitSafely(zc *committer, zoneID string, batch []*pendingUpdate) {
	defer func() {
		if p := recover(); p != nil {
			s.metrics.panics.Inc()
			s.log.Error("update: panic in the zone's committer", "zone", zoneID, "panic", p)
			zc.base = nil
			for _, u := range batch {
				u.rf, u.outcome = refuse(rcodeServFail, edeOther, "internal error"), "failed"
			}
		}
	}()
	s.commitBatch(zc, zoneID, batch)
}

// nextBatch takes from the queue the updates signed with the key of the
// first, in order, at most maxBatch; the others stay queued in order.
// Updates of different keys come from different clients, so any order
// between them is one they could have arrived in.
func nextBatch(q *[]*pendingUpdate) []*pendingUpdate {
	if len(*q) == 0 {
		return nil
	}
	key := (*q)[0].key.Name
	var batch, rest []*pendingUpdate
	for _, p := range *q {
		if p.key.Name == key && len(batch) < maxBatch {
			batch = append(batch, p)
		} else {
			rest = append(rest, p)
		}
	}
	*q = rest
	return batch
}

// commitBatch applies batch to the zone and writes it, retrying a stale
// write from the start until the updates' time is up; it sets each
// update's outcome.
func (s *Server) commitBatch(zc *committer, zoneID string, batch []*pendingUpdate) {
	for attempt := 1; ; attempt++ {
		now := time.Now()
		live := batch[:0:0]
		for _, p := range batch {
			if now.After(p.deadline) {
				p.rf = refuse(rcodeServFail, edeOther, "the update waited too long for the ones before it; try again")
				s.log.Warn("update: not applied in time", "zone", zoneID, "key", p.key.Name, "attempts", attempt)
				p.outcome = "timeout"
				continue
			}
			live = append(live, p)
		}
		if len(live) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), updateTimeout)
		stale := s.commitOnce(ctx, zc, zoneID, live)
		cancel()
		if !stale {
			return
		}
		s.metrics.updateRetries.Inc()
		s.log.Debug("update: zone changed by another writer; applying the batch again", "zone", zoneID, "updates", len(live), "attempt", attempt)
	}
}

// commitOnce applies batch to the zone as the committer knows it (read
// from the store if it does not) and writes it. It reports stale when
// another writer got in first; the outcomes are then unset.
func (s *Server) commitOnce(ctx context.Context, zc *committer, zoneID string, batch []*pendingUpdate) (stale bool) {
	setAll := func(rf *refusal) {
		for _, p := range batch {
			p.rf, p.outcome = rf, "failed"
		}
	}
	lv := s.live.Load()
	z := lv.snap.zones[string(zc.apex)]
	if z == nil || z.id != zoneID {
		setAll(refuse(rcodeNotAuth, edeNotAuthoritative, "%s is no longer a zone served here", wireString(zc.apex)))
		return false
	}
	st := s.cfg.Updates
	if zc.base == nil {
		o, err := st.Get(ctx, pools.KindZone, zoneID)
		if err != nil {
			s.log.Warn("update: read zone", "zone", zoneID, "err", err)
			setAll(refuse(rcodeServFail, edeOther, "the store did not answer"))
			return false
		}
		pz := o.(*pools.Zone)
		recs, err := parseRecords(pz)
		if err != nil {
			s.log.Error("update: the zone holds a record an UPDATE cannot read; refused", "zone", zoneID, "err", err)
			setAll(refuse(rcodeServFail, edeOther, "the zone holds a record this server cannot read: %v", err))
			return false
		}
		zc.base = &zoneBase{pz: pz, recs: recs}
	}
	base := zc.base
	zs := newZoneState(base.pz, base.recs, z)
	var applied []*pendingUpdate
	for _, p := range batch {
		p.rf = zs.check(p.req, p.key, zoneID)
		switch {
		case p.rf != nil:
			p.outcome = "refused"
		case zs.apply(p.req.Ns):
			p.outcome = "applied"
			applied = append(applied, p)
		default:
			p.outcome = "unchanged"
		}
	}
	if len(applied) == 0 {
		return false // nothing changed: no write, no serial (§3.4.2.7)
	}
	change := zs.change(len(base.recs))
	if len(change.Removed) == 0 && len(change.Added) == 0 {
		return false // added and removed again within the batch
	}
	key := batch[0].key.Name
	wctx := pools.WithCaller(ctx, pools.Caller{Actor: pools.ActorTSIGPrefix + key, Method: pools.MethodDNSUpdate})
	stored, err := st.UpdateRecords(wctx, zoneID, base.pz.Revision, change)
	var ve *pools.ValidationError
	switch {
	case err == nil:
		zc.base = &zoneBase{pz: stored, recs: zs.kept()}
		s.metrics.updateWrites.Inc()
		s.log.Info("zone updated", "zone", stored.Name, "key", key, "updates", len(applied), "revision", stored.Revision)
		return false
	case errors.Is(err, pools.ErrStale):
		zc.base = nil
		return true
	case errors.As(err, &ve) && len(batch) > 1:
		// The store refuses what the updates made together: apply and
		// write each alone, in order, so that only the one at fault is
		// refused and each is checked against what the others left.
		for _, p := range batch {
			s.commitBatch(zc, zoneID, []*pendingUpdate{p})
		}
		return false
	case errors.As(err, &ve):
		applied[0].rf, applied[0].outcome = refuse(rcodeRefused, edeOther, "%s", ve.Error()), "refused"
		return false
	default:
		zc.base = nil
		s.log.Warn("update: write zone", "zone", base.pz.Name, "err", err)
		for _, p := range applied {
			p.rf, p.outcome = refuse(rcodeServFail, edeOther, "the store did not answer"), "failed"
		}
		return false
	}
}

// check checks one update's prerequisites and update section against the
// zone as it is now.
func (zs *zoneState) check(req *dns.Msg, key *pools.TSIGKey, zoneID string) *refusal {
	if rf := zs.prerequisites(req.Answer); rf != nil {
		return rf
	}
	return zs.prescan(req.Ns, key, zoneID)
}
