// Package apiclient sends requests to one glb node's REST API for the
// programs that drive it from outside (glbctl, glb-externaldns): the
// headers, the bound on an answer's size and what counts as a refusal are
// decided here once, and each program decodes the answers its own way.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client talks to one node.
type Client struct {
	base  string // scheme://host[:port], no trailing slash
	token string
	http  *http.Client
}

// New returns a client for the node at server (a base URL); token, when
// not empty, is sent as a bearer token.
func New(server, token string) *Client {
	return &Client{base: strings.TrimSuffix(server, "/"), token: token, http: &http.Client{Timeout: 30 * time.Second}}
}

// Request is one call. Body, when not nil, is sent as ContentType
// (application/json when empty); IfMatch, when not empty, as If-Match.
// Limit bounds the answer read (64 MiB when 0): a list page of large
// objects may want more.
type Request struct {
	Method, Path string
	Body         []byte
	ContentType  string
	IfMatch      string
	Limit        int64
}

// Answer is a 2xx answer.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Error is an answer other than 2xx; Body is what the server sent, as a
// rule a problem document.
type Error struct {
	Method, Path string
	Status       int
	Body         []byte
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, http.StatusText(e.Status), bytes.TrimSpace(e.Body))
}

// Send sends r and reads the answer; any status but 2xx is an *Error.
func (c *Client) Send(ctx context.Context, r Request) (*Answer, error) {
	var rd io.Reader
	if r.Body != nil {
		rd = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, c.base+r.Path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
	}
	req.Header.Set("Accept", "application/json")
	if r.Body != nil {
		ct := r.ContentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if r.IfMatch != "" {
		req.Header.Set("If-Match", r.IfMatch)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
	}
	defer resp.Body.Close()
	limit := r.Limit
	if limit == 0 {
		limit = 64 << 20
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", r.Method, r.Path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &Error{Method: r.Method, Path: r.Path, Status: resp.StatusCode, Body: b}
	}
	return &Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// List reads every page of the collection at path (no query of its own),
// perPage objects a page, each answer read up to limit (as Request's).
func List[T any](ctx context.Context, c *Client, path string, perPage int, limit int64) ([]T, error) {
	var all []T
	for page := 1; ; page++ {
		p := fmt.Sprintf("%s?per_page=%d&page=%d", path, perPage, page)
		a, err := c.Send(ctx, Request{Method: http.MethodGet, Path: p, Limit: limit})
		if err != nil {
			return nil, err
		}
		var env struct {
			Result     []T `json:"result"`
			ResultInfo struct {
				TotalPages int `json:"total_pages"`
			} `json:"result_info"`
		}
		if err := json.Unmarshal(a.Body, &env); err != nil {
			return nil, fmt.Errorf("GET %s: decoding the answer: %w", p, err)
		}
		all = append(all, env.Result...)
		if page >= env.ResultInfo.TotalPages || len(env.Result) == 0 {
			return all, nil
		}
	}
}
