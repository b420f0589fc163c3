package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/glb-dns/glb/internal/apiclient"
)

// client is the part of glb's REST API the provider uses. It decodes only
// the members it reads and writes with merge patches of only the members
// it changes, so that a newer glbd's fields are kept, not dropped.
type client struct {
	api *apiclient.Client
}

func newClient(server, token string) *client {
	return &client{api: apiclient.New(server, token)}
}

// statusOf is the status of an answer other than 2xx (0 for none).
func statusOf(err error) int {
	var ae *apiclient.Error
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// Conflicts the provider resolves by reading again: 412 (someone wrote
// since it read), 409 (someone made the object it was about to make).
func isStale(err error) bool { return statusOf(err) == http.StatusPreconditionFailed }

// remove deletes the object at path if it is still at revision rev:
// stale is true when it has changed since (read it again and decide
// anew); an object already gone counts as removed.
func (p *provider) remove(ctx context.Context, path string, rev int64) (stale bool, err error) {
	err = p.cl.do(ctx, http.MethodDelete, path, nil, rev, nil)
	if isStale(err) {
		return true, nil
	}
	if statusOf(err) == http.StatusNotFound {
		return false, nil
	}
	return false, err
}

const prefix = "/api/v1"

// do sends one request with an optional JSON body and If-Match revision
// (0: none), decoding the result member of the answer into out.
func (c *client) do(ctx context.Context, method, path string, body any, ifMatch int64, out any) error {
	r := apiclient.Request{Method: method, Path: path}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r.Body = b
		if method == http.MethodPatch {
			r.ContentType = "application/merge-patch+json"
		}
	}
	if ifMatch > 0 {
		r.IfMatch = `"` + strconv.FormatInt(ifMatch, 10) + `"`
	}
	a, err := c.api.Send(ctx, r)
	if err != nil {
		return err
	}
	if out == nil || a.Status == http.StatusNoContent {
		return nil
	}
	env := struct {
		Result any `json:"result"`
	}{Result: out}
	if err := json.Unmarshal(a.Body, &env); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// list reads every page of a collection; a page of a thousand large
// objects may be larger than a single answer's bound.
func list[T any](ctx context.Context, c *client, kind string) ([]T, error) {
	return apiclient.List[T](ctx, c.api, prefix+"/"+kind, 1000, 256<<20)
}

func objectPath(kind, id string) string { return prefix + "/" + kind + "/" + url.PathEscape(id) }

// The members of glb's objects the provider reads. Origins and records
// are also kept as they came (Raw), so that those of others go back
// unchanged when the provider rewrites the list they are in.

type glbZone struct {
	ID       string            `json:"id"`
	Revision int64             `json:"revision"`
	Name     string            `json:"name"`
	Records  []json.RawMessage `json:"records"`
}

type glbRecord struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Content string `json:"content"`
	TTL     uint32 `json:"ttl,omitempty"`
	Owner   string `json:"owner,omitempty"`
}

type glbPool struct {
	ID       string            `json:"id"`
	Revision int64             `json:"revision"`
	Name     string            `json:"name"`
	Monitor  string            `json:"monitor"`
	Owner    string            `json:"owner"`
	Origins  []json.RawMessage `json:"origins"`
}

type glbOrigin struct {
	Name    string  `json:"name"`
	Address string  `json:"address"`
	Weight  float64 `json:"weight"`
	Owner   string  `json:"owner,omitempty"`
}

type glbLB struct {
	ID             string              `json:"id"`
	Revision       int64               `json:"revision"`
	Zone           string              `json:"zone"`
	Name           string              `json:"name"`
	TTL            uint32              `json:"ttl"`
	DefaultPools   []string            `json:"default_pools"`
	FallbackPool   string              `json:"fallback_pool"`
	RegionPools    map[string][]string `json:"region_pools"`
	CountryPools   map[string][]string `json:"country_pools"`
	RandomSteering struct {
		PoolWeights map[string]float64 `json:"pool_weights"`
	} `json:"random_steering"`
	Owner string `json:"owner"`
}

func (c *client) zone(ctx context.Context, id string) (glbZone, error) {
	var z glbZone
	err := c.do(ctx, http.MethodGet, objectPath("zones", id), nil, 0, &z)
	return z, err
}

func (c *client) pool(ctx context.Context, id string) (*glbPool, error) {
	var p glbPool
	if err := c.do(ctx, http.MethodGet, objectPath("pools", id), nil, 0, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func (c *client) loadBalancer(ctx context.Context, id string) (*glbLB, error) {
	var l glbLB
	if err := c.do(ctx, http.MethodGet, objectPath("load_balancers", id), nil, 0, &l); err != nil {
		return nil, err
	}
	return &l, nil
}
