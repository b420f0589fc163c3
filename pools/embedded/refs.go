package embedded

import (
	"bytes"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

type ref struct {
	kind pools.Kind
	id   string
}

// targetsOf lists, once each, what o refers to: a load balancer its zone
// and pools, a pool its monitors (pools.ReferrersIn's relations); name is
// o's, as its referrers are reported.
func targetsOf(o pools.Object) (name string, out []ref) {
	add := func(k pools.Kind, id string) {
		if id != "" && !slices.Contains(out, ref{k, id}) {
			out = append(out, ref{k, id})
		}
	}
	switch v := o.(type) {
	case *pools.LoadBalancer:
		name = v.Name
		add(pools.KindZone, v.Zone)
		for _, r := range v.PoolRefs() {
			add(pools.KindPool, r.Pool)
		}
	case *pools.Pool:
		name = v.Name
		add(pools.KindMonitor, v.Monitor)
		for _, m := range v.Monitors {
			add(pools.KindMonitor, m.Monitor)
		}
	}
	return name, out
}

func refPrefix(target ref) []byte {
	return []byte(string(target.kind) + "\x00" + target.id + "\x00")
}

func refKey(target, from ref) []byte {
	return append(refPrefix(target), string(from.kind)+"\x00"+from.id...)
}

// indexRefs adds (add) or drops o's references.
func indexRefs(tx *bbolt.Tx, o pools.Object, add bool) error {
	b := tx.Bucket(refsBucket)
	from := ref{o.Kind(), o.ObjectMeta().ID}
	name, targets := targetsOf(o)
	for _, target := range targets {
		var err error
		if add {
			err = b.Put(refKey(target, from), []byte(name))
		} else {
			err = b.Delete(refKey(target, from))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// referrers reads the index: who refers to target, in the order both
// stores report them.
func referrers(tx *bbolt.Tx, target ref) []pools.Referrer {
	var out []pools.Referrer
	prefix := refPrefix(target)
	c := tx.Bucket(refsBucket).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		kind, id, _ := bytes.Cut(k[len(prefix):], []byte{0})
		out = append(out, pools.Referrer{Kind: pools.Kind(kind).Singular(), ID: string(id), Name: string(v)})
	}
	pools.SortReferrers(out)
	return out
}

// initRefs creates the index, from the objects there are when a store
// written before it opens.
func initRefs(tx *bbolt.Tx) error {
	if tx.Bucket(refsBucket) != nil {
		return nil
	}
	if _, err := tx.CreateBucket(refsBucket); err != nil {
		return err
	}
	for _, k := range []pools.Kind{pools.KindLoadBalancer, pools.KindPool} {
		var objs []pools.Object
		if err := each(tx, k, func(o pools.Object) { objs = append(objs, o) }); err != nil {
			return err
		}
		for _, o := range objs {
			if err := indexRefs(tx, o, true); err != nil {
				return err
			}
		}
	}
	return nil
}
