package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/glb-dns/glb/pools"
)

// resolve returns the id of the object of kind k that ref names: its id,
// or else its name (a load balancer's or zone's in any case, with or
// without the trailing dot), as the console takes either. A name that
// several objects share is an error listing their ids, so that the one
// meant can be given. A reference nothing matches is returned as it is,
// for the API to answer.
func (c *client) resolve(ctx context.Context, k pools.Kind, ref string) (string, error) {
	raws, err := c.list(ctx, k)
	if err != nil {
		return "", err
	}
	var ids []string
	want := pools.CanonicalName(ref)
	for _, raw := range raws {
		var o struct{ ID, Name string }
		if err := json.Unmarshal(raw, &o); err != nil {
			return "", fmt.Errorf("decoding a stored %s: %w", k.Singular(), err)
		}
		if o.ID == ref {
			return o.ID, nil
		}
		if o.Name != "" && pools.CanonicalName(o.Name) == want {
			ids = append(ids, o.ID)
		}
	}
	switch len(ids) {
	case 0:
		// Neither an id nor a name this token sees: the API says why
		// (404, or 403 for an object outside a zone-scoped token's).
		return ref, nil
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%d %ss are named %q; give one of their ids: %s", len(ids), k.Singular(), ref, strings.Join(ids, ", "))
}

// resolveOrigin resolves the pool of a POOL/ORIGIN reference by id or
// name.
func (c *client) resolveOrigin(ctx context.Context, ref string) (string, error) {
	pool, origin, ok := strings.Cut(ref, "/")
	if !ok {
		return ref, nil // the API says what is wrong with it
	}
	id, err := c.resolve(ctx, pools.KindPool, pool)
	if err != nil {
		return "", err
	}
	return id + "/" + origin, nil
}

// shownAddress is an origin's address as a table shows it: a hostname
// says it is answered as a CNAME, so that a mistyped address is not taken
// for an IP.
func shownAddress(a string) string {
	if _, isIP := pools.ParseAddress(a); isIP {
		return a
	}
	return a + " (CNAME)"
}
