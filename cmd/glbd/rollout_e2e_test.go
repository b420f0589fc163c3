package main

import (
	"fmt"
	"math"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// rolloutSubnets is how many client subnets a share is measured over:
// each asks once, with its own ECS /24, and hash origin steering answers
// each by the weights in force, the same on every node.
const rolloutSubnets = 2000

// rolloutWorld configures g with pool web of origins a and b (weights
// 0.5 each, hash steering, checked by a monitor of one check a second
// whose first failure counts) and load balancer www answering one origin,
// located by ECS. It returns the pool's id.
func rolloutWorld(t *testing.T, g *glbd, a, b *originServer) string {
	t.Helper()
	zone := zoneFor(t, g)
	mon := g.must("POST", "/api/v1/monitors", map[string]any{
		"type": "http", "path": "/health", "port": a.port(), "expected_codes": "200",
		"interval": 1, "timeout": 1, "retries": 0, "consecutive_down": 1, "consecutive_up": 1,
	})["id"].(string)
	g.must("POST", "/api/v1/pools", map[string]any{"id": "web", "name": "web", "monitor": mon,
		"origin_steering": map[string]any{"policy": "hash"}, "origins": []map[string]any{
			{"name": "a", "address": a.ip(), "weight": 0.5}, {"name": "b", "address": b.ip(), "weight": 0.5},
		}})
	g.must("POST", "/api/v1/load_balancers", map[string]any{"id": "www", "zone": zone, "name": "www.glb.example.com",
		"default_pools": []string{"web"}, "fallback_pool": "web", "answers": 1,
		"location_strategy": map[string]any{"prefer_ecs": "always"}})
	return "web"
}

// shareOf asks g for www once from each of rolloutSubnets ECS subnets
// (several at a time over real sockets) and returns the percentage of
// answers that were ip; it fails the test when a query fails.
func shareOf(t *testing.T, g *glbd, ip string) float64 {
	t.Helper()
	s, fail := tryShare(g, ip)
	if fail != "" {
		t.Fatal(fail)
	}
	return s
}

// bothAt says whether both nodes answer ip for want ± 3 % of the
// subnets, for eventually.
func bothAt(a, b *glbd, ip string, want float64) (bool, string) {
	sa, fa := tryShare(a, ip)
	sb, fb := tryShare(b, ip)
	return fa == "" && fb == "" && near(sa, want) && near(sb, want),
		fmt.Sprintf("share %.1f %% on node a, %.1f %% on node b (want %.0f ± 3) %s%s", sa, sb, want, fa, fb)
}

// tryShare is shareOf, saying what failed rather than failing.
func tryShare(g *glbd, ip string) (float64, string) {
	var mu sync.Mutex
	hits, fails := 0, []string{}
	var wg sync.WaitGroup
	const workers = 8
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
			for i := w; i < rolloutSubnets; i += workers {
				q := new(dns.Msg).SetQuestion("www.glb.example.com.", dns.TypeA)
				ecs := &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IPv4(10, byte(i>>8), byte(i), 0).To4()}
				q.Extra = append(q.Extra, &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT, Class: 1232}, Option: []dns.EDNS0{ecs}})
				r, _, err := c.Exchange(q, g.dns)
				mu.Lock()
				switch {
				case err != nil || len(r.Answer) != 1:
					fails = append(fails, fmt.Sprint(err, r))
				case r.Answer[0].(*dns.A).A.String() == ip:
					hits++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(fails) > 0 {
		return 0, fmt.Sprintf("%d of %d queries failed, first: %s", len(fails), rolloutSubnets, fails[0])
	}
	return float64(hits) * 100 / rolloutSubnets, ""
}

// rolloutOf reads rollout id from g.
func rolloutOf(t *testing.T, g *glbd, id string) pools.Rollout {
	t.Helper()
	var out struct{ Result pools.Rollout }
	if code := g.call("GET", "/api/v1/rollouts/"+id, nil, &out); code != 200 {
		t.Fatalf("GET rollout %s: %d", id, code)
	}
	return out.Result
}

// startRollout starts the acceptance's change on g: web's weights from
// 0.5/0.5 to 0.9/0.1 in four steps of interval.
func startRollout(t *testing.T, g *glbd, interval string) pools.Rollout {
	t.Helper()
	var out struct{ Result pools.Rollout }
	if code := g.call("POST", "/api/v1/rollouts", map[string]any{"pool": "web", "weights": map[string]any{"a": 0.9, "b": 0.1},
		"steps": []int{10, 25, 50, 100}, "step_interval": interval, "reason": "new build on a"}, &out); code != 201 {
		t.Fatalf("start rollout: %d", code)
	}
	return out.Result
}

// inStep waits, by the clock every node steps by, until step k of r has
// been in force for settle, and fails if less than need is left of it.
func inStep(t *testing.T, r pools.Rollout, k int, settle, need time.Duration) time.Time {
	t.Helper()
	from := r.StartsAt.Add(time.Duration(r.HeldMS)*time.Millisecond + time.Duration(k)*r.Interval())
	if wait := time.Until(from.Add(settle)); wait > 0 {
		time.Sleep(wait) // the clock is the signal: every node steps at from
	}
	if left := time.Until(from.Add(r.Interval())); left < need {
		t.Fatalf("step %d: only %v left of it to measure in", k+1, left)
	}
	return from.Add(r.Interval())
}

func near(got, want float64) bool { return math.Abs(got-want) <= 3 }

// TestRolloutSharesFollowStepsAndRollBack is the acceptance of staged
// rollouts on two nodes sharing PostgreSQL: the share of 2,000 ECS
// subnets follows each of four steps from 0.5/0.5 to 0.9/0.1 on both
// nodes (± 3 points) and completion writes the new weights; then a second
// rollout whose gaining origin stops during step two rolls back to the
// original weights within one check interval plus a second, with audit
// entries for each step and the roll back.
func TestRolloutSharesFollowStepsAndRollBack(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.7.1", "127.0.7.2")
	a, b := startTwoNodes(t)
	rolloutWorld(t, a, origins[0], origins[1])
	ipA := origins[0].ip()
	eventually(t, 10*time.Second, "both nodes answer a and b half and half", func() (bool, string) { return bothAt(a, b, ipA, 50) })

	r := startRollout(t, a, "6s")
	followsSteps(t, a, b, r, ipA, "a", []float64{54, 60, 70, 90})
	web := b.must("GET", "/api/v1/pools/web", nil)
	if o := web["origins"].([]any); o[0].(map[string]any)["weight"] != 0.9 || o[1].(map[string]any)["weight"] != 0.1 {
		t.Fatalf("completion left web's origins at %v", o)
	}
	if s := shareOf(t, b, ipA); !near(s, 90) {
		t.Fatalf("after completion: a's share %.1f %%", s)
	}

	// The same change again, from 0.5/0.5: origin a, which gains weight,
	// stops during step two.
	a.must("PATCH", "/api/v1/pools/web", map[string]any{"origins": []map[string]any{
		{"name": "a", "address": ipA, "weight": 0.5}, {"name": "b", "address": origins[1].ip(), "weight": 0.5}}})
	eventually(t, 5*time.Second, "both nodes answer half and half again", func() (bool, string) { return bothAt(a, b, ipA, 50) })
	r = startRollout(t, b, "6s")
	rollsBackOnStop(t, a, b, r, origins[0], "a", 60)
	// Origin a back: the original weights answer, on both nodes.
	eventually(t, 5*time.Second, "the original weights answer on both nodes", func() (bool, string) { return bothAt(a, b, ipA, 50) })
	auditedRollBack(t, a, r.ID)
}

// followsSteps checks that in each step k of r, measured within the
// step, both nodes answer ip (what names it) at the share wants[k], ± 3
// points, and that r then completes.
func followsSteps(t *testing.T, a, b *glbd, r pools.Rollout, ip, what string, wants []float64) {
	t.Helper()
	for k, want := range wants {
		end := inStep(t, r, k, 300*time.Millisecond, 2*time.Second)
		sa, sb := shareOf(t, a, ip), shareOf(t, b, ip)
		if time.Now().After(end) {
			t.Fatalf("step %d: measuring outlasted the step", k+1)
		}
		t.Logf("step %d (%v %%): %s's share %.1f %% on node a, %.1f %% on node b (want %.0f ± 3)", k+1, r.Steps[k], what, sa, sb, want)
		if !near(sa, want) || !near(sb, want) {
			t.Fatalf("step %d: %s's share %.1f %% on node a, %.1f %% on node b, want %.0f ± 3", k+1, what, sa, sb, want)
		}
	}
	interval, err := time.ParseDuration(r.StepInterval)
	if err != nil {
		t.Fatalf("step interval %q: %v", r.StepInterval, err)
	}
	eventually(t, interval+5*time.Second, "the rollout completes", func() (bool, string) {
		got := rolloutOf(t, b, r.ID)
		return got.State == pools.RolloutCompleted, got.State
	})
}

// rollsBackOnStop waits for step two of r and checks that node a gives
// o, the origin r moves traffic to (named what), the share want; then
// stops o and checks that the health guard rolls r back within one check
// interval plus a second, as node a sees it, and that node b reads the
// failed step and a reason; then starts o again.
func rollsBackOnStop(t *testing.T, a, b *glbd, r pools.Rollout, o *originServer, what string, want float64) {
	t.Helper()
	inStep(t, r, 1, 500*time.Millisecond, 3*time.Second)
	if s := shareOf(t, a, o.ip()); !near(s, want) {
		t.Fatalf("step 2: %s's share %.1f %%, want %.0f ± 3", what, s, want)
	}
	stopped := time.Now()
	o.stop()
	const bound = time.Second + time.Second // one check interval plus a second
	eventually(t, 5*time.Second, "the rollout rolls back", func() (bool, string) {
		got := rolloutOf(t, a, r.ID)
		return got.State == pools.RolloutRolledBack, got.State
	})
	took := time.Since(stopped)
	t.Logf("%s's origin stopped → rolled back in %v (bound %v)", what, took.Round(time.Millisecond), bound)
	if took > bound {
		t.Errorf("rolled back %v after %s's origin stopped, more than one check interval plus a second", took, what)
	}
	got := rolloutOf(t, b, r.ID)
	if got.FailedStep == nil || *got.FailedStep != 1 || got.EndReason == "" {
		t.Errorf("rolled back: failed_step %v, end_reason %q; want step 2 (index 1) and the guard's reason", got.FailedStep, got.EndReason)
	}
	o.start()
}

// auditedRollBack checks the audit log of a rollout rolled back in step
// two: one clock entry for each of the two steps it reached, one guard
// entry for the roll back.
func auditedRollBack(t *testing.T, g *glbd, id string) {
	t.Helper()
	var log struct{ Result []pools.AuditEntry }
	g.call("GET", "/api/v1/audit?kind=rollouts&id="+id, nil, &log)
	var steps, rollbacks int
	for _, e := range log.Result {
		switch {
		case e.Actor == pools.ActorClock && e.Action == pools.ActionUpdate:
			steps++
		case e.Actor == pools.ActorGuard:
			rollbacks++
		}
	}
	if steps != 2 || rollbacks != 1 {
		t.Fatalf("audit of the rolled back rollout: %d step entries (want 2), %d roll backs (want 1): %+v", steps, rollbacks, log.Result)
	}
}

// TestRolloutSurvivesRestartAndAborts: node a starts a rollout and
// restarts during it; every node, a after its restart included, answers
// the step the clock says, each step is audited once, and an abort on
// node b returns both nodes to the original weights.
func TestRolloutSurvivesRestartAndAborts(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.7.3", "127.0.7.4")
	url := freshDatabase(t)
	a := startGlbd(t, "", "--database-url", url, "--node", "a")
	b := startGlbd(t, "", "--database-url", url, "--node", "b", "--migrate=false")
	rolloutWorld(t, a, origins[0], origins[1])
	ipA := origins[0].ip()
	eventually(t, 10*time.Second, "both nodes answer half and half", func() (bool, string) { return bothAt(a, b, ipA, 50) })
	r := startRollout(t, a, "8s")
	inStep(t, r, 0, 300*time.Millisecond, 2*time.Second)
	if s := shareOf(t, a, ipA); !near(s, 54) {
		t.Fatalf("step 1 on node a: %.1f %%", s)
	}
	dataDir := a.dataDir
	a.stop()
	a = startGlbd(t, dataDir, "--database-url", url, "--node", "a", "--migrate=false")
	inStep(t, r, 1, 300*time.Millisecond, 2*time.Second)
	sa, sb := shareOf(t, a, ipA), shareOf(t, b, ipA)
	t.Logf("step 2 after node a restarted: %.1f %% on node a, %.1f %% on node b (want 60 ± 3)", sa, sb)
	if !near(sa, 60) || !near(sb, 60) {
		t.Fatalf("step 2 after the restart: %.1f %% on node a, %.1f %% on node b, want 60 ± 3", sa, sb)
	}
	if got := rolloutOf(t, a, r.ID); got.State != pools.RolloutRunning || got.CurrentStep == nil || *got.CurrentStep != 1 {
		t.Fatalf("after the restart: %+v", got)
	}
	var out struct{ Result pools.Rollout }
	if code := b.call("POST", "/api/v1/rollouts/"+r.ID+"/abort", map[string]any{"reason": "enough"}, &out); code != 200 || out.Result.State != pools.RolloutAborted {
		t.Fatalf("abort: %d %+v", code, out.Result)
	}
	eventually(t, 5*time.Second, "the original weights answer on both nodes", func() (bool, string) { return bothAt(a, b, ipA, 50) })
	web := b.must("GET", "/api/v1/pools/web", nil)
	if o := web["origins"].([]any); o[0].(map[string]any)["weight"] != 0.5 || o[1].(map[string]any)["weight"] != 0.5 {
		t.Fatalf("after the abort web's origins are %v", o)
	}
	var log struct{ Result []pools.AuditEntry }
	a.call("GET", "/api/v1/audit?kind=rollouts&id="+r.ID+"&actor=clock", nil, &log)
	if len(log.Result) != 2 {
		t.Fatalf("%d step entries for two steps on two nodes and a restart, want 2: %+v", len(log.Result), log.Result)
	}
}
