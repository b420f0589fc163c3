package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// apiClient calls the nodes' REST APIs from the client namespace, as an
// operator's machine would.
type apiClient struct {
	http *http.Client
}

func newAPIClient(ns string) *apiClient {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := inNS(ns, func() error {
			var err error
			c, err = (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	return &apiClient{http: &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true},
	}}
}

// call sends one request; out (if not nil) receives the "result" member.
func (a *apiClient) call(n *node, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, n.api()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s on %s: %w", method, path, n.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s on %s: %s: %s", method, path, n.name, resp.Status, b)
	}
	if out == nil {
		return nil
	}
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("%s %s on %s: %w", method, path, n.name, err)
	}
	return json.Unmarshal(env.Result, out)
}

// poolChecks is the part of GET /pools/{id}/health the drills read.
type poolChecks struct {
	Origins []struct {
		Name    string `json:"name"`
		Healthy *bool  `json:"healthy"`
		Checks  []struct {
			Node                string  `json:"node"`
			Healthy             bool    `json:"healthy"`
			PublishedAgeSeconds float64 `json:"published_age_seconds"`
		} `json:"checks"`
	} `json:"origins"`
}
