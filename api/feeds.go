package api

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// Health and load fed in: a generic PUT for any system, and Alertmanager's
// webhook as it sends it. Each word goes to a feed monitor of the origin's
// pool's group and lasts its ttl; the nodes take it as that monitor's
// check result (feeds/, healthcheck/feed.go).

// FeedView is a word fed in as the API shows it.
type FeedView struct {
	pools.FeedWord
	// Live: the word counts now, on this node's clock; past its
	// expiry the feed is silent and sees the origin up.
	Live bool `json:"live"`
}

func (s *server) feedView(w pools.FeedWord) FeedView {
	return FeedView{FeedWord: w, Live: w.Live(s.Now())}
}

func (s *server) feedRoutes(r chi.Router) {
	r.Get(Prefix+"/pools/{id}/origins/{name}/feed", s.getFeed)
	r.Put(Prefix+"/pools/{id}/origins/{name}/feed", s.putFeed)
	r.Post(Prefix+"/feeds/alertmanager", s.alertmanager)
}

// isFeed reports whether p is a path that feeds health in.
func isFeed(p string) bool {
	if p == Prefix+"/feeds/alertmanager" {
		return true
	}
	rest, ok := strings.CutPrefix(p, Prefix+"/pools/")
	if !ok {
		return false
	}
	parts := strings.Split(rest, "/")
	return len(parts) == 4 && parts[0] != "" && parts[1] == "origins" && parts[2] != "" && parts[3] == "feed"
}

// feedConfig is the configuration as stored now, for finding what a word
// is about (zone_scope.go keeps it up to date by the change feed).
func (s *server) feedConfig(r *http.Request) (*pools.Config, error) {
	x, err := s.scopes.at(r.Context(), s.Store)
	if err != nil {
		return nil, err
	}
	return x.cfg, nil
}

// monitorFinder finds cfg's monitors by id.
func monitorFinder(cfg *pools.Config) func(string) *pools.Monitor {
	byID := make(map[string]*pools.Monitor, len(cfg.Monitors))
	for i := range cfg.Monitors {
		byID[cfg.Monitors[i].ID] = &cfg.Monitors[i]
	}
	return func(id string) *pools.Monitor { return byID[id] }
}

func poolByID(cfg *pools.Config, id string) (*pools.Pool, error) {
	for i := range cfg.Pools {
		if cfg.Pools[i].ID == id {
			return &cfg.Pools[i], nil
		}
	}
	return nil, fmt.Errorf("pool %q: %w", id, pools.ErrNotFound)
}

// getFeed answers the words of one origin, one per feed monitor fed.
func (s *server) getFeed(w http.ResponseWriter, r *http.Request) {
	id, name := chi.URLParam(r, "id"), chi.URLParam(r, "name")
	o, err := s.Store.Get(r.Context(), pools.KindPool, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !slices.ContainsFunc(o.(*pools.Pool).Origins, func(og pools.Origin) bool { return og.Name == name }) {
		s.writeError(w, r, fmt.Errorf("pool %s has no origin %q: %w", id, name, pools.ErrNotFound))
		return
	}
	words, err := s.Store.Feeds(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := []FeedView{}
	for _, fw := range words {
		if fw.Origin == name {
			out = append(out, s.feedView(fw))
		}
	}
	writeJSON(w, http.StatusOK, item{Result: out})
}

// putFeed takes one word for one origin.
func (s *server) putFeed(w http.ResponseWriter, r *http.Request) {
	var req pools.FeedRequest
	if err := readInto(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	cfg, err := s.feedConfig(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := poolByID(cfg, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	name := chi.URLParam(r, "name")
	if !slices.ContainsFunc(p.Origins, func(og pools.Origin) bool { return og.Name == name }) {
		s.writeError(w, r, fmt.Errorf("pool %s has no origin %q: %w", p.ID, name, pools.ErrNotFound))
		return
	}
	if err := req.Validate(); err != nil {
		s.writeError(w, r, err)
		return
	}
	m, err := p.FeedTarget(name, req.Monitor, monitorFinder(cfg))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	now := s.Now()
	word := pools.FeedWord{Pool: p.ID, Origin: name, Monitor: m.ID, Up: *req.Up, Reason: req.Reason, Load: req.Load,
		Source: pools.FeedSourceAPI, At: now, Expires: now.Add(pools.FeedTTL(m, req.TTL))}
	stored, err := s.Store.SetFeeds(r.Context(), []pools.FeedWord{word})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.Debug("fed in", "pool", p.ID, "origin", name, "monitor", m.ID, "up", word.Up, "by", callerOf(r.Context()))
	writeJSON(w, http.StatusOK, item{Result: s.feedView(stored[0])})
}

// AlertmanagerMessage is the body of Alertmanager's webhook (version 4),
// as notify/webhook and template.Data define it; fields glb does not use
// are left out, and fields it does not know are ignored, so that later
// Alertmanagers keep working.
type AlertmanagerMessage struct {
	Version  string              `json:"version"`
	GroupKey string              `json:"groupKey"`
	Status   string              `json:"status"`
	Receiver string              `json:"receiver"`
	Alerts   []AlertmanagerAlert `json:"alerts"`
}

// AlertmanagerAlert is one alert of a webhook.
type AlertmanagerAlert struct {
	Status       string            `json:"status"` // firing or resolved
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// AlertmanagerResult is what POST /feeds/alertmanager answers: the words
// stored, and the alerts that were about no origin glb feeds, with why.
// Alertmanager only reads the status; the body is for whoever debugs the
// receiver.
type AlertmanagerResult struct {
	Words   []FeedView     `json:"words"`
	Ignored []IgnoredAlert `json:"ignored"`
}

// IgnoredAlert is an alert of a webhook that fed nothing.
type IgnoredAlert struct {
	Fingerprint string `json:"fingerprint"`
	AlertName   string `json:"alertname,omitempty"`
	Reason      string `json:"reason"`
}

// summary is what an alert says in a line: its summary annotation, else
// its description, else its name.
func (a *AlertmanagerAlert) summary() string {
	s := cmp.Or(a.Annotations["summary"], a.Annotations["description"], a.Labels["alertname"], "alert")
	if r := []rune(s); len(r) > pools.MaxFeedReason {
		s = string(r[:pools.MaxFeedReason-1]) + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// readAlertmanager decodes a webhook, naming the field of a value of the
// wrong type and the alerts whose status is neither firing nor resolved.
func readAlertmanager(w http.ResponseWriter, r *http.Request) (*AlertmanagerMessage, error) {
	if err := checkContentType(r, false); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		return nil, err
	}
	var msg AlertmanagerMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, badRequest("not an Alertmanager webhook (version 4)", pools.FieldError{Path: te.Field,
				Message: fmt.Sprintf("must be %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)})
		}
		var pe *time.ParseError
		if errors.As(err, &pe) {
			return nil, badRequest("not an Alertmanager webhook (version 4)", pools.FieldError{Path: "alerts",
				Message: "startsAt and endsAt must be RFC 3339 times: " + pe.Error()})
		}
		return nil, err
	}
	var fes []pools.FieldError
	if msg.Version != "4" {
		fes = append(fes, pools.FieldError{Path: "version", Message: fmt.Sprintf("%q: glb takes version 4 of Alertmanager's webhook", msg.Version)})
	}
	for i, a := range msg.Alerts {
		if a.Status != "firing" && a.Status != "resolved" {
			fes = append(fes, pools.FieldError{Path: fmt.Sprintf("alerts[%d].status", i), Message: fmt.Sprintf("%q: must be firing or resolved", a.Status)})
		}
	}
	if len(fes) > 0 {
		return nil, badRequest("not an Alertmanager webhook (version 4)", fes...)
	}
	return &msg, nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	case "string":
		return "a string"
	}
	return goKind
}

// alertmanager takes a webhook: each alert whose labels name an origin
// (the labels its pool's feed monitor names, glb_pool and glb_origin by
// default; the pool by id or name) feeds that monitor: firing, the
// origin down with the alert's summary; resolved, the alert no longer
// holds it down (pools.MergeFeed). An alert about nothing glb knows is
// ignored and said so in the answer, which is 200 all the same: sending
// it again would not help.
func (s *server) alertmanager(w http.ResponseWriter, r *http.Request) {
	msg, err := readAlertmanager(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cfg, err := s.feedConfig(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	now := s.Now()
	words, ignored := alertWords(cfg, msg, now)
	out := AlertmanagerResult{Words: []FeedView{}, Ignored: ignored}
	if len(words) > 0 {
		stored, err := s.Store.SetFeeds(r.Context(), words)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		for _, fw := range stored {
			out.Words = append(out.Words, s.feedView(fw))
		}
	}
	if len(ignored) > 0 {
		s.log.Warn("alerts fed nothing", "receiver", msg.Receiver, "ignored", len(ignored), "first", ignored[0].Reason)
	}
	writeJSON(w, http.StatusOK, item{Result: out})
}

// alertWords turns a webhook into one word per origin and feed monitor it
// is about, in key order (the store locks them in that order), and the
// alerts it ignores.
func alertWords(cfg *pools.Config, msg *AlertmanagerMessage, now time.Time) ([]pools.FeedWord, []IgnoredAlert) {
	byName := make(map[string]*pools.Pool, len(cfg.Pools))
	for i := range cfg.Pools {
		p := &cfg.Pools[i]
		byName[p.Name] = p
	}
	for i := range cfg.Pools {
		p := &cfg.Pools[i]
		byName[p.ID] = p // an id wins over another pool's name
	}
	var feeds []*pools.Monitor
	for i := range cfg.Monitors {
		if cfg.Monitors[i].Type == pools.MonitorFeed {
			feeds = append(feeds, &cfg.Monitors[i])
		}
	}
	type key struct{ pool, origin, monitor string }
	words := map[key]*pools.FeedWord{}
	ignored := []IgnoredAlert{}
	for _, a := range msg.Alerts {
		fp := a.Fingerprint
		if fp == "" {
			fp = labelsKey(a.Labels) // not from Alertmanager, which always sets it
		}
		why := "no monitor of type feed exists"
		if len(feeds) > 0 {
			why = "its labels name no pool and origin (" + labelPairs(feeds) + ")"
		}
		fed := false
		for _, m := range feeds {
			pv, ok1 := a.Labels[cmp.Or(m.PoolLabel, pools.DefaultPoolLabel)]
			ov, ok2 := a.Labels[cmp.Or(m.OriginLabel, pools.DefaultOriginLabel)]
			if !ok1 || !ok2 {
				continue
			}
			p := byName[pv]
			switch {
			case p == nil:
				why = fmt.Sprintf("no pool has the id or name %q", pv)
				continue
			case !slices.ContainsFunc(p.Origins, func(o pools.Origin) bool { return o.Name == ov }):
				why = fmt.Sprintf("pool %s has no origin %q", p.ID, ov)
				continue
			case !slices.ContainsFunc(p.Group(), func(g pools.PoolMonitor) bool { return g.Monitor == m.ID }):
				why = fmt.Sprintf("pool %s has no feed monitor: add a monitor of type feed to its monitors", p.ID)
				continue
			}
			k := key{p.ID, ov, m.ID}
			fw := words[k]
			if fw == nil {
				fw = &pools.FeedWord{Pool: p.ID, Origin: ov, Monitor: m.ID, Up: true, Source: pools.FeedSourceAlertmanager,
					At: now, Expires: now.Add(pools.FeedTTL(m, nil))}
				words[k] = fw
			}
			if a.Status == "firing" {
				fw.Alerts = append(fw.Alerts, pools.FeedAlert{Fingerprint: fp, Summary: a.summary()})
			} else {
				fw.Resolved = append(fw.Resolved, fp)
				if fw.Reason == "" {
					fw.Reason = "resolved: " + a.summary()
				}
			}
			fed = true
		}
		if !fed {
			ignored = append(ignored, IgnoredAlert{Fingerprint: fp, AlertName: a.Labels["alertname"], Reason: why})
		}
	}
	out := make([]pools.FeedWord, 0, len(words))
	for _, fw := range words {
		out = append(out, *fw)
	}
	pools.SortFeeds(out)
	return out, ignored
}

// labelPairs names the labels the feed monitors read.
func labelPairs(ms []*pools.Monitor) string {
	var out []string
	for _, m := range ms {
		p := cmp.Or(m.PoolLabel, pools.DefaultPoolLabel) + " and " + cmp.Or(m.OriginLabel, pools.DefaultOriginLabel)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", or ")
}

// labelsKey stands for a fingerprint: the labels, sorted.
func labelsKey(ls map[string]string) string {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q,", k, ls[k])
	}
	return b.String()
}
