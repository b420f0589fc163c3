// Command checker runs glb's health checker alone against real local
// HTTP listeners and reports, every window, the probes per second the
// listeners saw against the rate the monitors ask for, and the process's
// open file descriptors, goroutines and RSS, so that growth shows.
//
//	go run ./bench/checker                          # 102,400 targets, 60 s, 10 min
//	go run ./bench/checker -duration 2m -window 10s
//
// The targets are pools of 64 origins on 127.2.0.1-64 (one port), so
// 100,000 of them need only 64 listeners.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/glb-dns/glb/healthcheck"
	"github.com/glb-dns/glb/pools"
)

var (
	numPools   = flag.Int("pools", 1600, "pools of 64 origins under one monitor")
	interval   = flag.Int("interval", 60, "monitor interval, seconds")
	duration   = flag.Duration("duration", 10*time.Minute, "how long to run")
	window     = flag.Duration("window", 30*time.Second, "reporting window")
	concurrent = flag.Int("concurrent", 0, "checker MaxConcurrent (0: its default)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "checker:", err)
		os.Exit(1)
	}
}

func run() error {
	var probes atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { probes.Add(1) })
	port := "0"
	for j := range 64 {
		ln, err := net.Listen("tcp", net.JoinHostPort(fmt.Sprintf("127.2.0.%d", j+1), port))
		if err != nil {
			return err
		}
		_, port, _ = net.SplitHostPort(ln.Addr().String())
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
	}
	p, _ := strconv.Atoi(port)
	m := pools.DefaultMonitor()
	m.ID, m.Port, m.Interval, m.Timeout, m.Retries = "m", p, *interval, 5, 0
	cfg := &pools.Config{Monitors: []pools.Monitor{m}}
	for i := range *numPools {
		pl := pools.DefaultPool()
		pl.ID, pl.Name, pl.Monitor = fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", i), "m"
		for j := range 64 {
			o := pools.DefaultOrigin()
			o.Name, o.Address = fmt.Sprintf("o%d", j), fmt.Sprintf("127.2.0.%d", j+1)
			pl.Origins = append(pl.Origins, o)
		}
		cfg.Pools = append(cfg.Pools, pl)
	}
	c := healthcheck.New(healthcheck.Options{Node: "bench", Region: "WEU", MaxConcurrent: *concurrent,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	c.Update(cfg)
	go c.Run(ctx)
	go func() { // the node drains state changes
		for range c.Changes() {
		}
	}()

	targets := *numPools * 64
	want := float64(targets) / float64(*interval)
	fmt.Printf("%d targets, interval %d s: %.0f probes/s wanted; %s windows over %s (shared machine: %d CPUs)\n",
		targets, *interval, want, *window, *duration, runtime.NumCPU())
	fmt.Println("elapsed  probes/s  vs wanted  fds  goroutines  RSS")
	start := time.Now()
	last := probes.Load()
	tick := time.NewTicker(*window)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		n := probes.Load()
		rate := float64(n-last) / window.Seconds()
		last = n
		fmt.Printf("%7s  %8.0f  %+8.1f%%  %4d  %10d  %s\n", time.Since(start).Round(time.Second), rate,
			100*(rate-want)/want, fds(), runtime.NumGoroutine(), rss())
	}
}

func fds() int {
	e, _ := os.ReadDir("/proc/self/fd")
	return len(e)
}

func rss() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return strings.Join(strings.Fields(l)[1:], " ")
		}
	}
	return "?"
}
