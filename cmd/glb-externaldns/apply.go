package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/glb-dns/glb/pools"
)

// setKey is one cluster's share of a load-balanced name.
type setKey struct{ name, setID string }

// setChange is what a plan asks of one set: per record type (A, AAAA) the
// endpoint wanted, or nil for "none any more". Types the plan does not
// mention keep what glb has.
type setChange struct {
	key   setKey
	types map[string]*endpoint
}

type recKey struct{ name, typ string }

// writeAttempts bounds how often one object is read again and rewritten
// after another writer (another cluster, an operator) moved its revision.
const writeAttempts = 20

// workers is how many sets are written at once: the writes are small and
// the time goes to round trips and commits, which glb's stores share
// between concurrent writes.
const workers = 32

// ApplyChanges makes glb hold what the plan asks, changing only what this
// owner made. Each set (name, set identifier) is applied on its own, so
// that one refused endpoint does not hold back the others; the errors of
// all come back together.
func (p *provider) ApplyChanges(ctx context.Context, ch *changes) error {
	sets := map[setKey]*setChange{}
	recs := map[recKey]*endpoint{}
	var errs []error
	note := func(eps []*endpoint, keep bool) {
		for _, e := range eps {
			if e == nil {
				continue
			}
			name := canonicalName(e.DNSName)
			typ := strings.ToUpper(e.RecordType)
			want := e
			if !keep {
				want = nil
			}
			if e.SetIdentifier == "" {
				recs[recKey{name, typ}] = want
				continue
			}
			if typ != "A" && typ != "AAAA" {
				if keep {
					errs = append(errs, fmt.Errorf("%s %s (set %s): only A and AAAA records are load-balanced; run ExternalDNS with --registry=noop, glb keeps the ownership", name, typ, e.SetIdentifier))
				}
				continue
			}
			k := setKey{name, e.SetIdentifier}
			sc := sets[k]
			if sc == nil {
				sc = &setChange{key: k, types: map[string]*endpoint{}}
				sets[k] = sc
			}
			sc.types[typ] = want
		}
	}
	// Removals first, so that a record both removed and wanted (an update)
	// ends wanted.
	note(ch.Delete, false)
	note(ch.UpdateOld, false)
	note(ch.Create, true)
	note(ch.UpdateNew, true)

	start := time.Now()
	var w writes
	if len(sets) > 0 {
		st, err := p.load(ctx)
		if err != nil {
			return err
		}
		queue := make(chan *setChange)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range min(workers, len(sets)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for sc := range queue {
					if err := p.applySet(ctx, st, sc, &w); err != nil {
						mu.Lock()
						errs = append(errs, fmt.Errorf("%s (set %s): %w", sc.key.name, sc.key.setID, err))
						mu.Unlock()
					}
				}
			}()
		}
		keys := make([]setKey, 0, len(sets))
		for k := range sets {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b setKey) int { return strings.Compare(a.name+"\x00"+a.setID, b.name+"\x00"+b.setID) })
		for _, k := range keys {
			queue <- sets[k]
		}
		close(queue)
		wg.Wait()
	}
	if len(recs) > 0 {
		if err := p.applyRecords(ctx, recs, &w); err != nil {
			errs = append(errs, fmt.Errorf("static records: %w", err))
		}
	}
	p.log.Info("applied changes", "sets", len(sets), "records", len(recs), "writes", w.n.Load(),
		"retries", w.retries.Load(), "errors", len(errs), "took", time.Since(start).Round(time.Millisecond))
	return errors.Join(errs...)
}

// writes counts what one ApplyChanges wrote, for its log line.
type writes struct{ n, retries atomic.Int64 }

// target is where a set's origins go and how, from its endpoints'
// properties.
type target struct {
	poolID  string
	monitor string
	// monitorGiven says the endpoint named the monitor (glb-monitor).
	monitorGiven bool
	region       string
	weight       float64
	ttl          uint32
}

func (p *provider) targetOf(sc *setChange, cur *glbPool) (target, error) {
	t := target{poolID: poolIDFor(p.owner, sc.key.name, sc.key.setID), monitor: p.monitor, weight: 1}
	var given *endpoint
	for _, typ := range []string{"A", "AAAA"} {
		if e := sc.types[typ]; e != nil {
			given = e
			break
		}
	}
	if given == nil {
		// Only removals: the origins stay where they are, under the
		// monitor they have.
		if cur != nil {
			t.poolID, t.monitor = cur.ID, cur.Monitor
		}
		return t, nil
	}
	var bad []string
	for _, pr := range given.ProviderSpecific {
		switch pr.Name {
		case propPool:
			if !validID(pr.Value) {
				bad = append(bad, fmt.Sprintf("%s %q: a pool id is 1 to 64 letters, digits, - or _", pr.Name, pr.Value))
			} else {
				t.poolID = pr.Value
			}
		case propMonitor:
			t.monitor, t.monitorGiven = pr.Value, true
		case propRegion:
			if !pools.IsRegion(pr.Value) {
				bad = append(bad, fmt.Sprintf("%s %q: one of %s", pr.Name, pr.Value, strings.Join(pools.Regions, ", ")))
			} else {
				t.region = pr.Value
			}
		case propWeight:
			w, err := strconv.ParseFloat(pr.Value, 64)
			if err != nil || w < 0 || w > 1 {
				bad = append(bad, fmt.Sprintf("%s %q: a number in [0, 1]", pr.Name, pr.Value))
			} else {
				t.weight = w
			}
		default:
			if strings.HasPrefix(pr.Name, "webhook/glb-") {
				bad = append(bad, fmt.Sprintf("unknown property %s (annotation external-dns.alpha.kubernetes.io/webhook-%s): glb reads glb-pool, glb-monitor, glb-region and glb-weight",
					pr.Name, strings.TrimPrefix(pr.Name, "webhook/")))
			}
		}
	}
	if given.RecordTTL > 0 {
		t.ttl = uint32(min(given.RecordTTL, 86400))
	}
	if len(bad) > 0 {
		return t, errors.New(strings.Join(bad, "; "))
	}
	return t, nil
}

// checkMonitor refuses a monitor glb does not have, and a glb-monitor
// for a pool an operator made (its monitors are the operator's), rather
// than make a pool that is never checked or drop the annotation unsaid.
func (p *provider) checkMonitor(st *state, t target) error {
	if t.monitor == "" {
		return nil
	}
	from := "--monitor"
	if t.monitorGiven {
		from = propMonitor + " (annotation external-dns.alpha.kubernetes.io/webhook-glb-monitor)"
	}
	if !slices.Contains(st.monitors, t.monitor) {
		known := "glb has none"
		if len(st.monitors) > 0 {
			known = "glb has " + strings.Join(st.monitors, ", ")
		}
		return fmt.Errorf("%s %q: no such monitor (%s)", from, t.monitor, known)
	}
	if pl := st.pool(t.poolID); t.monitorGiven && pl != nil && pl.Owner != p.tag() {
		return fmt.Errorf("%s %q: pool %s was made by someone else (owner %q), whose monitors are theirs; drop the annotation, or let the cluster have a pool of its own", from, t.monitor, pl.ID, pl.Owner)
	}
	return nil
}

func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// currentPool finds the pool holding this owner's origins for the set,
// among the default pools of the name's load balancer.
func (p *provider) currentPool(st *state, k setKey) *glbPool {
	lb := st.lb(k.name)
	if lb == nil {
		return nil
	}
	for _, id := range lb.DefaultPools {
		if pl := st.pool(id); pl != nil && slices.Contains(p.setIDsIn(pl), k.setID) {
			return pl
		}
	}
	return nil
}

// applySet brings one set's origins, pool and load balancer membership
// to what the plan asks.
func (p *provider) applySet(ctx context.Context, st *state, sc *setChange, w *writes) error {
	cur := p.currentPool(st, sc.key)
	t, err := p.targetOf(sc, cur)
	if err != nil {
		return err
	}
	if err := p.checkMonitor(st, t); err != nil {
		return err
	}
	have := ours{weight: 1}
	if cur != nil {
		have = p.oursIn(cur, sc.key.setID)
	}
	want := have
	for typ, e := range sc.types {
		var addrs []string
		if e != nil {
			if addrs, err = addresses(typ, e.Targets); err != nil {
				return err
			}
		}
		if typ == "A" {
			want.v4 = addrs
		} else {
			want.v6 = addrs
		}
	}
	if len(want.v4)+len(want.v6) > pools.MaxOriginsPerPool {
		return fmt.Errorf("%d targets: a pool holds at most %d origins", len(want.v4)+len(want.v6), pools.MaxOriginsPerPool)
	}
	want.weight = t.weight
	empty := len(want.v4)+len(want.v6) == 0

	// The set moves pools when its glb-pool changed: its origins leave the
	// old pool once they are in the new one.
	if cur != nil && cur.ID != t.poolID {
		if !empty {
			if err := p.writePool(ctx, st, sc.key, t, want, w); err != nil {
				return err
			}
			if err := p.joinLB(ctx, st, sc.key.name, t, w); err != nil {
				return err
			}
		}
		return p.writePool(ctx, st, sc.key, target{poolID: cur.ID, monitor: cur.Monitor, weight: 1}, ours{}, w)
	}
	if err := p.writePool(ctx, st, sc.key, t, want, w); err != nil {
		return err
	}
	if empty {
		return nil
	}
	return p.joinLB(ctx, st, sc.key.name, t, w)
}

// addresses checks that each target is an address of the record's family.
func addresses(typ string, targets []string) ([]string, error) {
	var out []string
	for _, s := range targets {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Is4() != (typ == "A") || a.Zone() != "" {
			return nil, fmt.Errorf("%s target %q is not an IPv%s address", typ, s, map[bool]string{true: "4", false: "6"}[typ == "A"])
		}
		s = a.String()
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}

// writePool makes the pool hold want as this owner's origins for the set,
// beside everyone else's, creating the pool when it is missing and
// deleting it when it is this owner's and left empty (after leaving the
// load balancer, which must not refer to it then).
func (p *provider) writePool(ctx context.Context, st *state, k setKey, t target, want ours, w *writes) error {
	tag := p.tag()
	empty := len(want.v4)+len(want.v6) == 0
	return retry(w, "pool "+t.poolID, func(again bool) (stale bool, err error) {
		if again {
			pl, err := p.cl.pool(ctx, t.poolID)
			if statusOf(err) == http.StatusNotFound {
				pl, err = nil, nil
			}
			if err != nil {
				return false, err
			}
			st.setPool(t.poolID, pl)
		}
		pl := st.pool(t.poolID)
		if pl == nil {
			if empty {
				return false, nil
			}
			body := map[string]any{
				"id": t.poolID, "name": k.name + " " + k.setID, "owner": tag,
				"description": fmt.Sprintf("ExternalDNS endpoints of %s from cluster %s (set identifier %s)", k.name, p.owner, k.setID),
				"origins":     p.originDocs(nil, k.setID, want),
			}
			if t.monitor != "" {
				body["monitor"] = t.monitor
			}
			var made glbPool
			err := p.cl.do(ctx, http.MethodPost, prefix+"/pools", body, 0, &made)
			if statusOf(err) == http.StatusConflict {
				return true, nil // made meanwhile (a retry of ours): read it and update
			}
			if err != nil {
				return false, err
			}
			w.n.Add(1)
			st.setPool(t.poolID, &made)
			return false, nil
		}
		origins := p.originDocs(pl, k.setID, want)
		if len(origins) == 0 {
			if pl.Owner != tag {
				return false, fmt.Errorf("pool %s holds only this cluster's origins but was made by someone else (owner %q): glb keeps at least one origin in a pool, remove the pool there", pl.ID, pl.Owner)
			}
			if err := p.leaveLB(ctx, st, k.name, pl.ID, w); err != nil {
				return false, err
			}
			if stale, err := p.remove(ctx, objectPath("pools", pl.ID), pl.Revision); stale || err != nil {
				return stale, err
			}
			w.n.Add(1)
			st.setPool(pl.ID, nil)
			return false, nil
		}
		patch := map[string]any{}
		if !sameDocs(pl.Origins, origins) {
			patch["origins"] = origins
		}
		if pl.Owner == tag && pl.Monitor != t.monitor && !empty {
			if t.monitor == "" {
				patch["monitor"] = nil
			} else {
				patch["monitor"] = t.monitor
			}
		}
		return patchIn(ctx, p, "pools", pl.ID, pl.Revision, patch, w, func(out *glbPool) { st.setPool(pl.ID, out) })
	})
}

// originDocs is the pool's new origin list: everyone else's as they are,
// then this owner's for the set, an origin that stays keeping what an
// operator set on it (enabled, zone, header).
func (p *provider) originDocs(pl *glbPool, setID string, want ours) []map[string]any {
	tag := p.tag()
	out := []map[string]any{}
	mine := map[string]map[string]any{}
	if pl != nil {
		for _, raw := range pl.Origins {
			var doc map[string]any
			var og glbOrigin
			if json.Unmarshal(raw, &doc) != nil || json.Unmarshal(raw, &og) != nil {
				continue
			}
			if sid, _, ok := parseOriginName(og.Name); ok && og.Owner == tag && sid == setID {
				mine[og.Name] = doc
				continue
			}
			out = append(out, doc)
		}
	}
	for _, addr := range append(slices.Clone(want.v4), want.v6...) {
		name := originName(setID, addr)
		doc := mine[name]
		if doc == nil {
			doc = map[string]any{"name": name, "address": addr}
		}
		doc["weight"] = want.weight
		doc["owner"] = tag
		out = append(out, doc)
	}
	return out
}

// sameDocs compares lists of JSON objects by value (key order and number
// spelling aside).
func sameDocs(raws []json.RawMessage, docs []map[string]any) bool {
	if len(raws) != len(docs) {
		return false
	}
	for i, raw := range raws {
		var a any
		if json.Unmarshal(raw, &a) != nil {
			return false
		}
		ab, _ := json.Marshal(a)
		b, _ := json.Marshal(docs[i])
		var bb any
		_ = json.Unmarshal(b, &bb)
		b, _ = json.Marshal(bb)
		if string(ab) != string(b) {
			return false
		}
	}
	return true
}

// joinLB puts the pool into the name's load balancer: at the end of its
// default pools, and of its region's list with glb-region. Without a load
// balancer it makes one of this pool, which later clusters join. The rest
// of the load balancer (steering, fallback, order, TTL) is the operator's;
// in one the provider made, it sets the TTL an endpoint asks for.
func (p *provider) joinLB(ctx context.Context, st *state, name string, t target, w *writes) error {
	return p.retryLB(ctx, st, name, w, func(lb *glbLB, attempt int) (stale bool, err error) {
		if lb == nil {
			body := map[string]any{
				"id": lbIDFor(name), "zone": p.zoneID, "name": name, "owner": lbOwner,
				"description":   "made by glb-externaldns for the Kubernetes clusters publishing " + name,
				"default_pools": []string{t.poolID}, "fallback_pool": t.poolID,
			}
			if t.region != "" {
				body["region_pools"] = map[string][]string{t.region: {t.poolID}}
			}
			if t.ttl > 0 {
				body["ttl"] = t.ttl
			}
			var made glbLB
			err := p.cl.do(ctx, http.MethodPost, prefix+"/load_balancers", body, 0, &made)
			if s := statusOf(err); s == http.StatusConflict || s == http.StatusBadRequest && attempt == 0 {
				// Another cluster made it meanwhile (same id, or the name
				// taken): read it and join. A 400 that is not that shows
				// again on the next attempt and is returned then.
				return true, nil
			}
			if err != nil {
				return false, err
			}
			w.n.Add(1)
			st.setLB(name, &made)
			return false, nil
		}
		patch := map[string]any{}
		if !slices.Contains(lb.DefaultPools, t.poolID) {
			patch["default_pools"] = append(slices.Clone(lb.DefaultPools), t.poolID)
		}
		regions := map[string]any{}
		for r, ids := range lb.RegionPools {
			if r != t.region && slices.Contains(ids, t.poolID) {
				rest := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == t.poolID })
				if len(rest) == 0 {
					regions[r] = nil
				} else {
					regions[r] = rest
				}
			}
		}
		if t.region != "" && !slices.Contains(lb.RegionPools[t.region], t.poolID) {
			regions[t.region] = append(slices.Clone(lb.RegionPools[t.region]), t.poolID)
		}
		if len(regions) > 0 {
			patch["region_pools"] = regions
		}
		if lb.Owner == lbOwner && t.ttl > 0 && lb.TTL != t.ttl {
			patch["ttl"] = t.ttl
		}
		return p.patchLB(ctx, st, lb, patch, w)
	})
}

// leaveLB takes the pool out of every list of the name's load balancer.
// A load balancer the provider made and no pool is left in is deleted;
// its fallback, when it was this pool, becomes the first pool left. An
// operator's load balancer keeps its fallback: when that is this pool, or
// this is its last pool, the provider says so and changes nothing.
func (p *provider) leaveLB(ctx context.Context, st *state, name, poolID string, w *writes) error {
	return p.retryLB(ctx, st, name, w, func(lb *glbLB, _ int) (stale bool, err error) {
		if lb == nil {
			return false, nil
		}
		without := func(ids []string) []string {
			return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == poolID })
		}
		patch := map[string]any{}
		dp := without(lb.DefaultPools)
		if len(dp) != len(lb.DefaultPools) {
			patch["default_pools"] = dp
		}
		for field, lists := range map[string]map[string][]string{"region_pools": lb.RegionPools, "country_pools": lb.CountryPools} {
			m := map[string]any{}
			for code, ids := range lists {
				if rest := without(ids); len(rest) != len(ids) {
					if len(rest) == 0 {
						m[code] = nil
					} else {
						m[code] = rest
					}
				}
			}
			if len(m) > 0 {
				patch[field] = m
			}
		}
		if _, ok := lb.RandomSteering.PoolWeights[poolID]; ok {
			patch["random_steering"] = map[string]any{"pool_weights": map[string]any{poolID: nil}}
		}
		mine := lb.Owner == lbOwner
		if len(dp) == 0 {
			if !mine {
				return false, fmt.Errorf("pool %s is the last default pool of load balancer %s, which was made by hand: remove it there", poolID, lb.ID)
			}
			if stale, err := p.remove(ctx, objectPath("load_balancers", lb.ID), lb.Revision); stale || err != nil {
				return stale, err
			}
			w.n.Add(1)
			st.setLB(name, nil)
			return false, nil
		}
		if lb.FallbackPool == poolID {
			if !mine {
				return false, fmt.Errorf("pool %s is the fallback pool of load balancer %s, which was made by hand: choose another fallback there", poolID, lb.ID)
			}
			patch["fallback_pool"] = dp[0]
		}
		return p.patchLB(ctx, st, lb, patch, w)
	})
}

// retry runs step until it is done or fails, at most writeAttempts times:
// step says stale when another writer (another cluster, an operator) moved
// the object's revision since it was read, and reads it again when told
// again.
func retry(w *writes, what string, step func(again bool) (stale bool, err error)) error {
	for attempt := 0; attempt < writeAttempts; attempt++ {
		if attempt > 0 {
			w.retries.Add(1)
		}
		stale, err := step(attempt > 0)
		if !stale || err != nil {
			return err
		}
	}
	return fmt.Errorf("%s: still changed by someone else after %d attempts", what, writeAttempts)
}

// retryLB is retry over the name's load balancer (nil when it has none),
// read again before each new attempt.
func (p *provider) retryLB(ctx context.Context, st *state, name string, w *writes, step func(lb *glbLB, attempt int) (stale bool, err error)) error {
	attempt := 0
	return retry(w, "load balancer "+name, func(again bool) (bool, error) {
		if again {
			attempt++
			if err := p.refreshLB(ctx, st, name); err != nil {
				return false, err
			}
		}
		return step(st.lb(name), attempt)
	})
}

func (p *provider) patchLB(ctx context.Context, st *state, lb *glbLB, patch map[string]any, w *writes) (stale bool, err error) {
	return patchIn(ctx, p, "load_balancers", lb.ID, lb.Revision, patch, w, func(out *glbLB) { st.setLB(lb.Name, out) })
}

// patchIn writes a merge patch of an object over the revision read, and
// keeps what glb answers with; stale when someone wrote meanwhile (412)
// or deleted it (404), to read it again. An empty patch writes nothing.
func patchIn[T any](ctx context.Context, p *provider, kind, id string, rev int64, patch map[string]any, w *writes, keep func(*T)) (stale bool, err error) {
	if len(patch) == 0 {
		return false, nil
	}
	var out T
	err = p.cl.do(ctx, http.MethodPatch, objectPath(kind, id), patch, rev, &out)
	if isStale(err) || statusOf(err) == http.StatusNotFound {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	w.n.Add(1)
	keep(&out)
	return false, nil
}

// refreshLB reads the name's load balancer again: by id when known, else
// by listing (someone may have made it under another id).
func (p *provider) refreshLB(ctx context.Context, st *state, name string) error {
	if lb := st.lb(name); lb != nil {
		got, err := p.cl.loadBalancer(ctx, lb.ID)
		if err == nil {
			st.setLB(name, got)
			return nil
		}
		if statusOf(err) != http.StatusNotFound {
			return err
		}
	}
	lbs, err := p.loadLBs(ctx)
	if err != nil {
		return err
	}
	st.setLB(name, lbs[name])
	return nil
}

// applyRecords makes the zone's static records of this owner for the
// names and types planned hold the plan's targets, leaving every other
// record as it is. The zone is one object, written with If-Match and
// rewritten from a fresh read when another writer got there first.
func (p *provider) applyRecords(ctx context.Context, recs map[recKey]*endpoint, w *writes) error {
	tag := p.tag()
	return retry(w, "zone "+p.zoneID, func(bool) (stale bool, err error) {
		z, err := p.cl.zone(ctx, p.zoneID)
		if err != nil {
			return false, err
		}
		var keep []json.RawMessage
		var had []string
		for _, raw := range z.Records {
			var r glbRecord
			if json.Unmarshal(raw, &r) == nil && r.Owner == tag {
				if _, planned := recs[recKey{canonicalName(r.Name), strings.ToUpper(r.Type)}]; planned {
					had = append(had, recordLine(r))
					continue
				}
			}
			keep = append(keep, raw)
		}
		var add []glbRecord
		var now []string
		for k, e := range recs {
			if e == nil {
				continue
			}
			for _, c := range e.Targets {
				r := glbRecord{Name: k.name, Type: k.typ, Content: c, Owner: tag}
				if e.RecordTTL > 0 {
					r.TTL = uint32(min(e.RecordTTL, 1<<31))
				}
				add = append(add, r)
				now = append(now, recordLine(r))
			}
		}
		slices.Sort(had)
		slices.Sort(now)
		if slices.Equal(had, now) {
			return false, nil
		}
		slices.SortFunc(add, func(a, b glbRecord) int { return strings.Compare(recordLine(a), recordLine(b)) })
		records := make([]any, 0, len(keep)+len(add))
		for _, raw := range keep {
			records = append(records, raw)
		}
		for _, r := range add {
			records = append(records, r)
		}
		return patchIn(ctx, p, "zones", p.zoneID, z.Revision, map[string]any{"records": records}, w, func(*glbZone) {})
	})
}

func recordLine(r glbRecord) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%d", canonicalName(r.Name), strings.ToUpper(r.Type), r.Content, r.TTL)
}
