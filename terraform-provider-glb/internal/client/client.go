// Package client speaks glb's REST API (/api/v1) for the provider: the
// envelope, ETags and problem+json errors. It knows nothing of Terraform
// and imports nothing of glb's, so that the provider depends on the API
// as published, not on the server's code.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Client reaches one glb API.
type Client struct {
	base  string // scheme://host[:port], no trailing slash
	token string
	http  *http.Client
}

// New returns a client of the API at server (http://127.0.0.1:8080,
// https://glb.example.com), authenticated by token when it is set, and
// trusting the PEM certificates in caFile when it is set besides the
// system's.
func New(server, token, caFile string) (*Client, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server %q: want http://host:port or https://host[:port]", server)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file %s: no PEM certificate in it", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &Client{
		base:  strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/"),
		token: token,
		http:  &http.Client{Transport: tr, Timeout: 60 * time.Second},
	}, nil
}

// Error is an answer other than 2xx, with the problem+json it carried.
type Error struct {
	Method, Path string
	Status       int
	Type, Detail string
	// Fields are the validation errors: "path: message".
	Fields []string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d", e.Method, e.Path, e.Status)
	if e.Status == http.StatusPreconditionFailed {
		b.WriteString(": the object was changed by someone else since it was read (ETag no longer matches); refresh and plan again")
	} else if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	for _, f := range e.Fields {
		b.WriteString("\n  " + f)
	}
	return b.String()
}

// IsNotFound reports whether err is a 404.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// Object is one JSON object as the API answered it.
type Object = map[string]any

// Do sends body (nil: none) as JSON to path (under /api/v1) with ifMatch
// as If-Match when it is not empty, and decodes the answer's result into
// out when out is not nil. It returns the answer's ETag.
func (c *Client) Do(ctx context.Context, method, path string, body any, ifMatch string, out any) (string, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return "", err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v1"+path, rd)
	if err != nil {
		return "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return "", decodeError(method, path, resp.StatusCode, b)
	}
	if out != nil && len(b) > 0 {
		var env struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			return "", fmt.Errorf("%s %s: answer is not JSON: %w", method, path, err)
		}
		dec := json.NewDecoder(bytes.NewReader(env.Result))
		// Numbers stay as the server wrote them, so that 0.3 reads back
		// as the 0.3 a configuration wrote, not as a binary neighbour.
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			return "", fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return resp.Header.Get("ETag"), nil
}

func decodeError(method, path string, status int, b []byte) error {
	e := &Error{Method: method, Path: path, Status: status}
	var p struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Errors []struct {
			Path    string `json:"path"`
			Message string `json:"message"`
		} `json:"errors"`
		Referrers []struct {
			Kind, ID, Name string
		} `json:"referrers"`
	}
	if json.Unmarshal(b, &p) == nil {
		e.Type, e.Detail = p.Type, p.Detail
		if e.Detail == "" {
			e.Detail = p.Title
		}
		for _, f := range p.Errors {
			e.Fields = append(e.Fields, f.Path+": "+f.Message)
		}
		for _, r := range p.Referrers {
			e.Fields = append(e.Fields, fmt.Sprintf("referred to by %s %s (%s)", r.Kind, r.ID, r.Name))
		}
	} else {
		e.Detail = strings.TrimSpace(string(b))
	}
	return e
}

// Get reads one object and its ETag.
func (c *Client) Get(ctx context.Context, path string) (Object, string, error) {
	var o Object
	etag, err := c.Do(ctx, http.MethodGet, path, nil, "", &o)
	return o, etag, err
}

// List reads every page of a list.
func (c *Client) List(ctx context.Context, path string) ([]Object, error) {
	var all []Object
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for page := 1; ; page++ {
		var env struct {
			Result     []Object `json:"result"`
			ResultInfo struct {
				TotalPages int `json:"total_pages"`
			} `json:"result_info"`
		}
		req := path + sep + "per_page=1000&page=" + strconv.Itoa(page)
		if err := c.raw(ctx, req, &env); err != nil {
			return nil, err
		}
		all = append(all, env.Result...)
		if page >= env.ResultInfo.TotalPages {
			return all, nil
		}
	}
}

// raw GETs path and decodes the whole answer, envelope included.
func (c *Client) raw(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/api/v1"+path, nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return decodeError(http.MethodGet, path, resp.StatusCode, b)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(out)
}

// Raw GETs path and decodes the whole answer (envelope included) into out.
func (c *Client) Raw(ctx context.Context, path string, out any) error { return c.raw(ctx, path, out) }
