package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/glb-dns/glb/pools"
)

// analyticsDims are the dimensions answers are counted by, in the order a
// group's fields are written: what group_by and the filters accept.
var analyticsDims = []string{"pool", "origin", "region", "country", "rcode"}

// analyticsSteps are the widths a default step is chosen from, finest
// first; any multiple of 10 s (of 60 s before the last hour) may be asked.
var analyticsSteps = []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour}

// MaxAnalyticsPoints bounds a series: (until - since) / step.
const MaxAnalyticsPoints = 1440

// AnalyticsFlushDelay is how long after a 10-second bucket ends every
// node has written it: the counts' grace, then the write.
const AnalyticsFlushDelay = 15 * time.Second

// Analytics is the body of GET /analytics.
type Analytics struct {
	// LoadBalancer is the id of the load balancer counted, Name its name.
	LoadBalancer string    `json:"load_balancer"`
	Name         string    `json:"name"`
	Since        time.Time `json:"since"`
	Until        time.Time `json:"until"`
	// Step is the series' bucket width in seconds.
	Step    int      `json:"step"`
	GroupBy []string `json:"group_by"`
	// CompleteUntil: buckets ending after it may still get counts from
	// nodes that have not written them yet.
	CompleteUntil time.Time `json:"complete_until"`
	// Answers is every answer counted in the range (after the filters).
	Answers int64 `json:"answers"`
	// Totals are the answers per group, most first.
	Totals []AnalyticsGroup `json:"totals"`
	// Series are the answers per group and step, in the order of Totals.
	Series []AnalyticsSeries `json:"series"`
}

// AnalyticsGroup is one group's fields (those of group_by) and answers,
// e.g. {"pool": "eu", "origin": "a", "region": "WEU", "answers": 123}.
type AnalyticsGroup map[string]any

// AnalyticsSeries is one group's answers per step.
type AnalyticsSeries struct {
	Group  map[string]string `json:"group"`
	Points []AnalyticsPoint  `json:"points"`
}

// AnalyticsPoint is the answers of the step starting at Time.
type AnalyticsPoint struct {
	Time    time.Time `json:"time"`
	Answers int64     `json:"answers"`
}

// analyticsQuery is GET /analytics's parameters, checked.
type analyticsQuery struct {
	lb           *pools.LoadBalancer
	since, until time.Time
	step         time.Duration
	groupBy      []string
	filter       map[string]string
}

// analytics serves GET /analytics: the answers of one load balancer,
// merged across nodes from the store, per group and per step.
func (s *server) analytics(w http.ResponseWriter, r *http.Request) {
	q, err := s.analyticsQuery(r.Context(), r, time.Now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rows, err := s.Store.AnswerCounts(r.Context(), q.lb.ID, q.since, q.until)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if fes := checkAnalyticsFilter(q, rows, s.lbValues(r.Context(), q.lb)); len(fes) > 0 {
		s.writeError(w, r, badRequest("bad filter values", fes...))
		return
	}
	writeJSON(w, http.StatusOK, item{Result: aggregateAnswers(q, rows, time.Now())})
}

// analyticsQuery reads and checks the parameters, every problem at once.
func (s *server) analyticsQuery(ctx context.Context, r *http.Request, now time.Time) (*analyticsQuery, error) {
	v := r.URL.Query()
	var fes []pools.FieldError
	q := &analyticsQuery{filter: map[string]string{}}
	for name := range v {
		if name != "load_balancer" && name != "since" && name != "until" && name != "step" && name != "group_by" && !slices.Contains(analyticsDims, name) {
			fes = append(fes, pools.FieldError{Path: name, Message: "unknown parameter: one of load_balancer, since, until, step, group_by, " + strings.Join(analyticsDims, ", ")})
		}
	}
	q.until, q.since = now, time.Time{}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"since", &q.since}, {"until", &q.until}} {
		if s := v.Get(t.name); s != "" {
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				fes = append(fes, pools.FieldError{Path: t.name, Message: "must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z"})
				continue
			}
			*t.dst = at
		}
	}
	if q.since.IsZero() {
		q.since = q.until.Add(-time.Hour)
	}
	if !q.since.Before(q.until) {
		fes = append(fes, pools.FieldError{Path: "since", Message: "must be before until"})
	}
	// Before the last hour only minute buckets are kept.
	coarse := q.since.Before(now.Add(-pools.AnswerFineFor))
	if st := v.Get("step"); st != "" {
		d, err := time.ParseDuration(st)
		if n, aerr := strconv.Atoi(st); aerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		}
		switch {
		case err != nil || d <= 0 || d%(10*time.Second) != 0:
			fes = append(fes, pools.FieldError{Path: "step", Message: "must be a multiple of 10s, in seconds or as a duration such as 1m"})
		case coarse && d%time.Minute != 0:
			fes = append(fes, pools.FieldError{Path: "step", Message: fmt.Sprintf("must be a multiple of 1m: since is more than %v ago, where only minute buckets are kept", pools.AnswerFineFor)})
		}
		q.step = d
	} else {
		for _, d := range analyticsSteps {
			if (!coarse || d%time.Minute == 0) && q.until.Sub(q.since) <= MaxAnalyticsPoints*d {
				q.step = d
				break
			}
		}
	}
	if q.step > 0 {
		q.since = q.since.Truncate(q.step)
		if u := q.until.Truncate(q.step); u.Before(q.until) {
			q.until = u.Add(q.step)
		}
		if n := q.until.Sub(q.since) / q.step; n > MaxAnalyticsPoints {
			fes = append(fes, pools.FieldError{Path: "step", Message: fmt.Sprintf("%d steps from since to until; at most %d: ask for a larger step", n, MaxAnalyticsPoints)})
		}
	} else if len(fes) == 0 {
		fes = append(fes, pools.FieldError{Path: "since", Message: "the range is too long for any step"})
	}
	q.groupBy = []string{"pool"}
	if g, ok := v["group_by"]; ok {
		q.groupBy = []string{}
		for _, d := range strings.Split(strings.Join(g, ","), ",") {
			switch d = strings.TrimSpace(d); {
			case d == "":
			case !slices.Contains(analyticsDims, d):
				fes = append(fes, pools.FieldError{Path: "group_by", Message: fmt.Sprintf("%q: group by one or more of %s", d, strings.Join(analyticsDims, ", "))})
			case !slices.Contains(q.groupBy, d):
				q.groupBy = append(q.groupBy, d)
			}
		}
	}
	for _, d := range analyticsDims {
		if vs, ok := v[d]; ok {
			q.filter[d] = vs[0]
		}
	}
	if f, ok := q.filter["region"]; ok && f != unknownPlace && !pools.IsRegion(f) {
		fes = append(fes, pools.FieldError{Path: "region", Message: fmt.Sprintf("%q: one of %s, %s", f, strings.Join(pools.Regions, ", "), unknownPlace)})
	}
	if f, ok := q.filter["country"]; ok && f != unknownPlace && !pools.IsCountry(f) {
		fes = append(fes, pools.FieldError{Path: "country", Message: fmt.Sprintf("%q: an ISO 3166 alpha-2 code in upper case (%s) or %s", f, strings.Join(pools.CountryCodes(), " "), unknownPlace)})
	}
	if f, ok := q.filter["rcode"]; ok && !slices.Contains(answerRcodes, f) {
		fes = append(fes, pools.FieldError{Path: "rcode", Message: fmt.Sprintf("%q: one of %s", f, strings.Join(answerRcodes, ", "))})
	}
	id := v.Get("load_balancer")
	if id == "" {
		fes = append(fes, pools.FieldError{Path: "load_balancer", Message: "required: a load balancer's id or name"})
	}
	if len(fes) > 0 {
		return nil, badRequest("bad query parameters", fes...)
	}
	lb, err := s.findLoadBalancer(ctx, id)
	if err != nil {
		return nil, err
	}
	q.lb = lb
	return q, nil
}

// unknownPlace is the region and country of a client nothing located
// (analytics.Unknown).
const unknownPlace = "unknown"

// answerRcodes are the response codes a load balancer's answer can have.
var answerRcodes = []string{"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"}

// findLoadBalancer is the load balancer with id, else the one named
// name (any case, the final dot optional).
func (s *server) findLoadBalancer(ctx context.Context, idOrName string) (*pools.LoadBalancer, error) {
	o, err := s.Store.Get(ctx, pools.KindLoadBalancer, idOrName)
	if err == nil {
		return o.(*pools.LoadBalancer), nil
	}
	if !errors.Is(err, pools.ErrNotFound) {
		return nil, err
	}
	cfg, err := s.Store.Config(ctx)
	if err != nil {
		return nil, err
	}
	for i := range cfg.LoadBalancers {
		if pools.CanonicalName(cfg.LoadBalancers[i].Name) == pools.CanonicalName(idOrName) {
			return &cfg.LoadBalancers[i], nil
		}
	}
	return nil, newProblem(http.StatusNotFound, fmt.Sprintf("no load balancer with id or name %q", idOrName))
}

// lbValues are the pools (ids) and origins (names) lb uses now, which the
// pool and origin filters accept besides those counted in the range.
func (s *server) lbValues(ctx context.Context, lb *pools.LoadBalancer) map[string][]string {
	out := map[string][]string{}
	var ids []string
	for _, ref := range lb.PoolRefs() {
		ids = append(ids, ref.Pool)
	}
	for _, id := range ids {
		if slices.Contains(out["pool"], id) {
			continue
		}
		out["pool"] = append(out["pool"], id)
		if o, err := s.Store.Get(ctx, pools.KindPool, id); err == nil {
			for _, or := range o.(*pools.Pool).Origins {
				out["origin"] = append(out["origin"], or.Name)
			}
		}
	}
	return out
}

// checkAnalyticsFilter refuses a pool or origin filter that names
// neither one the load balancer uses nor one counted in the range: it
// would answer nothing, which reads as "no traffic" rather than a typo.
func checkAnalyticsFilter(q *analyticsQuery, rows []pools.AnswerCount, now map[string][]string) []pools.FieldError {
	var fes []pools.FieldError
	for _, d := range []string{"pool", "origin"} {
		f, ok := q.filter[d]
		if !ok {
			continue
		}
		allowed := slices.Clone(now[d])
		for i := range rows {
			allowed = append(allowed, answerField(&rows[i], d))
		}
		slices.Sort(allowed)
		allowed = slices.Compact(allowed)
		if !slices.Contains(allowed, f) {
			fes = append(fes, pools.FieldError{Path: d, Message: fmt.Sprintf("%q: one of %q (in use or counted in the range)", f, allowed)})
		}
	}
	return fes
}

func answerField(r *pools.AnswerCount, dim string) string {
	switch dim {
	case "pool":
		return r.Pool
	case "origin":
		return r.Origin
	case "region":
		return r.Region
	case "country":
		return r.Country
	}
	return r.Rcode
}

// aggregateAnswers sums the rows that pass the filters per group, in
// total and per step.
func aggregateAnswers(q *analyticsQuery, rows []pools.AnswerCount, now time.Time) *Analytics {
	out := &Analytics{LoadBalancer: q.lb.ID, Name: q.lb.Name, Since: q.since.UTC(), Until: q.until.UTC(),
		Step: int(q.step / time.Second), GroupBy: q.groupBy, CompleteUntil: now.Add(-AnalyticsFlushDelay).Truncate(10 * time.Second).UTC(),
		Totals: []AnalyticsGroup{}, Series: []AnalyticsSeries{}}
	steps := int(q.until.Sub(q.since) / q.step)
	type group struct {
		fields []string
		total  int64
		points []int64
	}
	groups := map[string]*group{}
	var order []*group
rows:
	for i := range rows {
		r := &rows[i]
		for d, f := range q.filter {
			if answerField(r, d) != f {
				continue rows
			}
		}
		at := int(r.Bucket.Sub(q.since) / q.step)
		if at < 0 || at >= steps {
			continue
		}
		fields := make([]string, len(q.groupBy))
		for j, d := range q.groupBy {
			fields[j] = answerField(r, d)
		}
		key := strings.Join(fields, "\x00")
		g := groups[key]
		if g == nil {
			g = &group{fields: fields, points: make([]int64, steps)}
			groups[key] = g
			order = append(order, g)
		}
		g.total += r.Answers
		g.points[at] += r.Answers
		out.Answers += r.Answers
	}
	slices.SortStableFunc(order, func(a, b *group) int {
		return cmp.Or(cmp.Compare(b.total, a.total), slices.Compare(a.fields, b.fields))
	})
	for _, g := range order {
		tot := AnalyticsGroup{"answers": g.total}
		named := map[string]string{}
		for j, d := range q.groupBy {
			tot[d], named[d] = g.fields[j], g.fields[j]
		}
		out.Totals = append(out.Totals, tot)
		ser := AnalyticsSeries{Group: named, Points: make([]AnalyticsPoint, steps)}
		for k := range steps {
			ser.Points[k] = AnalyticsPoint{Time: q.since.Add(time.Duration(k) * q.step).UTC(), Answers: g.points[k]}
		}
		out.Series = append(out.Series, ser)
	}
	return out
}
