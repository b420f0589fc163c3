package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// MaxPreviewClients bounds the sample of one traffic preview: each client
// is one traced decision (a few per pool under random steering).
const MaxPreviewClients = 1000

// PreviewRequest is the body of POST /load_balancers/{id}/preview.
type PreviewRequest struct {
	// Clients is the sample; every client counts alike.
	Clients []PreviewClient `json:"clients"`
	// Type is the query type asked, A (default) or AAAA.
	Type string `json:"type"`
	// Edits are unsaved changes, as merge patches of the stored objects.
	Edits PreviewEdits `json:"edits"`
	// Sample is where the clients come from: "clients" (the default, the
	// list above) or "real", the queries every node sampled in the last
	// hour for this load balancer, each subnet weighted by its queries.
	Sample string `json:"sample,omitempty"`
}

// MaxRealSubnets bounds a real-traffic preview: the subnets that asked
// most, each one traced decision (two with edits, and two more per subnet
// for the moves).
const MaxRealSubnets = 2000

// RealSampleWindow is how far back a real-traffic preview looks.
const RealSampleWindow = time.Hour

// PreviewSample says what a real-traffic preview replayed.
type PreviewSample struct {
	Source string    `json:"source"`
	Since  time.Time `json:"since"`
	// Queries are the sampled queries of the type asked (one in
	// --sample-every of each node's), Subnets their distinct subnets.
	Queries int64 `json:"queries"`
	Subnets int   `json:"subnets"`
	// Left are the queries of the subnets beyond MaxRealSubnets, left
	// out of the shares.
	Left int64 `json:"left"`
}

// PreviewClient is a client subnet, or a region and/or country.
type PreviewClient struct {
	Subnet  string `json:"subnet,omitempty"`
	Region  string `json:"region,omitempty"`
	Country string `json:"country,omitempty"`
}

// PreviewEdits are RFC 7396 merge patches, applied as PATCH applies them.
type PreviewEdits struct {
	// Pools maps a pool id to its patch.
	Pools map[string]map[string]any `json:"pools,omitempty"`
	// LoadBalancer patches the load balancer previewed.
	LoadBalancer map[string]any `json:"load_balancer,omitempty"`
}

// Preview is the answer: the shares of the sample's answers now, and
// after the edits when there are any.
type Preview struct {
	// Revision is the configuration revision of the snapshot served now.
	Revision int64  `json:"revision"`
	Type     string `json:"type"`
	Clients  int    `json:"clients"`
	// UsesECS says whether the load balancer served now locates a query
	// by its ECS subnet (UseECS, as DNS decides), so that a reader knows
	// which clients a place stands for; PreferECS is the setting.
	UsesECS   bool             `json:"uses_ecs"`
	PreferECS string           `json:"prefer_ecs"`
	Now       steering.Shares  `json:"now"`
	After     *steering.Shares `json:"after,omitempty"`
	// Sample is set for a real-traffic preview.
	Sample *PreviewSample `json:"sample,omitempty"`
	// Moves are the shares of the answers the edits move from pool to
	// pool, largest first, and Summary says the largest in words.
	Moves   []steering.PoolMove `json:"moves,omitempty"`
	Summary string              `json:"summary,omitempty"`
}

// preview answers POST /load_balancers/{id}/preview: the share of answers
// each pool and origin gets for a sample of clients, by the decision the
// DNS servers take on the snapshot they serve, and the same with unsaved
// edits compiled beside it. It stores nothing.
func (s *server) preview(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	doc, err := readJSON(w, r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req PreviewRequest
	fes, err := pools.DecodeInto(doc, &req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(fes) > 0 {
		s.writeError(w, r, badRequest("the preview request is malformed", fes...))
		return
	}
	replay := req.Sample == "real"
	if replay {
		// The clients come from the store: let previewSample check the
		// rest against one stand-in client.
		if len(req.Clients) > 0 {
			s.writeError(w, r, badRequest("sample real replays the sampled queries", pools.FieldError{Path: "clients", Message: "give no clients with sample real"}))
			return
		}
		req.Clients = []PreviewClient{{Region: "WEU"}}
	} else if req.Sample != "" && req.Sample != "clients" {
		s.writeError(w, r, badRequest("bad sample", pools.FieldError{Path: "sample", Message: fmt.Sprintf("%q: clients (the default) or real", req.Sample)}))
		return
	}
	sample, qtype, fes := previewSample(&req)
	lbObj, err := s.Store.Get(r.Context(), pools.KindLoadBalancer, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var info *PreviewSample
	if replay {
		if sample, info, err = s.realSample(r.Context(), id, qtype); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	var edits []pools.Object
	if raw, ok := doc["edits"].(map[string]any); ok {
		var efes []pools.FieldError
		edits, efes, err = s.previewEdits(r.Context(), lbObj, raw)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		fes = append(fes, efes...)
	}
	if len(fes) > 0 {
		s.writeError(w, r, badRequest(fmt.Sprintf("%d field(s) at fault", len(fes)), fes...))
		return
	}
	snap, locate, ok := s.served(w, r, "to preview with")
	if !ok {
		return
	}
	now := snap.LoadBalancerByID(id)
	if now == nil {
		s.writeError(w, r, unserved(lbObj.(*pools.LoadBalancer), "id"))
		return
	}
	out := &Preview{Revision: snap.Revision(), Type: qtype.String(), Clients: len(sample),
		UsesECS: now.UseECS(), PreferECS: string(now.PreferECS()),
		Now: snap.Preview(now, sample, qtype, locate), Sample: info}
	if len(edits) > 0 {
		edited, err := snap.With(edits...)
		if err != nil {
			// A reference the store would refuse, found by compiling.
			s.writeError(w, r, badRequest("the edits do not compile", pools.FieldError{Path: "edits", Message: err.Error()}))
			return
		}
		after := edited.LoadBalancerByID(id)
		if after == nil {
			s.writeError(w, r, unserved(lbObj.(*pools.LoadBalancer), "edits.load_balancer.enabled"))
			return
		}
		sh := edited.Preview(after, sample, qtype, locate)
		out.After = &sh
		out.Moves = steering.Moves(snap, now, edited, after, sample, qtype, locate)
		out.Summary = moveSummary(out.Moves, replay)
	}
	writeJSON(w, http.StatusOK, item{Result: out})
}

// unserved explains why the snapshot has no such load balancer.
func unserved(lb *pools.LoadBalancer, path string) error {
	if !lb.Enabled || path != "id" {
		return &pools.ValidationError{Errors: []pools.FieldError{{Path: path, Message: "load balancer is disabled: it answers nothing"}}}
	}
	return newProblem(http.StatusServiceUnavailable, "load balancer "+lb.ID+" is not in the snapshot served yet; try again in a moment")
}

// previewSample checks the clients and the type.
func previewSample(req *PreviewRequest) ([]steering.Sample, steering.QType, []pools.FieldError) {
	var fes []pools.FieldError
	switch n := len(req.Clients); {
	case n == 0:
		fes = append(fes, pools.FieldError{Path: "clients", Message: "required: at least one client subnet, region or country"})
	case n > MaxPreviewClients:
		fes = append(fes, pools.FieldError{Path: "clients", Message: fmt.Sprintf("at most %d clients", MaxPreviewClients)})
	}
	sample := make([]steering.Sample, 0, len(req.Clients))
	for i, c := range req.Clients {
		path := fmt.Sprintf("clients[%d]", i)
		switch {
		case c.Subnet != "" && (c.Region != "" || c.Country != ""):
			fes = append(fes, pools.FieldError{Path: path, Message: "give a subnet, or a region and/or country, not both"})
		case c.Subnet != "":
			p, err := netip.ParsePrefix(c.Subnet)
			if err != nil {
				fes = append(fes, pools.FieldError{Path: path + ".subnet", Message: "not a CIDR prefix such as 198.51.100.0/24"})
				continue
			}
			sample = append(sample, steering.Sample{Subnet: p.Masked()})
		case c.Region == "" && c.Country == "":
			fes = append(fes, pools.FieldError{Path: path, Message: "give a subnet, a region or a country"})
		default:
			region, country := strings.ToUpper(c.Region), strings.ToUpper(c.Country)
			if msg := pools.CountryProblem(country); country != "" && msg != "" {
				fes = append(fes, pools.FieldError{Path: path + ".country", Message: msg})
				continue
			}
			if msg := pools.RegionProblem(region); region != "" && msg != "" {
				fes = append(fes, pools.FieldError{Path: path + ".region", Message: msg})
				continue
			}
			if _, ok := steering.Place(region, country); !ok {
				msg := fmt.Sprintf("unknown region %q: one of %s", c.Region, strings.Join(pools.Regions, ", "))
				field := path + ".region"
				if country != "" {
					field, msg = path+".country", fmt.Sprintf("%q is not an ISO 3166 country code known to glb", c.Country)
					if region != "" {
						msg += " in region " + region
					}
				}
				fes = append(fes, pools.FieldError{Path: field, Message: msg})
				continue
			}
			sample = append(sample, steering.Sample{Region: region, Country: country})
		}
	}
	qtype := steering.QTypeA
	switch strings.ToUpper(req.Type) {
	case "", "A":
	case "AAAA":
		qtype = steering.QTypeAAAA
	default:
		fes = append(fes, pools.FieldError{Path: "type", Message: fmt.Sprintf("%q: must be A or AAAA", req.Type)})
	}
	return sample, qtype, fes
}

// previewEdits applies each merge patch to the stored object as PATCH
// would and validates the result, naming fields under edits.
func (s *server) previewEdits(ctx context.Context, lb pools.Object, raw map[string]any) ([]pools.Object, []pools.FieldError, error) {
	var out []pools.Object
	var fes []pools.FieldError
	refs := &storeRefs{ctx: ctx, store: s.Store}
	edit := func(path string, cur pools.Object, patch map[string]any) error {
		o, err := applyPatch(cur, patch)
		var p *Problem
		if errors.As(err, &p) && len(p.Errors) > 0 {
			fes = append(fes, prefixed(path, p.Errors)...)
			return nil
		}
		if err != nil {
			return err
		}
		var ve *pools.ValidationError
		if err := o.Validate(refs); errors.As(err, &ve) {
			fes = append(fes, prefixed(path, ve.Errors)...)
		} else if err != nil {
			return err
		}
		if refs.err != nil {
			return refs.err
		}
		out = append(out, o)
		return nil
	}
	ps, _ := raw["pools"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(ps)) {
		path := "edits.pools." + id
		cur, err := s.Store.Get(ctx, pools.KindPool, id)
		if errors.Is(err, pools.ErrNotFound) {
			fes = append(fes, pools.FieldError{Path: path, Message: "no pool with this id"})
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if err := edit(path, cur, ps[id].(map[string]any)); err != nil {
			return nil, nil, err
		}
	}
	if patch, ok := raw["load_balancer"].(map[string]any); ok {
		if err := edit("edits.load_balancer", lb, patch); err != nil {
			return nil, nil, err
		}
	}
	return out, fes, nil
}

func prefixed(prefix string, fes []pools.FieldError) []pools.FieldError {
	out := make([]pools.FieldError, len(fes))
	for i, fe := range fes {
		out[i] = pools.FieldError{Path: prefix + "." + fe.Path, Message: fe.Message}
	}
	return out
}

// storeRefs answers validation's cross-object questions from the store,
// keeping the first error it meets (References cannot return one).
type storeRefs struct {
	ctx   context.Context
	store pools.Store
	err   error
}

func (r *storeRefs) get(k pools.Kind, id string) pools.Object {
	o, err := r.store.Get(r.ctx, k, id)
	if err != nil && !errors.Is(err, pools.ErrNotFound) && r.err == nil {
		r.err = err
	}
	return o
}

func (r *storeRefs) ZoneName(id string) (string, bool) {
	if z, ok := r.get(pools.KindZone, id).(*pools.Zone); ok {
		return pools.CanonicalName(z.Name), true
	}
	return "", false
}

func (r *storeRefs) PoolExists(id string) bool    { return r.get(pools.KindPool, id) != nil }
func (r *storeRefs) MonitorExists(id string) bool { return r.get(pools.KindMonitor, id) != nil }

// realSample is the last hour of the load balancer's sampled queries of
// the type asked, merged across nodes, as weighted clients.
func (s *server) realSample(ctx context.Context, lbID string, qtype steering.QType) ([]steering.Sample, *PreviewSample, error) {
	want := uint16(1) // A
	if qtype == steering.QTypeAAAA {
		want = 28
	}
	info := &PreviewSample{Source: "real", Since: time.Now().Add(-RealSampleWindow).UTC().Truncate(time.Minute)}
	rows, err := s.Store.QuerySamples(ctx, analytics.LBKey(lbID), info.Since)
	if err != nil {
		return nil, nil, err
	}
	bySubnet := map[netip.Prefix]int64{}
	for _, r := range rows {
		if r.Type == want {
			bySubnet[r.Subnet] += r.Count
			info.Queries += r.Count
		}
	}
	if len(bySubnet) == 0 {
		return nil, nil, newProblem(http.StatusConflict, fmt.Sprintf("no %s queries of this load balancer were sampled in the last %v: nothing to replay", qtype, RealSampleWindow))
	}
	sample := make([]steering.Sample, 0, len(bySubnet))
	for p, n := range bySubnet {
		sample = append(sample, steering.Sample{Subnet: p, Weight: float64(n)})
	}
	slices.SortFunc(sample, func(a, b steering.Sample) int {
		return cmp.Or(cmp.Compare(b.Weight, a.Weight), a.Subnet.Addr().Compare(b.Subnet.Addr()))
	})
	if len(sample) > MaxRealSubnets {
		for _, c := range sample[MaxRealSubnets:] {
			info.Left += int64(c.Weight)
		}
		sample = sample[:MaxRealSubnets]
	}
	info.Subnets = len(sample)
	return sample, info, nil
}

// moveSummary says the largest move in words: "this edit moves 23 % of
// real answers from pool eu to pool us".
func moveSummary(moves []steering.PoolMove, replay bool) string {
	what := "the sample's answers"
	if replay {
		what = "real answers"
	}
	if len(moves) == 0 {
		return "this edit moves no answers from one pool to another"
	}
	m := moves[0]
	out := fmt.Sprintf("this edit moves %.0f %% of %s from pool %s to pool %s", m.Share*100, what, m.FromName, m.ToName)
	if len(moves) > 1 {
		out += fmt.Sprintf(" (and %d smaller moves)", len(moves)-1)
	}
	return out
}
