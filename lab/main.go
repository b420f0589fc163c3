// Command lab is glb's fault lab: three regions in network namespaces,
// each with a glbd node and origins, a client host and PostgreSQL in
// namespaces of their own, and drills that break the network, the store
// and the nodes while the client asks every node, and measure what glb
// does against bounds derived from its configured intervals.
//
//	lab -glbd bin/glbd [-drills 1,2,3] [-interval 2]
//
// Run as root (namespaces, nftables). See docs/resilience.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/glb-dns/glb/internal/pgserver"
)

func main() {
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

func cli(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	glbdBin := fs.String("glbd", "bin/glbd", "the glbd binary to drill")
	drillList := fs.String("drills", "all", fmt.Sprintf("drills to run, comma-separated numbers (1-%d) or all", len(drillFuncs)))
	interval := fs.Int("interval", 2, "the origins' monitor interval, seconds; every bound derives from it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	drills, err := parseDrills(*drillList)
	if err != nil {
		fmt.Fprintln(stderr, "lab:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	results, err := runLab(ctx, config{out: stdout, glbd: *glbdBin, interval: *interval, drills: drills})
	for _, r := range results {
		if !r.pass {
			err = errors.Join(err, fmt.Errorf("drill %d failed", r.n))
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "lab:", err)
		return 1
	}
	fmt.Fprintln(stdout, "lab: every drill passed; nothing left behind")
	return 0
}

func parseDrills(s string) ([]int, error) {
	if s == "all" {
		var all []int
		for n := range drillFuncs {
			all = append(all, n+1)
		}
		return all, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > len(drillFuncs) {
			return nil, fmt.Errorf("-drills: %q is not a drill (1 to %d, or all)", f, len(drillFuncs))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// config is one run of the lab.
type config struct {
	out      io.Writer
	glbd     string
	interval int
	drills   []int
}

// preflight says what the lab lacks on this machine.
func preflight(glbd string) error {
	var errs []error
	if os.Geteuid() != 0 {
		errs = append(errs, errors.New("run as root: the lab creates network namespaces"))
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			errs = append(errs, fmt.Errorf("%s not found (iproute2, nftables: scripts/install-deps.sh)", tool))
		}
	}
	if _, err := pgserver.Binaries("initdb", "postgres"); err != nil {
		errs = append(errs, err)
	}
	if _, err := os.Stat(glbd); err != nil {
		errs = append(errs, fmt.Errorf("glbd binary: %w (make build)", err))
	}
	return errors.Join(errs...)
}

// runLab builds the lab, runs the drills and tears it all down; the
// error says what failed to start or what was left behind.
func runLab(ctx context.Context, cfg config) (results []result, err error) {
	if err := preflight(cfg.glbd); err != nil {
		return nil, err
	}
	bin, err := filepath.Abs(cfg.glbd)
	if err != nil {
		return nil, err
	}
	l := &lab{out: cfg.out, prefix: fmt.Sprintf("glblab%d", os.Getpid()), glbdBin: bin,
		interval: cfg.interval, timeout: 2}
	defer func() {
		l.logf("tearing down")
		if terr := l.tearDown(); terr != nil {
			err = errors.Join(err, fmt.Errorf("teardown: %w", terr))
		} else {
			l.logf("torn down: no namespace, interface, nftables rule, process or file of the lab's left")
		}
	}()
	removeStale(l.logf)
	if l.dir, err = os.MkdirTemp("", l.prefix+"-"); err != nil {
		return nil, err
	}
	// The postgres user must reach its cluster's directory inside.
	if err := os.Chmod(l.dir, 0o755); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := l.start(); err != nil {
		return nil, err
	}
	l.logf("lab up in %v: 3 regions, 3 nodes, %d origins, a client, PostgreSQL", time.Since(start).Round(time.Millisecond), 3*originsPerRegion)
	for _, n := range cfg.drills {
		if ctx.Err() != nil {
			return results, ctx.Err()
		}
		d := drillFuncs[n-1]
		l.logf("drill %d: %s", n, d.title)
		r := d.run(l)
		r.n, r.title = n, d.title
		results = append(results, r)
		l.report(r)
	}
	return results, nil
}
