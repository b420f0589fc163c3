package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// provider answers ExternalDNS's webhook calls for one zone and one owner.
type provider struct {
	cl       *client
	zoneID   string
	zoneName string
	owner    string
	monitor  string // default monitor of the pools it makes
	log      *slog.Logger

	mu sync.Mutex
	// operatorLBs are the names whose load balancer an operator made, as
	// the last Records read them: their TTL is the operator's, so
	// AdjustEndpoints drops the TTL the endpoints ask for there.
	operatorLBs map[string]bool
}

// maxBody bounds a request from ExternalDNS: a plan of tens of thousands
// of endpoints fits.
const maxBody = 64 << 20

// webhook routes the protocol: GET / negotiates, GET and POST /records
// read and apply, POST /adjustendpoints canonicalises.
func (p *provider) webhook() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", p.negotiate)
	m.HandleFunc("GET /records", p.records)
	m.HandleFunc("POST /records", p.applyChanges)
	m.HandleFunc("POST /adjustendpoints", p.adjustEndpoints)
	m.HandleFunc("GET /healthz", healthz)
	m.HandleFunc("GET /readyz", p.readyz)
	return m
}

// health serves the kubelet's probes on their own listener.
func (p *provider) health() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /healthz", healthz)
	m.HandleFunc("GET /readyz", p.readyz)
	return m
}

// healthz answers 200 while the process serves: a liveness probe, since a
// restart mends nothing glb's absence causes.
func healthz(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }

func (p *provider) negotiate(w http.ResponseWriter, _ *http.Request) {
	writeWebhook(w, http.StatusOK, domainFilter{Include: []string{p.zoneName}})
}

func (p *provider) records(w http.ResponseWriter, r *http.Request) {
	eps, err := p.Records(r.Context())
	if err != nil {
		p.fail(w, "read records", err)
		return
	}
	writeWebhook(w, http.StatusOK, eps)
}

func (p *provider) applyChanges(w http.ResponseWriter, r *http.Request) {
	var ch changes
	if err := decodeBody(w, r, &ch); err != nil {
		p.log.Warn("bad changes", "err", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := p.ApplyChanges(r.Context(), &ch); err != nil {
		p.fail(w, "apply changes", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *provider) adjustEndpoints(w http.ResponseWriter, r *http.Request) {
	var eps []*endpoint
	if err := decodeBody(w, r, &eps); err != nil {
		p.log.Warn("bad endpoints", "err", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	writeWebhook(w, http.StatusOK, p.AdjustEndpoints(eps))
}

// readyz answers 200 while glb answers for the zone: the provider is of
// no use without it, and a probe that says so shows where the fault is.
func (p *provider) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if _, err := p.cl.zone(ctx, p.zoneID); err != nil {
		http.Error(w, "glb: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	io.WriteString(w, "ok\n")
}

// fail answers 500, which ExternalDNS retries at its next sync (it treats
// 5xx as soft errors); the details go to the log, where an operator looks.
func (p *provider) fail(w http.ResponseWriter, what string, err error) {
	p.log.Error(what+" failed", "err", err)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		return errors.New("decoding the body: " + err.Error())
	}
	return nil
}

func writeWebhook(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", mediaType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
