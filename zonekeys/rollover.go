package zonekeys

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/glb-dns/glb/pools"
)

// Phase is where a zone's key rollover stands.
type Phase string

const (
	// PhaseIdle: one active key.
	PhaseIdle Phase = "idle"
	// PhasePublished: a new key is in the DNSKEY RRset (and its DS is
	// offered to the parent) but signs only the DNSKEY RRset.
	PhasePublished Phase = "published"
	// PhaseActivated: the new key signs everything; the old one stays in
	// the DNSKEY RRset, signing it, until resolvers holding its DS have let
	// it go.
	PhaseActivated Phase = "activated"
)

// ErrTooEarly: the rollover's next step would break resolvers that cached
// the previous state. Wrapped with when the step becomes safe.
var ErrTooEarly = errors.New("too early for the next rollover step")

// TooEarlyError says when the next step may be taken.
type TooEarlyError struct{ After time.Time }

func (e *TooEarlyError) Error() string {
	return fmt.Sprintf("%v: not before %s", ErrTooEarly, e.After.UTC().Format(time.RFC3339))
}
func (e *TooEarlyError) Unwrap() error { return ErrTooEarly }

// PhaseOf derives the phase from the key states.
func PhaseOf(keys []pools.ZoneKey) Phase {
	for _, k := range keys {
		switch k.State {
		case pools.KeyPublished:
			return PhasePublished
		case pools.KeyRetired:
			return PhaseActivated
		}
	}
	return PhaseIdle
}

// Ensure gives a zone without an active key one: a zone that turns DNSSEC
// on gets its key at once, from whichever node or API call gets there
// first (the store serialises them). Keys already there are kept.
func Ensure(apex string, keys []pools.ZoneKey, now time.Time) ([]pools.ZoneKey, error) {
	if slices.ContainsFunc(keys, func(k pools.ZoneKey) bool { return k.State == pools.KeyActive }) {
		return keys, nil
	}
	k, err := Generate(apex, pools.KeyActive, now)
	if err != nil {
		return nil, err
	}
	return append(keys, k), nil
}

// NextStepAfter is when the rollover's next step is safe: every state
// must have been visible for wait (the DNSKEY TTL and the time nodes take
// to pick a change up) before the next one relies on caches having seen it.
func NextStepAfter(keys []pools.ZoneKey, wait time.Duration) time.Time {
	var last time.Time
	for _, k := range keys {
		if k.StateSince.After(last) {
			last = k.StateSince
		}
	}
	return last.Add(wait)
}

// Rollover takes one step of a pre-publication rollover of the zone's key
// (RFC 6781 §4.1.1 and RFC 7583 §3.3 for a CSK: the DNSKEY RRset is signed
// by every key in it, so a resolver with either key's DS validates):
//
//	idle      → published: a new key joins the DNSKEY RRset;
//	published → activated: the new key signs everything, the old one retires;
//	activated → idle:      the retired key leaves.
//
// A step earlier than NextStepAfter(keys, wait) fails with *TooEarlyError
// unless force is set.
func Rollover(apex string, keys []pools.ZoneKey, now time.Time, wait time.Duration, force bool) ([]pools.ZoneKey, Phase, error) {
	if !slices.ContainsFunc(keys, func(k pools.ZoneKey) bool { return k.State == pools.KeyActive }) {
		return nil, "", errors.New("the zone has no active key to roll")
	}
	if after := NextStepAfter(keys, wait); !force && now.Before(after) {
		return nil, "", &TooEarlyError{After: after}
	}
	now = now.UTC()
	next := slices.Clone(keys)
	switch PhaseOf(keys) {
	case PhaseIdle:
		k, err := Generate(apex, pools.KeyPublished, now)
		if err != nil {
			return nil, "", err
		}
		return append(next, k), PhasePublished, nil
	case PhasePublished:
		for i := range next {
			switch next[i].State {
			case pools.KeyActive:
				next[i].State, next[i].StateSince = pools.KeyRetired, now
			case pools.KeyPublished:
				next[i].State, next[i].StateSince = pools.KeyActive, now
			}
		}
		return next, PhaseActivated, nil
	default:
		next = slices.DeleteFunc(next, func(k pools.ZoneKey) bool { return k.State == pools.KeyRetired })
		return next, PhaseIdle, nil
	}
}

// OfferedToParent reports whether a key's DS (and CDS, CDNSKEY) belongs at
// the parent: the active key and the one about to be. A retired key's DS
// is withdrawn while the key still signs the DNSKEY RRset, so that
// resolvers that cached it keep validating.
func OfferedToParent(k pools.ZoneKey) bool {
	return k.State == pools.KeyActive || k.State == pools.KeyPublished
}
