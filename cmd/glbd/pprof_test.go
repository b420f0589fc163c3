package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestPprofOffByDefaultAndLoopbackOnly(t *testing.T) {
	t.Parallel()
	c, err := parseConfig("glbd", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.PprofListen != "" {
		t.Errorf("pprof on by default at %q", c.PprofListen)
	}
	for _, addr := range []string{"0.0.0.0:6060", ":6060", "192.0.2.1:6060", "nope"} {
		if _, err := parseConfig("glbd", []string{"--pprof-listen", addr}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--pprof-listen") {
			t.Errorf("--pprof-listen %s: %v, want refused", addr, err)
		}
	}
	c, err = parseConfig("glbd", nil, env(map[string]string{"GLB_PPROF_LISTEN": "[::1]:6060"}), io.Discard)
	if err != nil || c.PprofListen != "[::1]:6060" {
		t.Errorf("GLB_PPROF_LISTEN: %v %+v", err, c)
	}
}

func TestPprofServes(t *testing.T) {
	t.Parallel()
	addr, stop, err := startPprof("127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline"} {
		resp, err := http.Get("http://" + addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s: %s, %d bytes", path, resp.Status, len(body))
		}
	}
	if resp, err := http.Get("http://" + addr.String() + "/api/v1/zones"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("the pprof listener answers the API: %s", resp.Status)
		}
	}
}
