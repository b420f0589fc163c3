package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/zonekeys"
)

// Problem type of a rollover step asked for too early or on a zone that
// does not sign.
const problemRollover = "urn:glb:problem:rollover"

// rolloverPropagation is added to the zone's longest TTL before a rollover
// step: the time every node takes to serve the previous step.
const rolloverPropagation = 5 * time.Second

// ExplainDNSSEC is the dnssec member of an explanation: whether the
// explained answer is signed.
type ExplainDNSSEC struct {
	// Signed: answers to queries with the DO bit carry RRSIGs.
	Signed bool `json:"signed"`
	// KeyTag of the active key that signs them.
	KeyTag uint16 `json:"key_tag,omitempty"`
	// Denial is how negative answers are proven.
	Denial string `json:"denial,omitempty"`
}

// dnssecKey is a key's public face: no private part ever leaves the store
// through the API.
type dnssecKey struct {
	ID         string         `json:"id"`
	Tag        uint16         `json:"tag"`
	Algorithm  uint8          `json:"algorithm"`
	Flags      uint16         `json:"flags"`
	Role       pools.KeyRole  `json:"role"`
	State      pools.KeyState `json:"state"`
	DNSKEY     string         `json:"dnskey"`
	DS         string         `json:"ds"`
	CreatedOn  time.Time      `json:"created_on"`
	StateSince time.Time      `json:"state_since"`
}

type dnssecRollover struct {
	Phase         zonekeys.Phase `json:"phase"`
	NextStepAfter time.Time      `json:"next_step_after"`
}

// dnssecView is GET /zones/{id}/dnssec.
type dnssecView struct {
	Zone    string `json:"zone"`
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	// Signing: enabled and an active key exists (DO answers are signed).
	Signing bool `json:"signing"`
	// DS are the records the parent should hold, SHA-256 digests.
	DS       []string        `json:"ds"`
	Keys     []dnssecKey     `json:"keys"`
	Rollover *dnssecRollover `json:"rollover"`
}

// rolloverWait is how long each rollover step must stay visible: the
// longest TTL a resolver may hold of the zone's records or of a negative
// answer, plus propagation to every node.
func rolloverWait(z *pools.Zone) time.Duration {
	ttl := max(z.TTL, z.SOA.Minimum)
	for _, r := range z.Records {
		ttl = max(ttl, r.TTL)
	}
	return time.Duration(ttl)*time.Second + rolloverPropagation
}

func (s *server) zoneForDNSSEC(ctx context.Context, id string) (*pools.Zone, error) {
	o, err := s.Store.Get(ctx, pools.KindZone, id)
	if err != nil {
		return nil, err
	}
	return o.(*pools.Zone), nil
}

// dnssecStatus answers GET /zones/{id}/dnssec. It only reads: a zone's
// first key is made by the write that turns DNSSEC on (ensureZoneKey), by
// the nodes, or by an explicit POST .../dnssec/rollover.
func (s *server) dnssecStatus(w http.ResponseWriter, r *http.Request) {
	z, err := s.zoneForDNSSEC(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	keys, err := s.Store.ZoneKeys(r.Context(), z.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeDNSSECView(w, r, z, keys)
}

// writeDNSSECView answers with the zone's DNSSEC status for keys, as read
// or as just written; it returns what it wrote, nil when it wrote an error.
func (s *server) writeDNSSECView(w http.ResponseWriter, r *http.Request, z *pools.Zone, keys []pools.ZoneKey) *dnssecView {
	v, err := s.dnssecView(z, keys)
	if err != nil {
		s.writeError(w, r, err)
		return nil
	}
	writeJSON(w, http.StatusOK, item{Result: v})
	return v
}

// ensureZoneKey completes a write of a zone that signs: one without an
// active key gets it now, so that its DS is there on the first read. The
// answer stays the object as written (what the audit entry holds), though
// the key write advances the zone's serial once more. A key that cannot be
// made leaves the zone written and unsigned: the nodes try again, and the
// status shows it.
func (s *server) ensureZoneKey(ctx context.Context, o pools.Object) {
	z, ok := o.(*pools.Zone)
	if !ok || !z.DNSSEC.Enabled {
		return
	}
	_, err := s.Store.UpdateZoneKeys(ctx, z.ID, func(cur []pools.ZoneKey) ([]pools.ZoneKey, error) {
		return zonekeys.Ensure(z.Name, cur, s.Now())
	})
	if err != nil {
		s.log.Warn("making the zone's first DNSSEC key failed; the nodes will try again", "zone", z.Name, "err", err)
	}
}

func (s *server) dnssecView(z *pools.Zone, keys []pools.ZoneKey) (*dnssecView, error) {
	v := &dnssecView{Zone: z.ID, Name: z.Name, Enabled: z.DNSSEC.Enabled, DS: []string{}, Keys: []dnssecKey{}}
	for _, k := range keys {
		dnskey, ds, err := zonekeys.PublicKey(z.Name, k, z.TTL)
		if err != nil {
			return nil, err
		}
		v.Keys = append(v.Keys, dnssecKey{
			ID: k.ID, Tag: k.Tag, Algorithm: k.Algorithm, Flags: k.Flags, Role: k.Role, State: k.State,
			DNSKEY: dnskey, DS: ds, CreatedOn: k.CreatedOn, StateSince: k.StateSince,
		})
		if zonekeys.OfferedToParent(k) {
			v.DS = append(v.DS, ds)
		}
		if k.State == pools.KeyActive && z.DNSSEC.Enabled {
			v.Signing = true
		}
	}
	if len(keys) > 0 {
		v.Rollover = &dnssecRollover{Phase: zonekeys.PhaseOf(keys), NextStepAfter: zonekeys.NextStepAfter(keys, rolloverWait(z))}
	}
	return v, nil
}

// rolloverRequest is the optional body of POST /zones/{id}/dnssec/rollover.
type rolloverRequest struct {
	// Force takes the step before the zone's TTLs have run out.
	Force bool `json:"force"`
}

// dnssecRollover answers POST /zones/{id}/dnssec/rollover: one step of the
// key rollover (publish the new key, sign with it, retire the old one).
func (s *server) dnssecRollover(w http.ResponseWriter, r *http.Request) {
	var req rolloverRequest
	if r.ContentLength != 0 {
		if err := readInto(w, r, &req); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	z, err := s.zoneForDNSSEC(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !z.DNSSEC.Enabled {
		s.writeError(w, r, rolloverRefused("the zone does not sign: set dnssec.enabled first"))
		return
	}
	keys, err := s.Store.UpdateZoneKeys(r.Context(), z.ID, func(cur []pools.ZoneKey) ([]pools.ZoneKey, error) {
		if len(cur) == 0 {
			return zonekeys.Ensure(z.Name, cur, s.Now())
		}
		next, _, err := zonekeys.Rollover(z.Name, cur, s.Now(), rolloverWait(z), req.Force)
		return next, err
	})
	var early *zonekeys.TooEarlyError
	if errors.As(err, &early) {
		s.writeError(w, r, rolloverRefused(early.Error()+"; resolvers may still hold the previous step (send {\"force\": true} to take it anyway)"))
		return
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if v := s.writeDNSSECView(w, r, z, keys); v != nil {
		s.log.Info("dnssec rollover step", "zone", z.Name, "phase", v.Rollover.Phase, "force", req.Force, "by", callerOf(r.Context()))
	}
}

// rolloverRefused is the 409 of a rollover step not taken, saying why.
func rolloverRefused(why string) *Problem {
	p := newProblem(http.StatusConflict, why)
	p.Type, p.Title = problemRollover, "Rollover refused"
	return p
}
