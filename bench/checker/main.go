// Command checker runs glb's health checker alone against real local
// HTTP listeners and reports, every window, the checks per second the
// listeners saw against the rate the monitors ask for, and the process's
// open file descriptors, goroutines and RSS, so that growth shows. It
// exits 1 when
//
//   - a window's rate is more than -tolerance off the configured rate;
//
//   - descriptors or goroutines pass the bound the checks in flight set:
//     per check two sockets (the checker's and the listener's) and five
//     goroutines (the check, the HTTP client's dial, read and write loops,
//     the listener's connection);
//
//   - their floor rises: the fewest of the second half of the run above
//     the fewest of the first half (a leak raises the floor; checks in
//     flight, which a busy machine makes slow, only add spikes);
//
//   - once Run has returned, more of them are open than before it ran.
//
//     go run ./bench/checker                          # 102,400 targets, 60 s, 10 min
//     go run ./bench/checker -duration 2m -window 10s
//     go run ./bench/checker -slow 0.1                # a tenth of the origins hang until the timeout
//     go run ./bench/checker -types mixed             # pools of every monitor type in turn
//
// The targets are pools of 64 origins on 127.2.0.1-64 (one port), so
// 100,000 of them need only 64 listeners; slow origins are on 127.2.1.x.
// With -types the pools take the types in turn, each type's servers on
// a port of their own on the same 64 addresses (icmp: the kernel's
// echo replies), and the run also fails when more than 1 % of a type's
// checks fail: every server answers, so a failure is a check that did
// not keep its schedule or its timeout.
// The listeners run in this process: their goroutines and descriptors
// (one per connection being served) count in the figures too.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/glb-dns/glb/healthcheck"
	"github.com/glb-dns/glb/pools"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	numPools   = flag.Int("pools", 1600, "pools of 64 origins under one monitor")
	interval   = flag.Int("interval", 60, "monitor interval, seconds")
	timeout    = flag.Int("timeout", 5, "monitor timeout, seconds")
	slow       = flag.Float64("slow", 0, "fraction of each pool's origins that answer only after the timeout")
	duration   = flag.Duration("duration", 10*time.Minute, "how long to run")
	window     = flag.Duration("window", 30*time.Second, "reporting window")
	concurrent = flag.Int("concurrent", 0, "checker MaxConcurrent (0: its default)")
	follow     = flag.Duration("follow", time.Second, "take the checker's health updates this often, as a node does, and publish them to nowhere (0: neither)")
	tolerance  = flag.Float64("tolerance", 0.10, "largest accepted deviation of a window's rate from the configured rate")
	cpuProfile = flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	types      = flag.String("types", "http", "monitor types the pools take in turn: a comma-separated list, or mixed for every type")
)

func main() {
	flag.Parse()
	ok, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "checker:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// discard is a store that takes every health update and keeps none.
type discard struct{}

func (discard) PublishHealth(context.Context, pools.HealthUpdate) error { return nil }

// sample is the process at one moment.
type sample struct {
	fds, goroutines int
	rssKiB          int
}

func now() sample {
	return sample{fds: fds(), goroutines: runtime.NumGoroutine(), rssKiB: rssKiB()}
}

func (s sample) String() string {
	return fmt.Sprintf("fds %d, goroutines %d, RSS %d MiB", s.fds, s.goroutines, s.rssKiB>>10)
}

func run() (bool, error) {
	var probes atomic.Int64
	fast := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { probes.Add(1) })
	hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		<-r.Context().Done() // the checker gives up at its timeout
	})
	port := "0"
	listen := func(addr string, h http.Handler) error {
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, port))
		if err != nil {
			return err
		}
		_, port, _ = net.SplitHostPort(ln.Addr().String())
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		return nil
	}
	nSlow := int(math.Round(*slow * 64))
	for j := range 64 {
		if err := listen(fmt.Sprintf("127.2.0.%d", j+1), fast); err != nil {
			return false, err
		}
		if j < nSlow {
			if err := listen(fmt.Sprintf("127.2.1.%d", j+1), hang); err != nil {
				return false, err
			}
		}
	}
	p, _ := strconv.Atoi(port)
	kinds, err := parseTypes(*types)
	if err != nil {
		return false, err
	}
	if nSlow > 0 && (len(kinds) != 1 || kinds[0].typ != pools.MonitorHTTP) {
		return false, fmt.Errorf("-slow hangs http origins only; it cannot go with -types %s", *types)
	}
	cert, err := selfSigned()
	if err != nil {
		return false, err
	}
	cfg := &pools.Config{}
	for _, k := range kinds {
		if err := k.serve(cert); err != nil {
			return false, err
		}
		cfg.Monitors = append(cfg.Monitors, k.monitorFor(p, *interval, *timeout))
	}
	for i := range *numPools {
		pl := pools.DefaultPool()
		pl.ID, pl.Name, pl.Monitor = fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", i), cfg.Monitors[i%len(kinds)].ID
		for j := range 64 {
			o := pools.DefaultOrigin()
			o.Name, o.Address = fmt.Sprintf("o%d", j), fmt.Sprintf("127.2.0.%d", j+1)
			if j < nSlow {
				o.Address = fmt.Sprintf("127.2.1.%d", j+1)
			}
			pl.Origins = append(pl.Origins, o)
		}
		cfg.Pools = append(cfg.Pools, pl)
	}
	reg := prometheus.NewRegistry()
	var pub healthcheck.Publisher
	if *follow > 0 {
		pub = discard{}
	}
	c := healthcheck.New(healthcheck.Options{Node: "bench", Region: "WEU", MaxConcurrent: *concurrent, Registerer: reg, Publisher: pub,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	updated := time.Now()
	c.Update(cfg)
	took := time.Since(updated)
	updated = time.Now()
	c.Update(cfg)
	again := time.Since(updated)
	go func() { // the node drains state changes
		for range c.Changes() {
		}
	}()
	if *follow > 0 {
		go func() { // and takes its own updates every second
			own := c.Follow()
			t := time.NewTicker(*follow)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case now := <-t.C:
					_, commit := own.Next(now)
					commit()
				}
			}
		}()
	}

	// The profile's file is opened before the first sample, so that the
	// descriptors counted at the start and after Run agree on it.
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return false, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return false, err
		}
		defer pprof.StopCPUProfile()
	}
	targets := *numPools * 64
	want := float64(targets) / float64(*interval)
	start := now()
	limit := gauge(reg, "glb_healthcheck_checks_in_flight_limit")
	fmt.Printf("%d targets (%d slow), interval %d s, timeout %d s: configured %.0f checks/s (checker's figure %.0f), in-flight limit %.0f\n",
		targets, *numPools*nSlow, *interval, *timeout, want, gauge(reg, "glb_healthcheck_scheduled_checks_per_second"), limit)
	fmt.Printf("Update: %s the first time, %s again unchanged; %d CPUs (load is noise on a shared machine)\n",
		took.Round(time.Millisecond), again.Round(time.Millisecond), runtime.NumCPU())
	fmt.Printf("start: %s\n", start)
	fmt.Println("elapsed  checks/s  vs configured  results/s  missed  fds  goroutines  in flight  RSS MiB  CPU")

	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	began := time.Now()
	// What the servers saw; icmp's echoes are answered by the kernel, so
	// its probes are the checker's icmp results.
	seen := func() float64 {
		n := float64(probes.Load())
		for _, k := range kinds {
			n += float64(k.probes.Load())
		}
		r := byType(reg)
		return n + r[string(pools.MonitorICMP)][0] + r[string(pools.MonitorICMP)][1]
	}
	last, lastResults, lastCPU := seen(), gauge(reg, "glb_healthcheck_results_total"), cpu()
	tick := time.NewTicker(*window)
	defer tick.Stop()
	var samples []sample
	reasons := map[pools.MonitorType]map[string]bool{} // a few of each type's failures, said
	ok := true
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
			continue
		case <-tick.C:
		}
		n, results := seen(), gauge(reg, "glb_healthcheck_results_total")
		rate := (n - last) / window.Seconds()
		resultRate := (results - lastResults) / window.Seconds()
		busy := (cpu() - lastCPU).Seconds() / window.Seconds()
		last, lastResults, lastCPU = n, results, cpu()
		s := now()
		samples = append(samples, s)
		noteReasons(c.View(), kinds, reasons)
		off := (rate - want) / want
		mark := ""
		if math.Abs(off) > *tolerance {
			mark = "  <- off"
			ok = false
		}
		fmt.Printf("%7s  %8.0f  %+12.1f%%  %9.0f  %6.0f  %4d  %10d  %9.0f  %7d  %3.0f%%%s\n", time.Since(began).Round(time.Second),
			rate, 100*off, resultRate, gauge(reg, "glb_healthcheck_missed_checks_total"), s.fds, s.goroutines,
			gauge(reg, "glb_healthcheck_checks_in_flight"), s.rssKiB>>10, 100*busy, mark)
	}
	if err := <-done; err != nil {
		return false, err
	}
	if len(samples) < 2 {
		return false, fmt.Errorf("%d windows in %s: nothing to compare; run longer or shorten -window", len(samples), *duration)
	}
	fail := func(format string, args ...any) {
		fmt.Printf("FAIL: "+format+"\n", args...)
		ok = false
	}
	high := peak(samples)
	if high.goroutines > start.goroutines+5*int(limit)+64 || high.fds > start.fds+2*int(limit)+64 {
		fail("at most %s, past the bound of %d checks in flight", high, int(limit))
	}
	half := len(samples) / 2
	first, second := floor(samples[:half]), floor(samples[half:])
	rose := func(what string, a, b int) {
		if b > a+a/4+32 {
			fail("the floor of %s rose from %d in the first half of the run to %d in the second", what, a, b)
		}
	}
	rose("open file descriptors", first.fds, second.fds)
	rose("goroutines", first.goroutines, second.goroutines)
	fmt.Printf("peak: %s; floor: %s in the first half, %s in the second\n", high, first, second)
	if len(kinds) > 1 || kinds[0].typ != pools.MonitorHTTP {
		r := byType(reg)
		fmt.Println("type   results/s  failed  servers saw/s")
		secs := time.Since(began).Seconds()
		for _, k := range kinds {
			ok, failed := r[string(k.typ)][0], r[string(k.typ)][1]
			saw := fmt.Sprintf("%.0f", float64(k.probes.Load())/secs)
			switch k.typ {
			case pools.MonitorHTTP:
				saw = fmt.Sprintf("%.0f", float64(probes.Load())/secs)
			case pools.MonitorICMP:
				saw = "(kernel)"
			}
			fmt.Printf("%-5s  %9.0f  %6.0f  %s\n", k.typ, (ok+failed)/secs, failed, saw)
			for r := range reasons[k.typ] {
				fmt.Printf("       failed: %s\n", r)
			}
			if failed > 0.01*(ok+failed) {
				fail("%.0f of %.0f %s checks failed against servers that all answer", failed, ok+failed, k.typ)
			}
		}
	}
	// The listeners end their side of the last connections a moment after
	// the checker; poll rather than guess how long.
	var end sample
	for deadline := time.Now().Add(5 * time.Second); ; {
		end = now()
		if (end.fds <= start.fds && end.goroutines <= start.goroutines+2) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Printf("end: %s (after Run returned)\n", end)
	if end.fds > start.fds || end.goroutines > start.goroutines+2 {
		fail("after Run returned, %s against %s at the start", end, start)
	}
	if ok {
		fmt.Printf("PASS: every window within ±%.0f%% of %.0f checks/s; descriptors and goroutines bounded, no growth, none left\n", 100**tolerance, want)
	} else {
		fmt.Println("FAIL")
	}
	return ok, nil
}

func peak(ss []sample) sample {
	var p sample
	for _, s := range ss {
		p.fds, p.goroutines, p.rssKiB = max(p.fds, s.fds), max(p.goroutines, s.goroutines), max(p.rssKiB, s.rssKiB)
	}
	return p
}

func floor(ss []sample) sample {
	p := ss[0]
	for _, s := range ss {
		p.fds, p.goroutines, p.rssKiB = min(p.fds, s.fds), min(p.goroutines, s.goroutines), min(p.rssKiB, s.rssKiB)
	}
	return p
}

// gauge sums every series of a metric of reg.
func gauge(reg *prometheus.Registry, name string) float64 {
	mfs, _ := reg.Gather()
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return sum
}

// noteReasons keeps up to three distinct reasons of each type's origins
// that are down in v.
func noteReasons(v pools.NodeHealth, kinds []*kind, into map[pools.MonitorType]map[string]bool) {
	for _, o := range v.Origins {
		if o.Healthy {
			continue
		}
		i, err := strconv.Atoi(strings.TrimPrefix(o.Pool, "p"))
		if err != nil {
			continue
		}
		t := kinds[i%len(kinds)].typ
		if into[t] == nil {
			into[t] = map[string]bool{}
		}
		if len(into[t]) < 3 {
			into[t][o.Reason] = true
		}
	}
}

// byType sums glb_healthcheck_results_total by monitor type: successes,
// failures.
func byType(reg *prometheus.Registry) map[string][2]float64 {
	out := map[string][2]float64{}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "glb_healthcheck_results_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var typ string
			i := 1
			for _, l := range m.GetLabel() {
				switch {
				case l.GetName() == "type":
					typ = l.GetValue()
				case l.GetName() == "outcome" && l.GetValue() == "success":
					i = 0
				}
			}
			v := out[typ]
			v[i] += m.GetCounter().GetValue()
			out[typ] = v
		}
	}
	return out
}

// cpu is the process's user and system time so far: the checker's and
// the listeners' (CPU is the share of one core over the window).
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fds() int {
	e, _ := os.ReadDir("/proc/self/fd")
	return len(e)
}

func rssKiB() int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}
