package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// validatePprof: profiles show the process's memory and code paths and
// the endpoint has no authentication, so it listens on loopback only;
// an operator reaches a remote node through a tunnel.
func (c *Config) validatePprof() []error {
	if c.PprofListen == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(c.PprofListen)
	if err != nil {
		return []error{fmt.Errorf("--pprof-listen %q: %w", c.PprofListen, err)}
	}
	if !isLoopback(host) {
		return []error{fmt.Errorf("--pprof-listen %s is not a loopback address", c.PprofListen)}
	}
	return nil
}

// startPprof serves the runtime profiles on addr until the returned stop
// is called. It has its own mux, so nothing reaches the API's.
func startPprof(addr string, log *slog.Logger) (bound net.Addr, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("pprof server stopped", "err", err)
		}
	}()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return ln.Addr(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
