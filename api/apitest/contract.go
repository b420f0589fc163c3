// Package apitest holds the API's responses to its OpenAPI document, for
// the tests of every package that serves or calls the API. A response the
// document does not describe fails the test that saw it: a field, status
// or required header missing from the document, a route it does not list.
// The document is then kept true by the tests themselves, not by review.
package apitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/glb-dns/glb/api"
)

// Contract is the parsed, validated OpenAPI document of package api.
type Contract struct {
	doc    *openapi3.T
	router routers.Router
}

var (
	loadOnce sync.Once
	loaded   *Contract
	loadErr  error
)

// Load parses api.OpenAPI() and validates it as an OpenAPI document, once
// per process.
func Load() (*Contract, error) {
	loadOnce.Do(func() { loaded, loadErr = parse(api.OpenAPI()) })
	return loaded, loadErr
}

// Must is Load for tests: an invalid document fails t.
func Must(t testing.TB) *Contract {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatalf("api/openapi.json: %v", err)
	}
	return c
}

func parse(b []byte) (*Contract, error) {
	// A zone file (RFC 4027) is checked as the string it is.
	openapi3filter.RegisterBodyDecoder("text/dns", openapi3filter.PlainBodyDecoder)
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	// Routes are matched on the path alone: the document's one server is
	// "/", wherever the server under test listens.
	doc.Servers = nil
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	return &Contract{doc: doc, router: r}, nil
}

// Doc is the parsed document.
func (c *Contract) Doc() *openapi3.T { return c.doc }

// Check reports how one response to req differs from the document, or
// nil when the document describes it: the route, the status, the
// required headers and every member of the body (the schemas refuse
// members they do not name). Requests to a path or method the document
// does not list must be answered with its NotFound, MethodNotAllowed (with
// Allow naming the documented methods) or Unauthorized response.
func (c *Contract) Check(req *http.Request, status int, header http.Header, body []byte) error {
	err := c.check(req, status, header, body)
	if err != nil {
		return fmt.Errorf("%s %s answered %d, which api/openapi.json does not describe: %s",
			req.Method, req.URL.RequestURI(), status, brief(err))
	}
	return nil
}

// brief names what is undocumented (the member's JSON pointer and the
// rule it breaks) without kin-openapi's dump of the whole schema and
// value, which would bury it.
func brief(err error) string {
	var re *openapi3filter.ResponseError
	if errors.As(err, &re) && re.Err != nil {
		return re.Reason + ": " + brief(re.Err)
	}
	var me openapi3.MultiError
	if errors.As(err, &me) {
		parts := make([]string, len(me))
		for i, e := range me {
			parts[i] = brief(e)
		}
		return strings.Join(parts, "; ")
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return fmt.Sprintf("at %q: %s", "/"+strings.Join(se.JSONPointer(), "/"), se.Reason)
	}
	return err.Error()
}

func (c *Contract) check(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return c.checkUnrouted(req, status, header, body)
	}
	resp := route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		return fmt.Errorf("status %d is not among the documented responses of %s %s",
			status, strings.ToUpper(route.Method), route.Path)
	}
	if req.Method == http.MethodHead || status == http.StatusNotModified {
		// kin-openapi skips these; they have headers and no body.
		if len(body) > 0 {
			return fmt.Errorf("a %s answer has a body of %d bytes", describe(req, status), len(body))
		}
		return validate(route.Spec, req, params, resp.Value, header, nil, true)
	}
	return validate(route.Spec, req, params, resp.Value, header, body, false)
}

func describe(req *http.Request, status int) string {
	if req.Method == http.MethodHead {
		return "HEAD"
	}
	return fmt.Sprint(status)
}

// validate runs openapi3filter on one documented response. headersOnly
// validates HEAD and 304 answers, which openapi3filter skips, as a
// bodiless 200 GET.
func validate(doc *openapi3.T, req *http.Request, params map[string]string, resp *openapi3.Response,
	header http.Header, body []byte, headersOnly bool) error {
	status := 200
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, &openapi3.ResponseRef{Value: resp}))
	r := req
	if headersOnly {
		r = req.Clone(req.Context())
		r.Method = http.MethodGet
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: r, PathParams: params,
			Route: &routers.Route{Spec: doc, Path: req.URL.Path, Method: r.Method, Operation: op},
		},
		Status: status,
		Header: header,
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: headersOnly,
		},
	}
	in.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(req.Context(), in)
}

// Route finds the documented operation of req.
func (c *Contract) Route(req *http.Request) (*routers.Route, map[string]string, error) {
	return c.router.FindRoute(req)
}

// methods lists the methods the document gives the path of req.
func (c *Contract) methods(req *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		r := req.Clone(req.Context())
		r.Method = m
		if _, _, err := c.router.FindRoute(r); err == nil {
			out = append(out, m)
		}
	}
	return out
}

func (c *Contract) checkUnrouted(req *http.Request, status int, header http.Header, body []byte) error {
	allowed := c.methods(req)
	name := "NotFound"
	switch {
	case status == http.StatusUnauthorized && underPrefix(req.URL.Path):
		name = "Unauthorized"
	case status == http.StatusForbidden && underPrefix(req.URL.Path):
		// A token's scope is checked with it, before routing too.
		name = "Forbidden"
	case len(allowed) > 0:
		if status != http.StatusMethodNotAllowed {
			return fmt.Errorf("%s is not documented on this path (only %s), so the answer must be 405", req.Method, strings.Join(allowed, ", "))
		}
		got := strings.Split(header.Get("Allow"), ", ")
		if !slices.Equal(got, allowed) {
			return fmt.Errorf("Allow %q, but the document gives this path %s", header.Get("Allow"), strings.Join(allowed, ", "))
		}
		name = "MethodNotAllowed"
	case status != http.StatusNotFound:
		return errors.New("the document has no such path, so the answer must be 404")
	}
	resp := c.doc.Components.Responses[name]
	if resp == nil || resp.Value == nil {
		return fmt.Errorf("components.responses.%s is missing", name)
	}
	if req.Method == http.MethodHead {
		return validate(c.doc, req, nil, resp.Value, header, nil, true)
	}
	return validate(c.doc, req, nil, resp.Value, header, body, false)
}

// Client returns an HTTP client that checks every response it receives
// against the document and reports a mismatch with t.Errorf. base may be
// nil (http.DefaultTransport).
func (c *Contract) Client(t testing.TB, base http.RoundTripper) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: &checkingTransport{c: c, t: t, base: base}}
}

type checkingTransport struct {
	c    *Contract
	t    testing.TB
	base http.RoundTripper
}

func (ct *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := ct.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read response body: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err := ct.c.Check(req, resp.StatusCode, resp.Header, b); err != nil {
		ct.t.Errorf("%v", err)
	}
	return resp, nil
}

// underPrefix: the API authenticates everything under its prefix before
// routing, so a 401 is a documented answer there for any path.
func underPrefix(p string) bool {
	return p == api.Prefix || strings.HasPrefix(p, api.Prefix+"/")
}
