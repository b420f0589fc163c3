package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/internal/apiclient"
	"github.com/glb-dns/glb/pools"
)

const apiPrefix = api.Prefix

// client talks to one glb node's REST API.
type client struct {
	api *apiclient.Client
	// base is the server, scheme://host[:port] without a trailing slash,
	// that a saved plan names.
	base string
	// perPage is the page size of lists: the API's largest, smaller in a
	// test that pages through a few objects.
	perPage int
}

func newClient(c common) (*client, error) {
	u, err := url.Parse(c.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--server %q: want a URL such as http://127.0.0.1:8080", c.server)
	}
	token := c.token
	if token == "" {
		token = c.envToken
	}
	return &client{api: apiclient.New(c.server, token), base: strings.TrimSuffix(c.server, "/"), perPage: pools.MaxPerPage}, nil
}

// apiError is a non-2xx answer.
type apiError struct {
	Method, Path string
	Status       int
	Problem      api.Problem
	// Override is the flag of the command that overrides a refusal by
	// safety rules, named after the rules it lists.
	Override string
}

// overridable names flag as what overrides err, when err is a refusal by
// safety rules.
func overridable(err error, flag string) error {
	var ae *apiError
	if errors.As(err, &ae) && len(ae.Problem.Safety) > 0 {
		ae.Override = flag
	}
	return err
}

func (e *apiError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Problem.Detail != "" {
		b.WriteString(": " + e.Problem.Detail)
	}
	for _, fe := range e.Problem.Errors {
		fmt.Fprintf(&b, "\n  %s: %s", fe.Path, fe.Message)
	}
	if e.Problem.MissingScope != "" {
		fmt.Fprintf(&b, "\n  the token lacks the scope %q", e.Problem.MissingScope)
	}
	for _, h := range e.Problem.Safety {
		if h.LoadBalancer == "" { // a global rule
			fmt.Fprintf(&b, "\n  safety rule %s across load balancers %s: %s", h.Rule, strings.Join(h.LoadBalancers, ", "), h.Message)
			continue
		}
		fmt.Fprintf(&b, "\n  safety rule %s on load balancer %s: %s", h.Rule, h.LoadBalancer, h.Message)
	}
	if e.Override != "" {
		fmt.Fprintf(&b, "\n  %s (with an admin token) overrides the safety rules", e.Override)
	}
	for _, r := range e.Problem.Referrers {
		fmt.Fprintf(&b, "\n  referred to by %s %s (%s)", r.Kind, r.ID, r.Name)
	}
	return b.String()
}

// do sends one request. A body is JSON; ifMatch, when not empty, is sent
// as If-Match. It returns the answer's body, and an *apiError for any
// status but 2xx.
func (c *client) do(ctx context.Context, method, path string, body []byte, ifMatch string) ([]byte, http.Header, error) {
	a, err := c.api.Send(ctx, apiclient.Request{Method: method, Path: path, Body: body, IfMatch: ifMatch})
	if err != nil {
		return nil, nil, withProblem(err)
	}
	return a.Body, a.Header, nil
}

// withProblem turns a refusal into an *apiError, which reads the problem
// document; other errors pass unchanged.
func withProblem(err error) error {
	var ae *apiclient.Error
	if !errors.As(err, &ae) {
		return err
	}
	e := &apiError{Method: ae.Method, Path: ae.Path, Status: ae.Status}
	_ = json.Unmarshal(ae.Body, &e.Problem) // a body that is not a problem still has its status
	return e
}

// result decodes the {"result": ...} envelope of a GET into out.
func (c *client) result(ctx context.Context, path string, out any) error {
	b, _, err := c.do(ctx, http.MethodGet, path, nil, "")
	if err != nil {
		return err
	}
	env := struct {
		Result any `json:"result"`
	}{Result: out}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("GET %s: decoding the answer: %w", path, err)
	}
	return nil
}

// post sends req as JSON and decodes the {"result": ...} envelope of the
// answer into out: a create that answers what it made (a secret shown
// once, an id the server chose).
func (c *client) post(ctx context.Context, path string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	b, _, err := c.do(ctx, http.MethodPost, path, body, "")
	if err != nil {
		return err
	}
	env := struct {
		Result any `json:"result"`
	}{Result: out}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("POST %s: decoding the answer: %w", path, err)
	}
	return nil
}

// list returns every object of a kind, in the API's raw JSON, reading
// page after page.
func (c *client) list(ctx context.Context, k pools.Kind) ([]json.RawMessage, error) {
	raws, err := apiclient.List[json.RawMessage](ctx, c.api, apiPrefix+"/"+string(k), c.perPage, 0)
	if err != nil {
		return nil, withProblem(err)
	}
	return raws, nil
}

// objects lists every object of a kind decoded into its Go type. The
// decoding is strict: a field this glbctl does not know means the server
// is newer, and comparing without it would hide a difference.
func (c *client) objects(ctx context.Context, k pools.Kind) ([]pools.Object, error) {
	raws, err := c.list(ctx, k)
	if err != nil {
		return nil, err
	}
	out := make([]pools.Object, 0, len(raws))
	for _, raw := range raws {
		o := pools.New(k)
		if err := json.Unmarshal(raw, o); err != nil {
			return nil, fmt.Errorf("decoding a stored %s (is the server newer than glbctl?): %w", k.Singular(), err)
		}
		out = append(out, o)
	}
	return out, nil
}

func objectPath(k pools.Kind, id string) string {
	return apiPrefix + "/" + string(k) + "/" + url.PathEscape(id)
}

// etag is the If-Match value for a revision, as the API sends its ETag.
func etag(rev int64) string { return `"` + strconv.FormatInt(rev, 10) + `"` }

// show fetches one API result and prints it: as the API sent it with -o
// json (or yaml), else drawn by render for a person.
func show(ctx context.Context, cl *client, path, format string, stdout, stderr io.Writer, render func(w io.Writer, raw json.RawMessage) error) int {
	var raw json.RawMessage
	err := cl.result(ctx, path, &raw)
	if err == nil {
		if format == "json" || format == "yaml" {
			err = printRaw(stdout, raw, format)
		} else {
			err = render(stdout, raw)
		}
	}
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	return exitOK
}

// showAs is show for a result of type T, which render prints as a table
// (what names the result in an error).
func showAs[T any](ctx context.Context, cl *client, path, format string, stdout, stderr io.Writer, what string, render func(w io.Writer, v T)) int {
	return show(ctx, cl, path, format, stdout, stderr, func(w io.Writer, raw json.RawMessage) error {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("decoding the %s: %w", what, err)
		}
		render(w, v)
		return nil
	})
}

// printAnswer prints the result of a write's answer b (err is the
// write's error): as it came for -o json or yaml, else decoded as T for
// render.
func printAnswer[T any](b []byte, err error, format string, stdout, stderr io.Writer, what string, render func(w io.Writer, v T)) int {
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err == nil {
		if err = json.Unmarshal(b, &env); err != nil {
			err = fmt.Errorf("decoding the answer: %w", err)
		}
	}
	if err == nil {
		if format == "json" || format == "yaml" {
			err = printRaw(stdout, env.Result, format)
		} else {
			var v T
			if err = json.Unmarshal(env.Result, &v); err != nil {
				err = fmt.Errorf("decoding the %s: %w", what, err)
			} else {
				render(stdout, v)
			}
		}
	}
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	return exitOK
}
