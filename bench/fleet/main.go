// Command fleet measures what a fleet of glbd nodes costs one PostgreSQL:
// N simulated nodes, each with a store of its own (pools/postgres, the
// real store code, its pool and its one LISTEN connection), each doing to
// the store what a glbd node does:
//
//   - health: a full publication of its M origins at start, then every
//     cadence a heartbeat with what changed (a flip; -rtt-churn of the
//     origins whose smoothed RTT moved), and a publication soon after a
//     flip (healthcheck's publishLoop);
//   - following: the change feed (Watch), everyone's health since its
//     cursors on every notification and every second, the revision every
//     2 s (cmd/glbd node.run);
//   - the fleet: its status every second (ReportNode) and every node's
//     (Nodes) (cmd/glbd fleet.run);
//   - answer counts every 10 s (-count-rows rows, cmd/glbd analytics).
//
// Once every node has every node's view, it flips one origin for all N
// nodes' checks (each node sees it at its next check, within one check
// interval) -flips times and measures agreement: the flip → every node's
// view has all N nodes' new state. Over those flips it measures the
// store's load: transactions/s and rows written/s (pg_stat_database), WAL
// bytes/s (pg_current_wal_lsn) and the CPU of the PostgreSQL processes
// (/proc: the postmaster, its backends and the backends it reaped).
//
//	go run ./bench/fleet                          # 8 × 1,000 on a cluster of its own
//	go run ./bench/fleet -nodes 64 -origins 10000
//	go run ./bench/fleet -matrix                  # 8, 32, 64 × 1,000, 10,000
//	go run ./bench/fleet -nodes 64 -ramp 60s      # a fleet started node by node
//	go run ./bench/fleet -database-url "$URL"     # a server of yours (CPU only when local)
//
// The cluster of its own runs the installed server binaries (as the
// postgres user under root) in a temporary directory, removed at the end.
// Figures depend on the machine and what else runs on it: the load
// average is printed with each.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/internal/pgserver"
	"github.com/glb-dns/glb/migrations"
)

type params struct {
	nodes, origins int
	interval       time.Duration
	rttChurn       float64
	countRows      int
	flips          int
	warmupLimit    time.Duration
	ramp           time.Duration
}

func main() {
	var p params
	url := flag.String("database-url", "", "PostgreSQL server to use (default: start a cluster of its own)")
	flag.IntVar(&p.nodes, "nodes", 8, "simulated nodes")
	flag.IntVar(&p.origins, "origins", 1000, "origins each node checks")
	flag.DurationVar(&p.interval, "interval", 10*time.Second, "check interval, also the publication cadence (glbd: the shortest monitor interval within [1s, 10s])")
	flag.Float64Var(&p.rttChurn, "rtt-churn", 0, "fraction of the origins whose smoothed RTT moves enough to be news each cadence")
	flag.IntVar(&p.countRows, "count-rows", 20, "answer-count rows each node writes every 10 s")
	flag.IntVar(&p.flips, "flips", 3, "flips measured")
	flag.DurationVar(&p.warmupLimit, "warmup-limit", 5*time.Minute, "how long every view may take to be complete at start")
	flag.DurationVar(&p.ramp, "ramp", 0, "start the nodes one by one over this long (0: all at once)")
	matrix := flag.Bool("matrix", false, "run N = 8, 32, 64 × M = 1,000, 10,000")
	flag.Parse()
	log.SetFlags(log.Ltime)

	if err := bench(*url, p, *matrix); err != nil {
		log.Fatal(err)
	}
}

// bench runs the measurements; a cluster of its own is removed however
// they end (log.Fatal would skip the removal and leave it running).
func bench(server string, p params, matrix bool) error {
	if server == "" {
		dir, err := os.MkdirTemp("", "glb-fleet-")
		if err != nil {
			return err
		}
		c, err := startCluster(dir)
		if err != nil {
			os.RemoveAll(dir)
			return err
		}
		defer c.Remove()
		server = c.URL()
	}
	runs := []params{p}
	if matrix {
		runs = nil
		for _, m := range []int{1000, 10000} {
			for _, n := range []int{8, 32, 64} {
				q := p
				q.nodes, q.origins = n, m
				runs = append(runs, q)
			}
		}
	}
	fmt.Println(header)
	for i, q := range runs {
		db := fmt.Sprintf("glb_fleet_%d", i)
		dbURL, err := freshDatabase(server, db)
		if err != nil {
			return err
		}
		r, err := run(context.Background(), dbURL, q)
		if err != nil {
			return err
		}
		fmt.Println(r)
	}
	return nil
}

// startCluster starts a cluster configured as a production one would be
// (fsync, synchronous commit), with room for every node's connections.
func startCluster(dir string) (*pgserver.Cluster, error) {
	c, err := pgserver.Init(dir, "max_connections = 800", "shared_buffers = 256MB",
		"shared_preload_libraries = 'pg_stat_statements'")
	if err != nil {
		return nil, err
	}
	return c, c.Start()
}

// freshDatabase drops and creates db on server, migrates it and returns
// its URL.
func freshDatabase(server, db string) (string, error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "drop database if exists "+db+" with (force)"); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "create database "+db); err != nil {
		return "", err
	}
	// Where the time goes, when the server has the module loaded.
	if dconn, err := pgx.Connect(ctx, strings.Replace(server, "/postgres?", "/"+db+"?", 1)); err == nil {
		_, _ = dconn.Exec(ctx, "create extension if not exists pg_stat_statements")
		dconn.Close(ctx)
	}
	cfg := conn.Config()
	url := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, db)
	if cfg.Password != "" {
		url = fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Password, cfg.Host, cfg.Port, db)
	}
	return url, migrations.UpURL(ctx, url)
}

const header = "nodes\torigins\tinterval\tload avg\twarm-up\ttx/s\trows written/s\tWAL kB/s\tpostgres CPU\tnodes' CPU\tagreement (median, max)\tfailed calls (measured)"

type result struct {
	p                     params
	loadBefore, loadAfter string
	warmup                time.Duration
	load                  load
	agreement             []time.Duration
	missed                int
	// failedMeasured are the store calls that failed after the warm-up
	// and settling, while agreement and load were measured.
	failedMeasured int
}

func (r result) String() string {
	ag := "none"
	if len(r.agreement) > 0 {
		s := slices.Clone(r.agreement)
		slices.Sort(s)
		ag = fmt.Sprintf("%.2f s, %.2f s", s[len(s)/2].Seconds(), s[len(s)-1].Seconds())
	}
	if r.missed > 0 {
		ag += fmt.Sprintf(" (%d of %d flips not agreed within 3 intervals)", r.missed, r.p.flips)
	}
	warm := fmt.Sprintf("%.1f s", r.warmup.Seconds())
	if r.warmup < 0 {
		warm = "> " + r.p.warmupLimit.String()
	}
	return fmt.Sprintf("%d\t%d\t%s\t%s → %s\t%s\t%.0f\t%.0f\t%.0f\t%s\t%.0f %%\t%s\t%d",
		r.p.nodes, r.p.origins, r.p.interval, r.loadBefore, r.loadAfter, warm,
		r.load.tx, r.load.rows, r.load.wal/1024, r.load.cpuString(), r.load.bench*100, ag, r.failedMeasured)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return "?"
	}
	return f[0]
}
