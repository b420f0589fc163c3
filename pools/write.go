package pools

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// Tx is a store's write transaction as the write rules below see it. Both
// stores implement it over their own transaction so that the rules (ids,
// revisions, validation with references, uniqueness, referential
// integrity, SOA serials) are written once.
type Tx interface {
	// BumpRevision advances the global revision and returns it. The rules
	// call it first: writers then serialise on it, so what they read next
	// is what they write over.
	BumpRevision() (int64, error)
	// Get returns a fresh copy of a stored object, or ErrNotFound.
	Get(k Kind, id string) (Object, error)
	Exists(k Kind, id string) (bool, error)
	// Owner returns the id of the object of kind k whose UniqueKey is key.
	Owner(k Kind, key string) (id string, ok bool, err error)
	// Referrers lists the objects that refer to (k, id): the load
	// balancers of a zone or of a pool, the pools of a monitor.
	Referrers(k Kind, id string) ([]Referrer, error)
	// Put stores o; old is the stored version it replaces, nil on create.
	Put(o, old Object) error
	// Remove deletes a stored object.
	Remove(old Object) error
}

// Singular is the kind's name for one object ("load_balancer"), used in
// error messages and referrers.
func (k Kind) Singular() string {
	s := string(k)
	if len(s) > 0 && s[len(s)-1] == 's' {
		return s[:len(s)-1]
	}
	return s
}

// Page sizes: the default and the largest, the same for the stores, the
// API and its clients.
const (
	DefaultPerPage = 20
	MaxPerPage     = 1000
)

// Bounds turns a page into an offset and a limit with the documented
// defaults (page 1, DefaultPerPage, at most MaxPerPage).
func (p Page) Bounds() (offset, limit int) {
	page, per := p.Page, p.PerPage
	if page < 1 {
		page = 1
	}
	if per < 1 {
		per = DefaultPerPage
	}
	per = min(per, MaxPerPage)
	return (page - 1) * per, per
}

// UniqueKey returns the field that must be unique among objects of o's
// kind and its canonical value: a zone's or load balancer's name, a
// network's prefix. ok is false for kinds without one.
func UniqueKey(o Object) (field, key string, ok bool) {
	switch v := o.(type) {
	case *Zone:
		return "name", CanonicalName(v.Name), true
	case *LoadBalancer:
		return "name", CanonicalName(v.Name), true
	case *Network:
		if p, err := netip.ParsePrefix(v.CIDR); err == nil {
			return "cidr", p.Masked().String(), true
		}
		return "cidr", v.CIDR, true
	}
	return "", "", false
}

// NextSerial returns the SOA serial after old: the Unix time when that is
// ahead of old in serial arithmetic (RFC 1982), else old+1, so that serials
// read as times yet several changes in one second still advance.
func NextSerial(old uint32, now time.Time) uint32 {
	n := uint32(now.Unix())
	if int32(n-old) > 0 {
		return n
	}
	return old + 1
}

// StoreTime is the precision and zone of the store's timestamps: PostgreSQL
// keeps microseconds, and both stores must return what they will read back.
func StoreTime(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

func checkID(id string) string {
	if len(id) > 64 {
		return "longer than 64 characters"
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "only letters, digits, - and _ are allowed"
		}
	}
	return ""
}

// Clone returns a deep copy of o, so a store never keeps or changes what
// its caller holds.
func Clone(o Object) (Object, error) {
	if z, ok := o.(*Zone); ok {
		// A zone is plain values but for two slices: copied by hand, as
		// the JSON round trip costs tens of milliseconds at 10,000
		// records, on every UPDATE of such a zone.
		c := *z
		c.Nameservers = slices.Clone(z.Nameservers)
		c.Records = slices.Clone(z.Records)
		return &c, nil
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	c := New(o.Kind())
	if c == nil {
		return nil, fmt.Errorf("unknown kind %q", o.Kind())
	}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, err
	}
	return c, nil
}

// canonicalize puts the names that stores compare into canonical form.
func canonicalize(o Object) {
	switch v := o.(type) {
	case *Zone:
		v.Name = CanonicalName(v.Name)
		// Lists read back as [] rather than null, so clients can iterate.
		v.Records = nonNil(v.Records)
	case *Pool:
		v.CheckRegions = nonNil(v.CheckRegions)
		v.Monitors = nonNil(v.Monitors)
	case *LoadBalancer:
		v.Name = CanonicalName(v.Name)
		// Every state has one name: an unset policy is stored as the
		// one it steers by (off, or geo with a geo map).
		v.SteeringPolicy = v.Policy()
	case *Network:
		if p, err := netip.ParsePrefix(v.CIDR); err == nil && p.Masked() == p {
			v.CIDR = p.String()
		}
	}
}

// txRefs answers References over a Tx; References cannot return errors,
// so the first one is kept and reported after validation.
type txRefs struct {
	tx  Tx
	err error
}

func (r *txRefs) ZoneName(id string) (string, bool) {
	o, err := r.tx.Get(KindZone, id)
	if err != nil {
		if !errors.Is(err, ErrNotFound) && r.err == nil {
			r.err = err
		}
		return "", false
	}
	return CanonicalName(o.(*Zone).Name), true
}

func (r *txRefs) exists(k Kind, id string) bool {
	ok, err := r.tx.Exists(k, id)
	if err != nil && r.err == nil {
		r.err = err
	}
	return ok
}

func (r *txRefs) PoolExists(id string) bool    { return r.exists(KindPool, id) }
func (r *txRefs) MonitorExists(id string) bool { return r.exists(KindMonitor, id) }

// check validates o in full against tx and adds what it finds to e, so
// that one ValidationError names every field at fault.
func check(tx Tx, o Object, e *errs) error {
	refs := &txRefs{tx: tx}
	verr := o.Validate(refs)
	if refs.err != nil {
		return refs.err
	}
	var ve *ValidationError
	if errors.As(verr, &ve) {
		e.list = append(e.list, ve.Errors...)
	} else if verr != nil {
		return verr
	}
	if field, key, ok := UniqueKey(o); ok {
		owner, found, err := tx.Owner(o.Kind(), key)
		if err != nil {
			return err
		}
		if found && owner != o.ObjectMeta().ID {
			e.add(field, "%q is already used by %s %s", key, o.Kind().Singular(), owner)
		}
	}
	return nil
}

// touchZone advances the serial of a zone whose contents changed.
func touchZone(tx Tx, zoneID string, now time.Time) error {
	o, err := tx.Get(KindZone, zoneID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	z := o.(*Zone)
	old := *z
	z.Serial = NextSerial(z.Serial, now)
	return tx.Put(z, &old)
}

// begin starts a write of o inside tx: the copy of o to change, the new
// global revision, and now at the store's precision.
func begin(tx Tx, o Object, now time.Time) (Object, int64, time.Time, error) {
	o, err := Clone(o)
	if err != nil {
		return nil, 0, now, err
	}
	rev, err := tx.BumpRevision()
	if err != nil {
		return nil, 0, now, err
	}
	return o, rev, StoreTime(now), nil
}

// CreateIn stores a new object inside tx: a copy of o with its id (NewID
// when empty), revision 1 and timestamps, validated in full. It returns the
// stored object and the new global revision.
func CreateIn(tx Tx, o Object, now time.Time) (Object, int64, error) {
	o, rev, now, err := begin(tx, o, now)
	if err != nil {
		return nil, 0, err
	}
	m := o.ObjectMeta()
	var e errs
	if m.ID == "" {
		m.ID = NewID()
	} else if msg := checkID(m.ID); msg != "" {
		e.add("id", "%s", msg)
	} else if ok, err := tx.Exists(o.Kind(), m.ID); err != nil {
		return nil, 0, err
	} else if ok {
		e.add("id", "a %s with id %q already exists", o.Kind().Singular(), m.ID)
	}
	m.Revision, m.CreatedOn, m.ModifiedOn = 1, now, now
	canonicalize(o)
	if err := check(tx, o, &e); err != nil {
		return nil, 0, err
	}
	if err := e.err(); err != nil {
		return nil, 0, err
	}
	switch v := o.(type) {
	case *Zone:
		v.Serial = NextSerial(0, now)
	case *LoadBalancer:
		if err := touchZone(tx, v.Zone, now); err != nil {
			return nil, 0, err
		}
	}
	if err := tx.Put(o, nil); err != nil {
		return nil, 0, err
	}
	return o, rev, nil
}

// fetch returns the stored (k, id), checking the caller's revision.
func fetch(tx Tx, k Kind, id string, ifRevision int64) (Object, error) {
	old, err := tx.Get(k, id)
	if err != nil {
		return nil, err
	}
	if ifRevision > 0 && old.ObjectMeta().Revision != ifRevision {
		return nil, fmt.Errorf("%s %s is at revision %d, not %d: %w",
			k.Singular(), id, old.ObjectMeta().Revision, ifRevision, ErrStale)
	}
	return old, nil
}

// ReplaceIn overwrites the stored object with o's id inside tx; ifRevision
// > 0 must be its revision. It returns the stored object and the new
// global revision.
func ReplaceIn(tx Tx, o Object, ifRevision int64, now time.Time) (Object, int64, error) {
	o, rev, now, err := begin(tx, o, now)
	if err != nil {
		return nil, 0, err
	}
	m := o.ObjectMeta()
	old, err := fetch(tx, o.Kind(), m.ID, ifRevision)
	if err != nil {
		return nil, 0, err
	}
	om := old.ObjectMeta()
	m.Revision, m.CreatedOn, m.ModifiedOn = om.Revision+1, om.CreatedOn, now
	canonicalize(o)
	var e errs
	if err := check(tx, o, &e); err != nil {
		return nil, 0, err
	}
	switch v := o.(type) {
	case *Zone:
		if err := checkRename(tx, v, old.(*Zone), &e); err != nil {
			return nil, 0, err
		}
		v.Serial = NextSerial(old.(*Zone).Serial, now)
	case *LoadBalancer:
		if e.err() == nil {
			if err := touchZone(tx, v.Zone, now); err != nil {
				return nil, 0, err
			}
			if prev := old.(*LoadBalancer).Zone; prev != v.Zone {
				if err := touchZone(tx, prev, now); err != nil {
					return nil, 0, err
				}
			}
		}
	}
	if err := e.err(); err != nil {
		return nil, 0, err
	}
	if err := tx.Put(o, old); err != nil {
		return nil, 0, err
	}
	return o, rev, nil
}

// checkRename refuses a new zone name that would leave one of its load
// balancers outside the zone.
func checkRename(tx Tx, z, old *Zone, e *errs) error {
	if CanonicalName(z.Name) == CanonicalName(old.Name) {
		return nil
	}
	refs, err := tx.Referrers(KindZone, z.ID)
	if err != nil {
		return err
	}
	for _, r := range refs {
		if !InZone(CanonicalName(r.Name), CanonicalName(z.Name)) {
			e.add("name", "load balancer %s (%s) would be outside the zone", r.ID, r.Name)
		}
	}
	return nil
}

// DeleteIn removes (k, id) inside tx unless another object refers to it
// (*ConflictError naming every referrer). It returns the new global
// revision.
func DeleteIn(tx Tx, k Kind, id string, ifRevision int64, now time.Time) (int64, error) {
	rev, err := tx.BumpRevision()
	if err != nil {
		return 0, err
	}
	old, err := fetch(tx, k, id, ifRevision)
	if err != nil {
		return 0, err
	}
	refs, err := tx.Referrers(k, id)
	if err != nil {
		return 0, err
	}
	if len(refs) > 0 {
		return 0, &ConflictError{Kind: k.Singular(), ID: id, Referrers: refs}
	}
	if lb, ok := old.(*LoadBalancer); ok {
		if err := touchZone(tx, lb.Zone, StoreTime(now)); err != nil {
			return 0, err
		}
	}
	if err := tx.Remove(old); err != nil {
		return 0, err
	}
	return rev, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
