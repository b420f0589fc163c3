package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// counters are the store's cumulative counters at one moment.
type counters struct {
	at       time.Time
	tx, rows int64
	walLSN   int64
	cpuTicks int64 // -1: the server's processes are not readable here
	// benchTicks is this process's CPU: the simulated nodes' side.
	benchTicks int64
}

// load is the rate of each counter between two readings.
type load struct {
	tx, rows, wal float64
	cpu           float64 // cores; < 0 unknown
	bench         float64 // cores
}

func (l load) cpuString() string {
	if l.cpu < 0 {
		return "n/a (server not local)"
	}
	return fmt.Sprintf("%.0f %% of a core", l.cpu*100)
}

// sampler reads the counters of one database over one connection.
type sampler struct {
	conn       *pgx.Conn
	postmaster int
}

func newSampler(ctx context.Context, url string) (*sampler, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	// A backend's parent is the postmaster, when the server runs here.
	pm, _ := parentOf(int(conn.PgConn().PID()))
	return &sampler{conn: conn, postmaster: pm}, nil
}

func (s *sampler) close() { s.conn.Close(context.Background()) }

func (s *sampler) read(ctx context.Context) (counters, error) {
	var c counters
	// Backends report their statistics when idle, at most once a second.
	if _, err := s.conn.Exec(ctx, "select pg_stat_force_next_flush()"); err != nil {
		return c, err
	}
	err := s.conn.QueryRow(ctx, `select xact_commit + xact_rollback, tup_inserted + tup_updated + tup_deleted,
		pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint
		from pg_stat_database where datname = current_database()`).Scan(&c.tx, &c.rows, &c.walLSN)
	c.at = time.Now()
	c.cpuTicks = cpuTicks(s.postmaster)
	if f, err := statFields(os.Getpid()); err == nil {
		c.benchTicks = f.utime + f.stime
	}
	return c, err
}

func rate(a, b counters) load {
	secs := b.at.Sub(a.at).Seconds()
	l := load{tx: float64(b.tx-a.tx) / secs, rows: float64(b.rows-a.rows) / secs, wal: float64(b.walLSN-a.walLSN) / secs, cpu: -1}
	l.bench = float64(b.benchTicks-a.benchTicks) / clockTicks / secs
	if a.cpuTicks >= 0 && b.cpuTicks >= 0 {
		l.cpu = float64(b.cpuTicks-a.cpuTicks) / clockTicks / secs
	}
	return l
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on
// Linux everywhere in practice).
const clockTicks = 100

// cpuTicks is the CPU time of the postmaster, of its live children and of
// the children it reaped (cutime, cstime), -1 when unreadable.
func cpuTicks(postmaster int) int64 {
	if postmaster == 0 {
		return -1
	}
	f, err := statFields(postmaster)
	if err != nil {
		return -1
	}
	total := f.utime + f.stime + f.cutime + f.cstime
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, _ := strconv.Atoi(filepath.Base(p))
		if c, err := statFields(pid); err == nil && c.ppid == postmaster {
			total += c.utime + c.stime
		}
	}
	return total
}

type stat struct {
	ppid                         int
	utime, stime, cutime, cstime int64
}

func statFields(pid int) (stat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return stat{}, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return stat{}, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	// f[0] is field 3 (state): ppid is field 4, utime..cstime 14..17.
	var s stat
	s.ppid, _ = strconv.Atoi(f[1])
	s.utime, _ = strconv.ParseInt(f[11], 10, 64)
	s.stime, _ = strconv.ParseInt(f[12], 10, 64)
	s.cutime, _ = strconv.ParseInt(f[13], 10, 64)
	s.cstime, _ = strconv.ParseInt(f[14], 10, 64)
	return s, nil
}

func parentOf(pid int) (int, error) {
	s, err := statFields(pid)
	return s.ppid, err
}

func (s *sampler) resetStatements(ctx context.Context) {
	_, _ = s.conn.Exec(ctx, "select pg_stat_statements_reset()")
}

// topStatements logs the statements that took the most time, when
// pg_stat_statements is there.
func (s *sampler) topStatements(ctx context.Context, over time.Duration) {
	rows, err := s.conn.Query(ctx, `select calls, total_exec_time, rows, regexp_replace(left(query, 90), '\s+', ' ', 'g')
		from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
		order by total_exec_time desc limit 8`)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var calls, nrows int64
		var ms float64
		var q string
		if rows.Scan(&calls, &ms, &nrows, &q) == nil {
			log.Printf("  %6.1f calls/s %6.1f ms/s %8.1f rows/s  %s", float64(calls)/over.Seconds(), ms/over.Seconds(), float64(nrows)/over.Seconds(), q)
		}
	}
}
