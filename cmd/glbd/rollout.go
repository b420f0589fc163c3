package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/glb-dns/glb/outbound"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// rolloutWatch follows the rollouts of every snapshot the node serves.
// The steps need nothing from it: every node compiles the step in force
// by its clock. It writes the events the clock and the guards cause: the
// audit entry of each step (once, whoever reports it), the roll back when
// a guard fails, and the completion. Each write names the revision the
// node saw, so that of two nodes seeing the same thing one writes. The
// steps and the completion go through records, which retries them until
// stored.
type rolloutWatch struct {
	store   pools.RolloutStore
	log     *slog.Logger
	http    *http.Client
	records *clockRecords
	// seen: the last step handled per rollout; tried: the revision an
	// event was last written at and when, so that a write is repeated
	// only when the rollout changed or retryEvent passed (the store was
	// down, say).
	seen  map[string]int
	tried map[string]attempt
}

type attempt struct {
	rev int64
	at  time.Time
}

// retryEvent is how long a node waits before writing an event again at
// the same revision: one that landed reaches every node well before.
const retryEvent = 5 * time.Second

// webhookTimeout bounds a webhook guard's answer: none in time is a no.
const webhookTimeout = 5 * time.Second

// newRolloutWatch returns the watch; records retries its steps' and
// completions' writes; client asks the guards (one from
// outbound.Policy.Client: no redirect followed, every address checked).
func newRolloutWatch(store pools.RolloutStore, records *clockRecords, log *slog.Logger, client *http.Client) *rolloutWatch {
	return &rolloutWatch{store: store, records: records, log: log.With("component", "rollouts"), http: client,
		seen: map[string]int{}, tried: map[string]attempt{}}
}

// observe looks at the rollouts of snap at now. It runs on the node loop
// and writes off it: DNS never waits for the store or a webhook.
func (w *rolloutWatch) observe(ctx context.Context, snap *steering.Snapshot, now time.Time) {
	cfg := snap.Config()
	for i := range cfg.Rollouts {
		r := cfg.Rollouts[i]
		if r.Ended() {
			delete(w.seen, r.ID)
			delete(w.tried, r.ID)
			continue
		}
		if !r.InForce(now) {
			continue
		}
		if why := snap.RolloutGuard(&r); why != "" {
			w.event(ctx, &r, pools.RolloutRollBack, pools.ActorGuard, why)
			continue
		}
		k := r.Step(now)
		w.records.add(w.stepRecords(&r, min(k, len(r.Steps)-1))...)
		if k >= len(r.Steps) {
			if r.State == pools.RolloutRunning {
				w.records.add(w.completion(&r))
			}
			continue
		}
		if last, ok := w.seen[r.ID]; ok && last >= k {
			continue
		}
		w.seen[r.ID] = k
		if r.Guards.Webhook != "" || r.Guards.Query != "" {
			go w.step(ctx, r, k)
		}
	}
}

// stepAt is when step k of r began (k = len(r.Steps): when it completes).
func stepAt(r *pools.Rollout, k int) time.Time {
	return r.StartsAt.Add(time.Duration(r.HeldMS)*time.Millisecond + time.Duration(k)*r.Interval())
}

// stepRecords are the audit entries of r's steps up to k, each once.
func (w *rolloutWatch) stepRecords(r *pools.Rollout, k int) []clockRecord {
	out := make([]clockRecord, 0, k+1)
	for i := 0; i <= k; i++ {
		r := *r
		out = append(out, clockRecord{key: fmt.Sprintf("rollout/%s/step/%d", r.ID, i), object: r.ID, at: stepAt(&r, i), what: "a rollout step",
			write: func(ctx context.Context) error { return w.store.RecordRolloutStep(ctx, &r, i) }})
	}
	return out
}

// completion is the write that completes r: conditional on the revision
// seen, so that of the nodes retrying it one writes and the others find
// it moved (a StateError or ErrStale, which ends their retries).
func (w *rolloutWatch) completion(r *pools.Rollout) clockRecord {
	c := *r
	return clockRecord{key: "rollout/" + r.ID + "/complete", object: r.ID, at: stepAt(r, len(r.Steps)), what: "a rollout's completion",
		write: func(ctx context.Context) error {
			return w.change(ctx, c, pools.RolloutComplete, pools.ActorClock, fmt.Sprintf("every step held %s", c.StepInterval))
		}}
}

// step asks r's webhook and query guards, if any, at step k.
func (w *rolloutWatch) step(ctx context.Context, r pools.Rollout, k int) {
	why := ""
	if r.Guards.Webhook != "" {
		why = w.askWebhook(ctx, &r, k)
	}
	if why == "" && r.Guards.Query != "" {
		why = w.askQuery(ctx, &r, k)
	}
	if why != "" {
		w.write(ctx, r, pools.RolloutRollBack, pools.ActorGuard, why)
	}
}

// askQuery asks the query guard's Prometheus the instant query at step
// k; "" is a yes: a non-empty result whose every value is above 0.
func (w *rolloutWatch) askQuery(ctx context.Context, r *pools.Rollout, k int) string {
	u, err := url.Parse(strings.TrimSuffix(r.Guards.Prometheus, "/") + "/api/v1/query")
	if err != nil {
		return "query guard: " + err.Error()
	}
	u.RawQuery = url.Values{"query": {r.Guards.Query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "query guard: " + err.Error()
	}
	resp, err := w.http.Do(req)
	if re := outbound.Refusal(err); re != nil {
		return "query guard refused: " + re.Error()
	}
	if err != nil {
		return "query guard did not answer: " + err.Error()
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	// What came back is judged, never quoted: the reason (audited, shown)
	// carries the status only, not what the URL's server said.
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return fmt.Sprintf("query guard at step %d: %s, and not a Prometheus answer", k+1, resp.Status)
	}
	if resp.StatusCode != http.StatusOK || body.Status != "success" {
		return fmt.Sprintf("query guard at step %d: %s, Prometheus status %q", k+1, resp.Status, body.Status)
	}
	values, err := queryValues(body.Data.ResultType, body.Data.Result)
	if err != nil {
		return fmt.Sprintf("query guard at step %d: %v", k+1, err)
	}
	if len(values) == 0 {
		return fmt.Sprintf("query guard said no at step %d: %s returned nothing", k+1, r.Guards.Query)
	}
	for _, v := range values {
		if !(v > 0) {
			return fmt.Sprintf("query guard said no at step %d: %s returned %v", k+1, r.Guards.Query, v)
		}
	}
	return ""
}

// queryValues reads the sample values of an instant query's result: a
// vector's (one per series) or a scalar's. A matrix or string is not an
// instant query's answer a guard can judge.
func queryValues(kind string, raw json.RawMessage) ([]float64, error) {
	parse := func(pair [2]any) (float64, error) {
		s, ok := pair[1].(string)
		if !ok {
			return 0, fmt.Errorf("a sample value %v is not a string", pair[1])
		}
		return strconv.ParseFloat(s, 64)
	}
	switch kind {
	case "vector":
		var series []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(raw, &series); err != nil {
			return nil, err
		}
		out := make([]float64, 0, len(series))
		for _, s := range series {
			v, err := parse(s.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case "scalar":
		var pair [2]any
		if err := json.Unmarshal(raw, &pair); err != nil {
			return nil, err
		}
		v, err := parse(pair)
		return []float64{v}, err
	}
	return nil, fmt.Errorf("the result is a %q, want a vector or a scalar", kind)
}

// askWebhook POSTs the rollout at step k to its webhook; "" is a yes.
func (w *rolloutWatch) askWebhook(ctx context.Context, r *pools.Rollout, k int) string {
	doc := map[string]any{"rollout": r.ID, "step": k, "percent": r.Steps[k], "reason": r.Reason}
	if r.LoadBalancer != "" {
		doc["load_balancer"], doc["default_pools"], doc["from_default_pools"] = r.LoadBalancer, r.DefaultPools, r.FromDefaultPools
	} else {
		doc["pool"], doc["weights"], doc["from"] = r.Pool, r.Weights, r.From
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return err.Error()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.Guards.Webhook, bytes.NewReader(body))
	if err != nil {
		return "webhook guard: " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.http.Do(req)
	if re := outbound.Refusal(err); re != nil {
		return "webhook guard refused: " + re.Error()
	}
	if err != nil {
		return "webhook guard did not answer: " + err.Error()
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Sprintf("webhook guard said no at step %d: %s", k+1, resp.Status)
	}
	return ""
}

// event writes action once per revision of r.
func (w *rolloutWatch) event(ctx context.Context, r *pools.Rollout, action, actor, why string) {
	now := time.Now()
	if a := w.tried[r.ID]; a.rev == r.Revision && now.Sub(a.at) < retryEvent {
		return
	}
	w.tried[r.ID] = attempt{rev: r.Revision, at: now}
	go w.write(ctx, *r, action, actor, why)
}

func (w *rolloutWatch) write(ctx context.Context, r pools.Rollout, action, actor, why string) {
	wctx, cancel := context.WithTimeout(ctx, storeProbe)
	defer cancel()
	switch err := w.change(wctx, r, action, actor, why); {
	case err == nil:
	case pools.IsDomainError(err) && !errors.Is(err, pools.ErrUnavailable):
		// Another node wrote first (stale), or the rollout moved on.
		w.log.Debug("rollout event not written", "rollout", r.ID, "action", action, "err", err)
	default:
		w.log.Warn("writing a rollout event", "rollout", r.ID, "action", action, "err", err)
	}
}

// change writes action on r as actor, at the revision r has, and logs
// what it did.
func (w *rolloutWatch) change(ctx context.Context, r pools.Rollout, action, actor, why string) error {
	out, err := w.store.ChangeRollout(pools.WithCaller(ctx, pools.Caller{Actor: actor}), r.ID, r.Revision, action, why)
	if err != nil {
		return err
	}
	_, target := r.Target()
	w.log.Info("rollout "+out.State, "rollout", r.ID, "target", target, "reason", why)
	return nil
}
