package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/glb-dns/glb/pools"
)

// access is what a zone-scoped token may do with one object.
type access int

const (
	accessNone  access = iota
	accessRead         // used by its zones and another's: read-only
	accessWrite        // its zones' own, or used by none
)

// scopeIndex is who uses what in one configuration: what zone-scoped
// tokens are judged by. It is shared by every token and request at its
// revision, never changed.
type scopeIndex struct {
	cfg *pools.Config
	// lbZone is each load balancer's zone; users are the zones of the
	// load balancers using each pool and monitor.
	lbZone                   map[string]string
	poolUsers, monitorUsers  map[string][]string
	zoneIDs, pools, monitors map[string]bool
}

func newScopeIndex(cfg *pools.Config) *scopeIndex {
	x := &scopeIndex{cfg: cfg, lbZone: make(map[string]string, len(cfg.LoadBalancers)),
		poolUsers: make(map[string][]string, len(cfg.Pools)), monitorUsers: map[string][]string{},
		zoneIDs: make(map[string]bool, len(cfg.Zones)), pools: make(map[string]bool, len(cfg.Pools)),
		monitors: make(map[string]bool, len(cfg.Monitors))}
	add := func(m map[string][]string, id, zone string) {
		if !slices.Contains(m[id], zone) {
			m[id] = append(m[id], zone)
		}
	}
	for _, z := range cfg.Zones {
		x.zoneIDs[z.ID] = true
	}
	for _, m := range cfg.Monitors {
		x.monitors[m.ID] = true
	}
	for _, l := range cfg.LoadBalancers {
		x.lbZone[l.ID] = l.Zone
		for _, ref := range l.PoolRefs() {
			add(x.poolUsers, ref.Pool, l.Zone)
		}
	}
	for i := range cfg.Pools {
		p := &cfg.Pools[i]
		x.pools[p.ID] = true
		for _, zone := range x.poolUsers[p.ID] {
			if p.Monitor != "" {
				add(x.monitorUsers, p.Monitor, zone)
			}
			for _, m := range p.Monitors {
				add(x.monitorUsers, m.Monitor, zone)
			}
		}
	}
	return x
}

// scopeViews keeps the latest scopeIndex, brought up to date at each
// request by the change feed: a request of a zone-scoped token is judged
// by the configuration as stored when it arrives, at the cost of the
// changes since the last one, not of the whole estate.
type scopeViews struct {
	mu  sync.Mutex
	cur *scopeIndex
}

func (v *scopeViews) at(ctx context.Context, store pools.Store) (*scopeIndex, error) {
	v.mu.Lock()
	cur := v.cur
	v.mu.Unlock()
	var cfg *pools.Config
	if cur != nil {
		cs, err := store.Changes(ctx, cur.cfg.Revision)
		switch {
		case errors.Is(err, pools.ErrChangeGap):
		case err != nil:
			return nil, err
		case cs.Revision == cur.cfg.Revision:
			return cur, nil
		default:
			cfg, _ = cur.cfg.Apply(cs) // nil on a gap: read it all
		}
	}
	if cfg == nil {
		var err error
		if cfg, err = store.Config(ctx); err != nil {
			return nil, err
		}
	}
	x := newScopeIndex(cfg)
	v.mu.Lock()
	if v.cur == nil || v.cur.cfg.Revision < cfg.Revision {
		v.cur = x
	}
	v.mu.Unlock()
	return x, nil
}

// zoneScope is what a token scoped to zones reaches in one configuration:
// the zones themselves, their load balancers, and the pools and monitors
// those use. A pool or monitor is writable when every load balancer using
// it is in the token's zones, read-only when some are elsewhere, and
// unreachable when none is in them. One that no load balancer uses serves
// no name, so it is no zone's: the token may use it (it creates its pools
// before the load balancer that uses them, and deletes them after).
type zoneScope struct {
	token string
	zones []string
	*scopeIndex
}

// usedBy is the access to an object used by the load balancers of users.
func (z *zoneScope) usedBy(users []string) access {
	mine := 0
	for _, u := range users {
		if slices.Contains(z.zones, u) {
			mine++
		}
	}
	switch {
	case mine == len(users):
		return accessWrite
	case mine > 0:
		return accessRead
	}
	return accessNone
}

// of is the token's access to the object (k, id) as it is stored.
func (z *zoneScope) of(k pools.Kind, id string) access {
	switch k {
	case pools.KindZone:
		if slices.Contains(z.zones, id) {
			return accessWrite
		}
	case pools.KindLoadBalancer:
		if zone, ok := z.lbZone[id]; ok && slices.Contains(z.zones, zone) {
			return accessWrite
		}
	case pools.KindPool:
		return z.usedBy(z.poolUsers[id])
	case pools.KindMonitor:
		return z.usedBy(z.monitorUsers[id])
	}
	return accessNone
}

// exists reports whether (k, id) is stored.
func (z *zoneScope) exists(k pools.Kind, id string) bool {
	switch k {
	case pools.KindZone:
		return z.zoneIDs[id]
	case pools.KindLoadBalancer:
		_, ok := z.lbZone[id]
		return ok
	case pools.KindPool:
		return z.pools[id]
	case pools.KindMonitor:
		return z.monitors[id]
	}
	return false
}

// forbidden is the 403 of a zone-scoped token reaching beyond its zones.
func (z *zoneScope) forbidden(detail string) *Problem {
	p := newProblem(http.StatusForbidden, fmt.Sprintf("token %s is scoped to zone(s) %s: %s", z.token, strings.Join(z.zones, ", "), detail))
	p.Type, p.Title = problemOutOfZone, "Outside the token's zones"
	return p
}

// Problem type of a zone-scoped token reaching beyond its zones.
const problemOutOfZone = "urn:glb:problem:outside-zones"

// scopedKinds are the kinds a zone-scoped token reaches.
var scopedKinds = []pools.Kind{pools.KindZone, pools.KindLoadBalancer, pools.KindPool, pools.KindMonitor}

// zoneScoped wraps the API for a token scoped to zones: only zones, load
// balancers, pools and monitors, each as zoneScope allows; lists show only
// what the token may read; everything else is 403.
func (s *server) zoneScoped(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g, _ := r.Context().Value(grantKey{}).(grant)
		kind, id, sub := splitScopedPath(r.URL.Path)
		if kind == "" {
			z := &zoneScope{token: g.token, zones: g.zones}
			s.writeError(w, r, z.forbidden("it reaches only their zones, load balancers, pools and monitors"))
			return
		}
		x, err := s.scopes.at(r.Context(), s.Store)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		z := &zoneScope{token: g.token, zones: g.zones, scopeIndex: x}
		read := r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions ||
			(r.Method == http.MethodPost && isPreview(r.URL.Path))
		if id == "" && read {
			s.scopedList(w, r, z, kind)
			return
		}
		if id != "" {
			if err := z.checkStored(kind, id, sub, read); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		preview := r.Method == http.MethodPost && isPreview(r.URL.Path)
		if (!read && sub == "" && r.Method != http.MethodDelete) || preview {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			check := z.checkWritten
			if preview {
				check = z.checkPreview
			}
			if err := check(kind, id, body); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// splitScopedPath splits /api/v1/KIND[/ID[/SUB...]] for the kinds a
// zone-scoped token reaches; kind "" for any other path.
func splitScopedPath(p string) (kind pools.Kind, id, sub string) {
	rest, ok := strings.CutPrefix(p, Prefix+"/")
	if !ok {
		return "", "", ""
	}
	k, rest, _ := strings.Cut(rest, "/")
	if !slices.Contains(scopedKinds, pools.Kind(k)) {
		return "", "", ""
	}
	id, sub, _ = strings.Cut(rest, "/")
	return pools.Kind(k), id, sub
}

// checkStored checks the token's access to the stored object (k, id) for
// a read or a write (of it, or through its sub-resource sub). A missing
// object is for the handler to answer (404), except that a zone-scoped
// token may only create zones it is scoped to.
func (z *zoneScope) checkStored(k pools.Kind, id, sub string, read bool) error {
	if k == pools.KindLoadBalancer && strings.HasPrefix(sub, "versions/") && strings.HasSuffix(sub, "/rollback") {
		// A version's rollback writes the pools of that version too,
		// whoever uses them now.
		return z.forbidden("rolling back to a version writes pools beyond the load balancer; ask a token not scoped to zones")
	}
	if !z.exists(k, id) && k != pools.KindZone {
		return nil
	}
	a := z.of(k, id)
	switch {
	case a == accessNone:
		return z.forbidden(fmt.Sprintf("%s %s is not one of theirs or used by their load balancers", k.Singular(), id))
	case a == accessRead && !read:
		return z.forbidden(fmt.Sprintf("%s %s is read-only to it: load balancers of other zones use it too (%s)",
			k.Singular(), id, strings.Join(z.otherUsers(k, id), ", ")))
	}
	return nil
}

// otherUsers are the zones outside the token's that use (k, id).
func (z *zoneScope) otherUsers(k pools.Kind, id string) []string {
	users := z.poolUsers[id]
	if k == pools.KindMonitor {
		users = z.monitorUsers[id]
	}
	var out []string
	for _, u := range users {
		if !slices.Contains(z.zones, u) {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// checkWritten checks what a create (id "") or a replace or patch of
// (k, id) writes: a zone must be one of the token's, a load balancer must
// stay in one, and whatever it refers to (a load balancer's pools, a
// pool's monitors) must be readable to the token, so that a reference
// does not reach into another zone's objects. Malformed bodies pass: the
// handler names their faults.
func (z *zoneScope) checkWritten(k pools.Kind, id string, body []byte) error {
	var doc map[string]any
	if json.Unmarshal(body, &doc) != nil {
		return nil
	}
	o := pools.New(k)
	// The body as a partial object: for a patch, the fields it sets.
	if json.Unmarshal(body, o) != nil {
		return nil
	}
	switch v := o.(type) {
	case *pools.Zone:
		if id == "" && !slices.Contains(z.zones, v.ID) {
			return z.forbidden(fmt.Sprintf("a zone it creates must be one of them by id (zone %q)", v.ID))
		}
	case *pools.LoadBalancer:
		if _, set := doc["zone"]; (set || id == "") && !slices.Contains(z.zones, v.Zone) {
			return z.forbidden(fmt.Sprintf("a load balancer it writes must be in one of them (zone %q)", v.Zone))
		}
		for _, ref := range v.PoolRefs() {
			if z.exists(pools.KindPool, ref.Pool) && z.of(pools.KindPool, ref.Pool) == accessNone {
				return z.forbidden(fmt.Sprintf("pool %s is another zone's: a load balancer of theirs may not use it", ref.Pool))
			}
		}
	case *pools.Pool:
		mons := []string{v.Monitor}
		for _, m := range v.Monitors {
			mons = append(mons, m.Monitor)
		}
		for _, m := range mons {
			if z.exists(pools.KindMonitor, m) && z.of(pools.KindMonitor, m) == accessNone {
				return z.forbidden(fmt.Sprintf("monitor %s is another zone's: a pool of theirs may not use it", m))
			}
		}
	}
	return nil
}

// checkPreview checks a preview's edits as writes: a preview stores
// nothing, but it shows the shares and origins of every pool the edited
// load balancer would use, so an edit may name only what the token reads.
func (z *zoneScope) checkPreview(_ pools.Kind, id string, body []byte) error {
	var req struct {
		Edits struct {
			LoadBalancer json.RawMessage            `json:"load_balancer"`
			Pools        map[string]json.RawMessage `json:"pools"`
		} `json:"edits"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	for pid := range req.Edits.Pools {
		if z.exists(pools.KindPool, pid) && z.of(pools.KindPool, pid) == accessNone {
			return z.forbidden(fmt.Sprintf("pool %s is another zone's: a preview may not edit it", pid))
		}
	}
	if len(req.Edits.LoadBalancer) > 0 {
		return z.checkWritten(pools.KindLoadBalancer, id, req.Edits.LoadBalancer)
	}
	return nil
}

// scopedList answers GET of a collection with the objects the token may
// read, paged as the store pages (creation time, then id).
func (s *server) scopedList(w http.ResponseWriter, r *http.Request, z *zoneScope, k pools.Kind) {
	page, err := parsePage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var all []pools.Object
	add := func(o pools.Object) {
		if z.of(k, o.ObjectMeta().ID) != accessNone {
			all = append(all, o)
		}
	}
	switch k {
	case pools.KindZone:
		for i := range z.cfg.Zones {
			add(&z.cfg.Zones[i])
		}
	case pools.KindLoadBalancer:
		for i := range z.cfg.LoadBalancers {
			add(&z.cfg.LoadBalancers[i])
		}
	case pools.KindPool:
		for i := range z.cfg.Pools {
			add(&z.cfg.Pools[i])
		}
	case pools.KindMonitor:
		for i := range z.cfg.Monitors {
			add(&z.cfg.Monitors[i])
		}
	}
	slices.SortFunc(all, func(a, b pools.Object) int {
		ma, mb := a.ObjectMeta(), b.ObjectMeta()
		return cmp.Or(ma.CreatedOn.Compare(mb.CreatedOn), strings.Compare(ma.ID, mb.ID))
	})
	offset, limit := page.Bounds()
	items := all[min(offset, len(all)):min(offset+limit, len(all))]
	if items == nil {
		items = []pools.Object{}
	}
	writeJSON(w, http.StatusOK, list{Result: items, ResultInfo: resultInfo{
		Page: page.Page, PerPage: page.PerPage, Count: len(items), TotalCount: len(all),
		TotalPages: (len(all) + page.PerPage - 1) / page.PerPage,
	}})
}
