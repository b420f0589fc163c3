package pools

import (
	"context"
	"encoding/json"
	"time"
)

// KindSafetyRules is the kind of the global safety rules in the audit
// log; its object id is SafetyRulesID.
const KindSafetyRules Kind = "safety_rules"

// SafetyRulesID names the one set of global safety rules.
const SafetyRulesID = "global"

// SafetyRules are the safety rules that hold across every load balancer
// at once, beside each load balancer's own (LoadBalancer.Safety): a shift
// that would break one is refused like one that breaks a load balancer's
// rule. Zero turns a rule off; no rule is on until an operator sets it.
type SafetyRules struct {
	// MaxShiftedZones: at most this many distinct zones shifted at once,
	// whatever load balancers the shifts name.
	MaxShiftedZones int `json:"max_shifted_zones"`
	// MaxShiftedPools: at most this many distinct pools shifted at once.
	MaxShiftedPools int `json:"max_shifted_pools"`
	// MinServingLoadBalancersPercent: at least this share of the load
	// balancers keep one steering pool serving (enabled, healthy, not
	// shifted).
	MinServingLoadBalancersPercent int `json:"min_serving_load_balancers_percent"`
	// Revision is the configuration revision of the last write (0: never
	// written), the entity tag If-Match names. Read-only, like
	// ModifiedOn.
	Revision   int64      `json:"revision"`
	ModifiedOn *time.Time `json:"modified_on"`
}

// Global safety rule names, as problem+json and the audit log name them:
// "global." and the field, so that they never read as a load balancer's.
const (
	RuleGlobalMaxShiftedZones                = "global.max_shifted_zones"
	RuleGlobalMaxShiftedPools                = "global.max_shifted_pools"
	RuleGlobalMinServingLoadBalancersPercent = "global.min_serving_load_balancers_percent"
)

// Validate names every field at fault.
func (r *SafetyRules) Validate() error {
	var e errs
	if r.MaxShiftedZones < 0 {
		e.add("max_shifted_zones", "must not be negative (0: no limit)")
	}
	if r.MaxShiftedPools < 0 {
		e.add("max_shifted_pools", "must not be negative (0: no limit)")
	}
	if r.MinServingLoadBalancersPercent < 0 || r.MinServingLoadBalancersPercent > 100 {
		e.add("min_serving_load_balancers_percent", "must be from 0 (no limit) to 100")
	}
	return e.err()
}

// SafetyRulesStore keeps the global safety rules: one settings object,
// not a collection.
type SafetyRulesStore interface {
	// SafetyRules returns the rules; the zero rules (revision 0) when
	// none were ever written.
	SafetyRules(ctx context.Context) (SafetyRules, error)
	// PutSafetyRules validates and replaces the rules, bumps the
	// revision and audits the write, in one transaction. ifRevision >= 0
	// must equal the stored revision (0: never written), else ErrStale;
	// below 0 writes whatever is stored.
	PutSafetyRules(ctx context.Context, r SafetyRules, ifRevision int64) (SafetyRules, error)
}

// PutSafetyRulesIn is the write both stores make over tx once they hold
// the stored rules (cur): the precondition, the revision and the audit
// entry they must append.
func PutSafetyRulesIn(ctx context.Context, tx Tx, cur, next SafetyRules, ifRevision int64, now time.Time) (SafetyRules, AuditEntry, error) {
	if err := next.Validate(); err != nil {
		return SafetyRules{}, AuditEntry{}, err
	}
	if ifRevision >= 0 && ifRevision != cur.Revision {
		return SafetyRules{}, AuditEntry{}, ErrStale
	}
	rev, err := tx.BumpRevision()
	if err != nil {
		return SafetyRules{}, AuditEntry{}, err
	}
	at := StoreTime(now)
	next.Revision, next.ModifiedOn = rev, &at
	var before any
	if cur.Revision > 0 {
		before = cur
	}
	e, err := NewAuditEntry(ctx, rev, ActionUpdate, KindSafetyRules, SafetyRulesID, before, next, now)
	if cur.Revision == 0 {
		e.Action = ActionCreate
	}
	return next, e, err
}

// DecodeSafetyRules reads stored rules; nil or empty is the zero rules.
func DecodeSafetyRules(b []byte) (SafetyRules, error) {
	var r SafetyRules
	if len(b) == 0 {
		return r, nil
	}
	err := json.Unmarshal(b, &r)
	return r, err
}
