// Command scale measures glbd on a large estate: it builds pools of 64
// origins and one load balancer per pool straight into a store, starts
// glbd on it (one node on the embedded store, or two on PostgreSQL), and
// measures write → DNS answer latency, health flip → DNS answer latency,
// the rebuild time of one changed pool, RSS, and UDP QPS over all names.
// With -api it starts one node on an empty embedded store and makes every
// object through the REST API instead, four at a time (-writers), each
// write compiling and publishing a snapshot, and reports RSS as they are
// made, after them and after -more further writes (api.go).
//
//	go run ./bench/scale                      # 1,600 pools, embedded
//	go run ./bench/scale -pools 16000         # 1,024,000 origins
//	go run ./bench/scale -postgres "$DATABASE_URL"   # two nodes
//	go run ./bench/scale -api                 # every object through the API: RSS
//
// Everything listens on 127.0.0.1. Figures depend on the machine: compare
// them only with a run on the same machine at the same time.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/miekg/dns"

	"github.com/glb-dns/glb/migrations"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded"
	"github.com/glb-dns/glb/pools/postgres"
)

var (
	numPools   = flag.Int("pools", 1600, "pools of 64 origins, one load balancer each")
	changes    = flag.Int("changes", 60, "writes measured (write → answer)")
	flips      = flag.Int("flips", 6, "health flips measured")
	pgURL      = flag.String("postgres", "", "PostgreSQL URL: two nodes on it (the database is emptied)")
	qpsFor     = flag.Duration("qps-time", 5*time.Second, "how long to measure QPS")
	keep       = flag.Bool("keep", false, "keep the run directory")
	monitored  = flag.Int("monitored", 16, "pools under an HTTP monitor against local listeners (1 s interval)")
	profile    = flag.String("profile", "", "directory for node A's CPU profile, execution trace (from the first write, for -profile-time) and heap profile")
	profileFor = flag.Duration("profile-time", 15*time.Second, "how long -profile records")
	viaAPI     = flag.Bool("api", false, "make every object through the REST API (no monitors) and report RSS as they are made and after -more writes")
	writers    = flag.Int("writers", 4, "with -api: requests at a time")
	more       = flag.Int("more", 1000, "with -api: further writes after the estate is made (RSS must stay flat)")
	rssLimit   = flag.Int("rss-limit", 0, "with -api: fail when RSS after the writes exceeds this many MiB (0: report only)")
)

const zoneName = "scale.example.com"

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "glb-scale")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	bin := filepath.Join(dir, "glbd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/glbd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build glbd (run from the repository root): %w", err)
	}

	if *viaAPI {
		return runAPI(bin, dir)
	}

	// Health: every monitored pool's origins are 127.0.1.x listeners that
	// answer 200 until their pool is flipped.
	var fail atomic.Bool
	port, stopHTTP, err := listeners(&fail)
	if err != nil {
		return err
	}
	defer stopHTTP()

	t0 := time.Now()
	var store pools.Store
	if *pgURL != "" {
		if err := resetDatabase(ctx, *pgURL); err != nil {
			return err
		}
		store, err = postgres.Open(ctx, *pgURL)
	} else {
		store, err = embedded.Open(filepath.Join(dir, "a", "glb.db"))
	}
	if err != nil {
		return err
	}
	est, err := seed(ctx, store, port)
	store.Close()
	if err != nil {
		return err
	}
	fmt.Printf("estate: %d pools, %d origins, %d load balancers, %d monitored pools; seeded in %s\n",
		*numPools, *numPools*64, *numPools, *monitored, time.Since(t0).Round(time.Millisecond))

	a, err := startNode(bin, filepath.Join(dir, "a"), "a", "WEU")
	if err != nil {
		return err
	}
	defer a.stop()
	b := a
	if *pgURL != "" {
		// B is in another region: the pools' check_regions list only A's,
		// so B answers by A's health decisions, read from the store.
		if b, err = startNode(bin, filepath.Join(dir, "b"), "b", "ENAM"); err != nil {
			return err
		}
		defer b.stop()
	}
	fmt.Printf("nodes up in %s (A dns %s", time.Since(t0).Round(time.Millisecond), a.dns)
	if b != a {
		fmt.Printf(", B dns %s", b.dns)
	}
	fmt.Println(")")
	if err := waitAnswer(b.dns, lbName(0), 60*time.Second, func(ips []string) bool { return len(ips) > 0 }); err != nil {
		return fmt.Errorf("first answer: %w", err)
	}
	rssA0 := a.rss()

	// write → answer: each change gives one pool 64 new addresses, then
	// waits for its load balancer to answer one of them (on B).
	var lat, putLat, afterPut []time.Duration
	stopProfile := a.profile(*profile)
	for i := range *changes {
		p := rand.IntN(*numPools-*monitored) + *monitored
		prefix := fmt.Sprintf("10.%d.%d.", 100+i/200, i%200)
		pool := est.pools[p]
		for j := range pool.Origins {
			pool.Origins[j].Address = prefix + strconv.Itoa(j+1)
		}
		start := time.Now()
		if err := a.put("pools", pool.ID, pool); err != nil {
			return err
		}
		putLat = append(putLat, time.Since(start))
		if err := waitAnswer(b.dns, lbName(p), 10*time.Second, func(ips []string) bool {
			return len(ips) > 0 && strings.HasPrefix(ips[0], prefix)
		}); err != nil {
			return fmt.Errorf("change %d: %w", i, err)
		}
		lat = append(lat, time.Since(start))
		afterPut = append(afterPut, lat[len(lat)-1]-putLat[len(putLat)-1])
	}
	if err := stopProfile(); err != nil {
		return err
	}
	report("write → answer", lat)
	report("  of which the PUT (API, validation, store commit)", putLat)
	report("  from the PUT's reply to the answer", afterPut)

	// health flip → answer: all origins of a monitored pool start failing;
	// its load balancer fails over to the next pool.
	var flipLat, decidedLat []time.Duration
	for i := range min(*flips, *monitored) {
		p := i
		monitoredUp := func(ips []string) bool { return len(ips) > 0 && strings.HasPrefix(ips[0], "127.0.1.") }
		if err := waitAnswer(b.dns, lbName(p), 30*time.Second, monitoredUp); err != nil {
			return fmt.Errorf("before flip %d: %w", i, err)
		}
		start := time.Now()
		fail.Store(true)
		if err := waitAnswer(b.dns, lbName(p), 30*time.Second, func(ips []string) bool { return !monitoredUp(ips) }); err != nil {
			return fmt.Errorf("flip %d: %w", i, err)
		}
		answered := time.Now()
		flipLat = append(flipLat, answered.Sub(start))
		if d, ok := a.lastDown(fmt.Sprintf("p%d", p), start, answered); ok {
			decidedLat = append(decidedLat, answered.Sub(d))
		}
		fail.Store(false)
	}
	report("health flip → answer (monitor interval 1 s, consecutive_down 1)", flipLat)
	report("  from node A's decision (its last \"origin down\" log line for the pool, ms resolution) to the answer", decidedLat)

	builds := a.incrementalBuilds()
	report("one-pool rebuild (compile + publish, node A log)", builds)

	qps, answered := measureQPS(b.dns, *qpsFor)
	fmt.Printf("QPS over all %d names (UDP, 8 clients in this process, %s): %.0f (%d answers)\n", *numPools, *qpsFor, qps, answered)
	fmt.Printf("RSS node A: %s after start, %s now, peak %s\n", mib(rssA0), mib(a.rss()), mib(a.hwm()))
	if b != a {
		fmt.Printf("RSS node B: %s now, peak %s\n", mib(b.rss()), mib(b.hwm()))
	}
	return nil
}

type estate struct{ pools []*pools.Pool }

func lbName(i int) string { return fmt.Sprintf("lb%d.%s", i, zoneName) }

func seed(ctx context.Context, s pools.Store, port int) (*estate, error) {
	z := pools.DefaultZone()
	z.ID, z.Name, z.Nameservers = "scale", zoneName, []string{"ns1." + zoneName}
	if _, err := s.Create(ctx, &z); err != nil {
		return nil, err
	}
	m := pools.DefaultMonitor()
	m.ID, m.Port, m.Interval, m.Timeout, m.Retries, m.ConsecutiveDown, m.ConsecutiveUp = "http", port, 1, 1, 0, 1, 1
	if _, err := s.Create(ctx, &m); err != nil {
		return nil, err
	}
	est := &estate{}
	for i := range *numPools {
		p := pools.DefaultPool()
		p.ID, p.Name = fmt.Sprintf("p%d", i), fmt.Sprintf("pool %d", i)
		for j := range 64 {
			o := pools.DefaultOrigin()
			o.Name = fmt.Sprintf("o%d", j)
			o.Address = fmt.Sprintf("10.%d.%d.%d", i/250, i%250, j+1)
			if i < *monitored {
				o.Address = fmt.Sprintf("127.0.1.%d", j+1)
			}
			p.Origins = append(p.Origins, o)
		}
		if i < *monitored {
			p.Monitor, p.CheckRegions = "http", []string{"WEU"}
		}
		out, err := s.Create(ctx, &p)
		if err != nil {
			return nil, fmt.Errorf("pool %d: %w", i, err)
		}
		est.pools = append(est.pools, out.(*pools.Pool))
	}
	for i := range *numPools {
		l := pools.DefaultLoadBalancer()
		l.ID, l.Zone, l.Name = fmt.Sprintf("lb%d", i), "scale", lbName(i)
		// The next pool is the failover of a flipped one.
		l.DefaultPools = []string{fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", (i+*monitored)%*numPools)}
		l.FallbackPool = l.DefaultPools[1]
		if _, err := s.Create(ctx, &l); err != nil {
			return nil, fmt.Errorf("load balancer %d: %w", i, err)
		}
	}
	return est, nil
}

func resetDatabase(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "drop schema public cascade; create schema public"); err != nil {
		return fmt.Errorf("empty the database: %w", err)
	}
	return migrations.Up(ctx, conn)
}

// listeners serves HTTP on 127.0.1.1-64 at one port, the origins of every
// monitored pool; they answer 500 while fail is set.
func listeners(fail *atomic.Bool) (int, func(), error) {
	var lns []net.Listener
	port := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	for j := range 64 {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.1.%d:%d", j+1, port))
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return 0, nil, err
		}
		port = ln.Addr().(*net.TCPAddr).Port
		lns = append(lns, ln)
		go http.Serve(ln, h)
	}
	return port, func() {
		for _, l := range lns {
			l.Close()
		}
	}, nil
}

type node struct {
	cmd      *exec.Cmd
	dns, api string
	mu       sync.Mutex
	logs     []string
	pprof    string // base URL of /debug/pprof, with -profile
}

var (
	servingLine = regexp.MustCompile(`msg="glbd serving".* dns=(\S+) api=(\S+)`)
	pprofLine   = regexp.MustCompile(`msg="pprof listening".* addr=(\S+)`)
)

func startNode(bin, dataDir, name, region string) (*node, error) {
	args := []string{"serve", "--data-dir", dataDir, "--dns-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0",
		"--node", name, "--region", region}
	if *profile != "" {
		args = append(args, "--pprof-listen", "127.0.0.1:0")
	}
	if *pgURL != "" {
		args = append(args, "--database-url", *pgURL)
	}
	n := &node{cmd: exec.Command(bin, args...)}
	stderr, err := n.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := n.cmd.Start(); err != nil {
		return nil, err
	}
	up := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		once := false
		for sc.Scan() {
			line := sc.Text()
			if m := pprofLine.FindStringSubmatch(line); m != nil {
				n.mu.Lock()
				n.pprof = "http://" + m[1]
				n.mu.Unlock()
			}
			if m := servingLine.FindStringSubmatch(line); m != nil && !once {
				n.dns, n.api, once = m[1], "http://"+strings.TrimPrefix(m[2], "http://"), true
				close(up)
			}
			if strings.Contains(line, `msg="snapshot published"`) || strings.Contains(line, `msg="origin down"`) ||
				strings.Contains(line, "level=ERROR") {
				n.mu.Lock()
				n.logs = append(n.logs, line)
				n.mu.Unlock()
			}
		}
	}()
	select {
	case <-up:
		return n, nil
	case <-time.After(120 * time.Second):
		n.stop()
		return nil, errors.New("glbd did not start within 120 s")
	}
}

func (n *node) stop() {
	n.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		n.cmd.Process.Kill()
	}
}

func (n *node) put(kind, id string, o any) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPut, n.api+"/api/v1/"+kind+"/"+id, strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("PUT %s/%s: %s: %s", kind, id, resp.Status, body)
	}
	return nil
}

// profile records node n's CPU profile and execution trace into dir for
// the next -profile-time, from the start of the write phase; stop waits
// for them and then takes the heap profile. Nothing without dir.
func (n *node) profile(dir string) (stop func() error) {
	if dir == "" {
		return func() error { return nil }
	}
	n.mu.Lock()
	base := n.pprof
	n.mu.Unlock()
	secs := strconv.Itoa(int(profileFor.Seconds()))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, what := range []string{"profile", "trace"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fetch(base+"/debug/pprof/"+what+"?seconds="+secs, filepath.Join(dir, what+".out"))
		}()
	}
	return func() error {
		wg.Wait()
		if err := fetch(base+"/debug/pprof/heap", filepath.Join(dir, "heap.out")); err != nil {
			return err
		}
		return errors.Join(errs...)
	}
}

func fetch(url, file string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

var downRe = regexp.MustCompile(`^time=(\S+) .*msg="origin down" .*\bpool=(\S+)`)

// lastDown is when node n logged the last origin of pool down between
// since and until: the pool fails when its last origin does.
func (n *node) lastDown(pool string, since, until time.Time) (time.Time, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var last time.Time
	for _, l := range n.logs {
		m := downRe.FindStringSubmatch(l)
		if m == nil || m[2] != pool {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, m[1])
		if err == nil && !t.Before(since.Truncate(time.Millisecond)) && !t.After(until) && t.After(last) {
			last = t
		}
	}
	return last, !last.IsZero()
}

var tookRe = regexp.MustCompile(`pools_rebuilt=(\d+) incremental=true took=(\S+)`)

// incrementalBuilds are the compile-and-publish times of the snapshots
// that rebuilt exactly one pool.
func (n *node) incrementalBuilds() []time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []time.Duration
	for _, l := range n.logs {
		if m := tookRe.FindStringSubmatch(l); m != nil && m[1] == "1" {
			if d, err := time.ParseDuration(m[2]); err == nil {
				out = append(out, d)
			}
		}
	}
	return out
}

func (n *node) status(field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func (n *node) rss() int64 { return n.status("VmRSS") }
func (n *node) hwm() int64 { return n.status("VmHWM") }

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func query(c *dns.Client, addr, name string) ([]string, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		return nil, err
	}
	var ips []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			ips = append(ips, a.A.String())
		}
	}
	return ips, nil
}

// waitAnswer polls name until ok holds (every 2 ms: the resolution of the
// latencies measured).
func waitAnswer(addr, name string, within time.Duration, ok func([]string) bool) error {
	c := &dns.Client{Timeout: time.Second}
	deadline := time.Now().Add(within)
	var last []string
	for time.Now().Before(deadline) {
		ips, err := query(c, addr, name)
		if err == nil && ok(ips) {
			return nil
		}
		last = ips
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("%s: no expected answer within %s (last %v)", name, within, last)
}

func measureQPS(addr string, d time.Duration) (float64, int64) {
	var total atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("udp", addr)
			if err != nil {
				return
			}
			defer conn.Close()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			buf := make([]byte, 1500)
			m := new(dns.Msg)
			for time.Now().Before(stop) {
				m.SetQuestion(dns.Fqdn(lbName(r.IntN(*numPools))), dns.TypeA)
				m.Id = uint16(r.Uint32())
				q, _ := m.Pack()
				conn.SetDeadline(time.Now().Add(time.Second))
				if _, err := conn.Write(q); err != nil {
					continue
				}
				if _, err := conn.Read(buf); err == nil {
					total.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(total.Load()) / d.Seconds(), total.Load()
}

func report(what string, ds []time.Duration) {
	if len(ds) == 0 {
		fmt.Printf("%s: no samples\n", what)
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	pct := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	fmt.Printf("%s: n=%d p50 %s p90 %s p99 %s max %s\n", what, len(s), pct(0.5).Round(100*time.Microsecond),
		pct(0.9).Round(100*time.Microsecond), pct(0.99).Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond))
}
