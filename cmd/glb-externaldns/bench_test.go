package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkSyncThousand is one cluster's first sync of 1,000 load-
// balanced names (two A targets each) into an empty zone, against a fresh
// glbd with its embedded store: the acceptance wants it under 10 s. Each
// iteration reports its writes (from the audit log) and then checks that
// a second apply of the same endpoints writes nothing.
// GLB_BENCH_PPROF=127.0.0.1:PORT has glbd serve its profiles there.
// token=zone runs the provider with a write token scoped to the zone, as
// docs/kubernetes.md recommends (glbd then checks every request against
// what the zone's load balancers use); token=bootstrap with the admin one.
func BenchmarkSyncThousand(b *testing.B) {
	for _, scoped := range []bool{false, true} {
		b.Run(map[bool]string{false: "token=bootstrap", true: "token=zone"}[scoped], func(b *testing.B) { benchSyncThousand(b, scoped) })
	}
}

func benchSyncThousand(b *testing.B, scoped bool) {
	const names = 1000
	var glbdArgs []string
	if addr := os.Getenv("GLB_BENCH_PPROF"); addr != "" {
		glbdArgs = append(glbdArgs, "--pprof-listen", addr)
	}
	var eps []*endpoint
	for i := range names {
		eps = append(eps, ep(fmt.Sprintf("svc%d.glb.test", i), "A", "bulk", fmt.Sprintf("10.%d.%d.1", i/256, i%256), fmt.Sprintf("10.%d.%d.2", i/256, i%256)))
	}
	var took, glbdCPU, providerCPU time.Duration
	for range b.N {
		b.StopTimer()
		n := startNode(b, glbdArgs...)
		p := n.provider("bulk")
		if scoped {
			p = n.scopedProvider("bulk")
		}
		before, cpu, own := n.writes(), cpuTime(b, n.glbd.Cmd.Process.Pid), cpuTime(b, os.Getpid())
		b.StartTimer()
		start := time.Now()
		apply(b, p, changes{Create: eps})
		took += time.Since(start)
		b.StopTimer()
		glbdCPU += cpuTime(b, n.glbd.Cmd.Process.Pid) - cpu
		providerCPU += cpuTime(b, os.Getpid()) - own
		b.ReportMetric(float64(n.writes()-before), "writes/sync")
		w := n.writes()
		apply(b, p, changes{UpdateOld: eps, UpdateNew: eps})
		if got := n.writes(); got != w {
			b.Fatalf("an apply of the same endpoints wrote %d times", got-w)
		}
		n.glbd.Stop()
	}
	b.ReportMetric(took.Seconds()/float64(b.N), "s/sync")
	// What glbd and the provider (this process) spent, which a machine's
	// load does not inflate as it does the wall time.
	b.ReportMetric(glbdCPU.Seconds()/float64(b.N), "glbd-cpu-s/sync")
	b.ReportMetric(providerCPU.Seconds()/float64(b.N), "provider-cpu-s/sync")
}

// cpuTime is the user and system time process pid has spent (Linux).
func cpuTime(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the line, in clock ticks (100 a second).
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
