package main

import (
	"fmt"
	"strings"
	"time"
)

// running is a drill under way: its result, the configuration it starts
// from, when it started and what each node may answer when (tl).
type running struct {
	result
	base  world
	start time.Time
	tl    timeline
}

// begin starts a drill with every node answering the lab's configuration.
func (l *lab) begin(r result) *running {
	d := &running{result: r, base: l.base(), start: time.Now()}
	d.tl.add(d.start, 0, everywhere(d.base))
	return d
}

// end judges every answer the client saw against the timeline and
// decides the drill.
func (l *lab) end(d *running) result {
	d.counts = l.client.judge(d.start, &d.tl)
	d.decide()
	return d.result
}

// write makes the next revision through node n (retrying for within)
// and returns when it was sent and the world that answers it; a write
// that fails is the drill's error.
func (l *lab) write(d *running, n *node, within time.Duration) (time.Time, world) {
	rev := l.ids.rev + 1
	at, err := l.setRev(n, rev, within)
	if err != nil {
		d.err = err
	}
	w := d.base
	w.rev = revAddr(rev)
	return at, w
}

// failed ends a drill that could not be carried out.
func (d *running) failed(err error) result {
	d.err = err
	d.decide()
	return d.result
}

// result is what one drill measured.
type result struct {
	n        int
	title    string
	measures []measure
	notes    []string
	counts   counts
	// zeroWrong: the drill passes only with no wrong answer; noneLost:
	// also with every query answered.
	zeroWrong, noneLost bool
	err                 error // the drill could not be carried out
	pass                bool
}

// measure is one figure against its bound.
type measure struct {
	what  string
	value time.Duration
	bound time.Duration // 0: reported, not bounded
	note  string
}

func (m measure) ok() bool { return m.bound == 0 || (m.value > 0 && m.value <= m.bound) }

func (r *result) add(what string, value, bound time.Duration, note string) {
	r.measures = append(r.measures, measure{what: what, value: value, bound: bound, note: note})
}

func (r *result) decide() {
	r.pass = r.err == nil
	for _, m := range r.measures {
		r.pass = r.pass && m.ok()
	}
	if r.zeroWrong && r.counts.wrong > 0 {
		r.pass = false
	}
	if r.noneLost && r.counts.answered != r.counts.sent {
		r.pass = false
	}
}

func (l *lab) report(r result) {
	for _, m := range r.measures {
		verdict := "ok"
		switch {
		case m.bound == 0:
			verdict = "reported"
		case !m.ok():
			verdict = "FAIL"
		}
		v := "never"
		if m.value > 0 {
			v = m.value.Round(time.Millisecond).String()
		}
		b := ""
		if m.bound > 0 {
			b = " (bound " + m.bound.String() + ")"
		}
		note := ""
		if m.note != "" {
			note = "; " + m.note
		}
		l.logf("  %s: %s%s %s%s", m.what, v, b, verdict, note)
	}
	for _, n := range r.notes {
		l.logf("  %s", n)
	}
	var want []string
	if r.zeroWrong {
		want = append(want, "0 wrong")
	}
	if r.noneLost {
		want = append(want, "none lost")
	}
	bound := ""
	if len(want) > 0 {
		bound = " (bound: " + strings.Join(want, ", ") + ")"
	}
	l.logf("  %s%s", r.counts, bound)
	for _, e := range r.counts.examples {
		l.logf("    wrong: %s", e)
	}
	if r.err != nil {
		l.logf("  error: %v", r.err)
	}
	verdict := "PASS"
	if !r.pass {
		verdict = "FAIL"
	}
	l.logf("drill %d: %s", r.n, verdict)
}

// drill is one of the lab's drills.
type drill struct {
	title string
	run   func(*lab) result
}

var drillFuncs = []drill{
	{"a region's origins all fail: every node answers from the next pool", (*lab).drillRegionFails},
	{"one node loses its path to one region's origins: no false failover", (*lab).drillPartialPartition},
	{"a node is cut from PostgreSQL: it keeps answering; a write meanwhile reaches it after the heal", (*lab).drillNodeCutFromStore},
	{"PostgreSQL restarts: every node reconnects and catches up, no answer lost", (*lab).drillStoreRestart},
	{"dynamic latency: nearest pool per client region, a swapped table followed", (*lab).drillDynamicLatency},
	{"a node dies and restarts from its last good file while PostgreSQL is down", (*lab).drillRestartFromLastGood},
	{titleDrain, (*lab).drillDrainAnycast},
	{titleSigterm, (*lab).drillSigtermAnycast},
	{titleKill, (*lab).drillKillAnycast},
	{titleNoStore, (*lab).drillStartWithoutStore},
	{titleFeed, (*lab).drillFeedBlocked},
}

// Derived bounds. period is how long a check can take to renew a result
// (the monitor's interval, or its timeout when longer); votes go stale
// after three.
func (l *lab) sec(n int) time.Duration { return time.Duration(n) * time.Second }
func (l *lab) period() time.Duration   { return l.sec(max(l.interval, l.timeout)) }
func (l *lab) stale() time.Duration    { return 3 * l.period() }

// detectBound: a state change is seen by every node within the checks
// that make it (consecutive × interval), one attempt's timeout, and a
// second for the publication and the others' reading of it.
func (l *lab) detectBound(consecutive int) time.Duration {
	return l.sec(l.interval*consecutive+l.timeout) + time.Second
}

// propagation: a write reaches every node by NOTIFY at once, by the
// revision poll (every 2 s) at worst; a second more for the read and
// compile on a machine shared with others.
const propagation = 3 * time.Second

// waitFor polls cond until it holds or within passes.
func waitFor(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// followed is, over every node and the queries matching which, the
// longest time from `from` until the node answered good for good; 0 when
// some node never did.
func (l *lab) followed(from time.Time, which func(query) bool, good func(n int, q query, answer string) bool) time.Duration {
	var worst time.Duration
	for n := range regions {
		at := l.client.settledSince(from, n, which, func(q query, a string) bool { return good(n, q, a) })
		if at.IsZero() {
			return 0
		}
		worst = max(worst, max(at.Sub(from), time.Millisecond))
	}
	return worst
}

func inWorld(w world) func(int, query, string) bool {
	return func(_ int, q query, a string) bool { return contains(w.expect(q), a) }
}

func isKind(kinds ...int) func(query) bool {
	return func(q query) bool {
		for _, k := range kinds {
			if q.kind == k {
				return true
			}
		}
		return false
	}
}

// Drill 1. Every origin of WEU (the first pool of www) answers 503. Each
// node sees it after consecutive_down checks; the region majority
// agrees once two regions' results are read; www moves to ENAM, and
// near for WEU's clients to their next nearest. Then the origins
// recover and everything moves back.
func (l *lab) drillRegionFails() result {
	d := l.begin(result{zeroWrong: true})
	down := d.base
	down.down[0] = true
	bound := l.detectBound(consecutiveDown)

	l.origins.failing[0].Store(true)
	tFail := time.Now()
	d.tl.add(tFail, bound, everywhere(down))
	waitFor(bound+l.sec(5*l.interval), func() bool {
		return l.followed(tFail, isKind(qFailover, qNearest), inWorld(down)) > 0
	})
	d.add("failover (www from WEU's pool to ENAM's on every node)", l.followed(tFail, isKind(qFailover), inWorld(down)), bound,
		fmt.Sprintf("interval %ds × consecutive_down %d + timeout %ds + 1 s", l.interval, consecutiveDown, l.timeout))
	d.add("near for WEU's clients to their next nearest, every node", l.followed(tFail, isKind(qNearest), inWorld(down)), bound, "")

	l.origins.failing[0].Store(false)
	tUp := time.Now()
	upBound := l.detectBound(consecutiveUp)
	d.tl.add(tUp, upBound, everywhere(d.base))
	if err := l.settle(d.base, upBound+l.sec(5*l.interval)); err != nil {
		d.err = err
	}
	d.add("recovery (www back to WEU's pool on every node)", l.followed(tUp, isKind(qFailover), inWorld(d.base)), upBound,
		fmt.Sprintf("interval × consecutive_up %d + timeout + 1 s", consecutiveUp))
	return l.end(d)
}

// cut installs an nftables table in a namespace; heal removes it.
const cutTable = "glblab"

func (l *lab) cut(ns string, chains string) error {
	return nft(ns, "table inet "+cutTable+" {\n"+chains+"\n}\n")
}

func (l *lab) heal(ns string) error {
	return sh("", "ip", "netns", "exec", ns, "nft", "delete", "table", "inet", cutTable)
}

// ownChecks reads, from node n's API, whether node n's own checks find
// every origin of pool healthy (up) or every one unhealthy (!up).
func (l *lab) ownChecks(n *node, pool string, up bool) bool {
	var ph poolChecks
	if err := l.api.call(n, "GET", "/api/v1/pools/"+pool+"/health", nil, &ph); err != nil {
		return false
	}
	for _, o := range ph.Origins {
		seen := false
		for _, c := range o.Checks {
			if c.Node == n.name {
				seen = c.Healthy == up
			}
		}
		if !seen {
			return false
		}
	}
	return len(ph.Origins) > 0
}

// Drill 2. WEU's node loses its path to ENAM's origins (its packets to
// them are dropped), nothing else. Its own checks fail and it votes
// them down; ENAM and NEAS still find them up, two regions of three, so
// every node keeps them up: nothing changes in any answer. The cut is
// held past the time a real failover takes (drill 1's bound) after WEU
// has seen the origins down.
func (l *lab) drillPartialPartition() result {
	d := l.begin(result{zeroWrong: true})
	weu := l.nodes[0]
	var targets []string
	for j := range originsPerRegion {
		targets = append(targets, originAddr(1, j).String())
	}
	if err := l.cut(l.regionNS(0), "chain out { type filter hook output priority 0; ip daddr { "+strings.Join(targets, ", ")+" } drop; }"); err != nil {
		return d.failed(err)
	}
	tCut := time.Now()
	bound := l.detectBound(consecutiveDown)
	seen := waitFor(bound+l.sec(l.interval), func() bool { return l.ownChecks(weu, "enam", false) })
	var took time.Duration
	if seen {
		took = time.Since(tCut)
		time.Sleep(bound) // what a false failover would need to show
	}
	d.add("WEU's own checks of ENAM's origins fail after the cut", took, bound+l.sec(l.interval), "the cut works")
	held := time.Since(tCut)
	if err := l.heal(l.regionNS(0)); err != nil {
		d.err = err
	}
	tHeal := time.Now()
	back := waitFor(l.detectBound(consecutiveUp)+l.sec(l.interval), func() bool { return l.ownChecks(weu, "enam", true) })
	var backIn time.Duration
	if back {
		backIn = time.Since(tHeal)
	}
	d.add("cut held", held, 0, "no false failover in the answers meanwhile")
	d.add("WEU's own checks of ENAM's origins pass after the heal", backIn, l.detectBound(consecutiveUp)+l.sec(l.interval), "")
	if err := l.settle(d.base, l.sec(5*l.interval)); err != nil && d.err == nil {
		d.err = err
	}
	return l.end(d)
}

// Drill 3. NEAS's node is cut from PostgreSQL (packets both ways
// dropped). It keeps answering from its snapshot. A write is made
// through WEU meanwhile: WEU and ENAM answer it within the propagation
// bound; NEAS answers the old record until the heal, then the new one
// within 2 s. The cut outlasts the vote window (3 check periods), so
// NEAS goes on its own checks alone and the others drop NEAS's votes
// and RTTs: answers that follow from that count as correct.
func (l *lab) drillNodeCutFromStore() result {
	d := l.begin(result{zeroWrong: true})
	const victim = 2
	cutWorlds := func(w world) [3][]world {
		var ws [3][]world
		for n := range regions {
			if n == victim {
				ws[n] = seesSome(w, n)
				continue
			}
			alone := w
			alone.sees[victim] = false
			ws[n] = []world{w, alone}
		}
		return ws
	}
	ns := l.regionNS(victim)
	if err := l.cut(ns, "chain out { type filter hook output priority 0; ip daddr "+pgAddr.String()+" drop; }\n"+
		"chain in { type filter hook input priority 0; ip saddr "+pgAddr.String()+" drop; }"); err != nil {
		return d.failed(err)
	}
	tCut := time.Now()
	d.tl.add(tCut, 0, cutWorlds(d.base))
	time.Sleep(time.Second)
	tWrite, written := l.write(d, l.nodes[0], 10*time.Second)
	ws := cutWorlds(written)
	ws[victim] = cutWorlds(d.base)[victim]
	d.tl.add(tWrite, propagation, ws)
	others := func(q query) bool { return q.kind == qRev }
	reached := func() time.Duration {
		var worst time.Duration
		for n := range regions {
			if n == victim {
				continue
			}
			at := l.client.settledSince(tWrite, n, others, func(q query, a string) bool { return a == written.rev })
			if at.IsZero() {
				return 0
			}
			worst = max(worst, at.Sub(tWrite), time.Millisecond)
		}
		return worst
	}
	waitFor(propagation+time.Second, func() bool { return reached() > 0 })
	worst := reached()
	d.add("the write reaches the nodes still on the store", worst, propagation, "")
	// Hold past the vote window, so that NEAS runs on its own votes.
	if rest := tCut.Add(l.stale() + 2*time.Second).Sub(time.Now()); rest > 0 {
		time.Sleep(rest)
	}
	held := time.Since(tCut)
	if err := l.heal(ns); err != nil {
		d.err = err
	}
	tHeal := time.Now()
	const healBound = 2 * time.Second
	// After the heal, NEAS has the new record within the bound; votes and
	// RTTs come back within a publication and a read.
	d.tl.add(tHeal, healBound, cutWorlds(written))
	d.tl.add(tHeal.Add(l.period()+propagation), 0, everywhere(written))
	waitFor(healBound+l.sec(l.interval), func() bool {
		return !l.client.settledSince(tHeal, victim, others, func(q query, a string) bool { return a == written.rev }).IsZero()
	})
	at := l.client.settledSince(tHeal, victim, others, func(q query, a string) bool { return a == written.rev })
	var healed time.Duration
	if !at.IsZero() {
		healed = max(at.Sub(tHeal), time.Millisecond)
	}
	d.add("cut held", held, 0, fmt.Sprintf("past the vote window of 3 × %v", l.period()))
	d.add("the write reaches NEAS after the heal", healed, healBound, "")
	if err := l.settle(written, l.period()+propagation+l.sec(5*l.interval)); err != nil && d.err == nil {
		d.err = err
	}
	d.counts = l.client.judge(d.start, &d.tl)
	// NEAS must have kept answering throughout.
	for _, s := range l.client.since(tCut) {
		if s.node == victim && s.at.Before(tHeal) && s.answer == "" {
			d.err = fmt.Errorf("NEAS left a query unanswered while cut (at %s)", s.at.Format("15:04:05.000"))
			break
		}
	}
	d.decide()
	return d.result
}

// Drill 4. PostgreSQL stops (fast shutdown: every session ended) and
// starts again. DNS on every node answers throughout; once it is back,
// a write through ENAM is accepted and reaches every node, and every
// node publishes its health again (its heartbeat is fresh).
func (l *lab) drillStoreRestart() result {
	d := l.begin(result{zeroWrong: true, noneLost: true})
	lonely := func(w world) [3][]world {
		var ws [3][]world
		for n := range regions {
			ws[n] = seesSome(w, n)
		}
		return ws
	}
	tStop := time.Now()
	d.tl.add(tStop, 0, lonely(d.base))
	l.pg.stop()
	// Down long enough that every node's publication cadence and revision
	// poll (2 s) meet the dead store at least once.
	time.Sleep(max(l.period(), 2*time.Second) + time.Second)
	if err := l.pg.start(); err != nil {
		return d.failed(err)
	}
	tUp := time.Now()
	d.add("PostgreSQL down (stop to accepting connections)", tUp.Sub(tStop), 0, "")
	tWrite, written := l.write(d, l.nodes[1], 30*time.Second)
	d.add("first write accepted after the restart", time.Since(tUp), 0, "through ENAM's API")
	d.tl.add(tWrite, propagation, lonely(written))
	waitFor(propagation+time.Second, func() bool {
		return l.followed(tWrite, isKind(qRev), inWorld(written)) > 0
	})
	d.add("the write reaches every node", l.followed(tWrite, isKind(qRev), inWorld(written)), propagation, "")
	// Every node publishes again: as WEU reads them, every node's
	// heartbeat is younger than a period and a second, at a time when
	// that means it was published after PostgreSQL came back.
	fresh := func() bool {
		var ph poolChecks
		if err := l.api.call(l.nodes[0], "GET", "/api/v1/pools/weu/health", nil, &ph); err != nil || len(ph.Origins) == 0 {
			return false
		}
		got := map[string]bool{}
		for _, c := range ph.Origins[0].Checks {
			if time.Duration(c.PublishedAgeSeconds*float64(time.Second)) < l.period()+time.Second {
				got[c.Node] = true
			}
		}
		return len(got) == len(regions)
	}
	if rest := time.Until(tUp.Add(l.period() + time.Second)); rest > 0 {
		time.Sleep(rest)
	}
	beatBound := 2*l.period() + propagation
	var beats time.Duration
	if waitFor(beatBound, fresh) {
		beats = time.Since(tUp)
	}
	d.add("every node publishes its health again after the restart", beats, beatBound,
		"heartbeats younger than a period + 1 s, read a period + 1 s after the restart")
	d.tl.add(later(tWrite, tUp.Add(l.stale()+propagation)), 0, everywhere(written))
	if err := l.settle(written, l.stale()+propagation); err != nil && d.err == nil {
		d.err = err
	}
	return l.end(d)
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Drill 5. Each region's clients get their nearest pool on every node
// (the geography table, as settled before the drill). Then the origins'
// delays rotate: every region's nearest origins become the next
// region's. Every node must follow within two check intervals (the
// check that sees the new delay, the publication cadence), the delay of
// the check itself, and the second in which nodes read each other's
// health. The way back is reported: the smoothing needs four checks.
func (l *lab) drillDynamicLatency() result {
	d := l.begin(result{zeroWrong: true})
	near := isKind(qNearest)
	// Before: for two seconds every answer is the nearest pool of the
	// client's region, on every node. (The seconds before the drill
	// belong to the drill before, whose changes may still settle.)
	time.Sleep(2 * time.Second)
	nearest, all := 0, 0
	for _, s := range l.client.since(d.start) {
		if q := queries[s.q]; q.kind == qNearest && s.answer != "" {
			all++
			if contains(d.base.expect(q), s.answer) {
				nearest++
			}
		}
	}
	d.notes = append(d.notes, fmt.Sprintf("before: %d of %d answers in 2 s the nearest pool of the client's region", nearest, all))
	if all == 0 || nearest != all {
		d.err = fmt.Errorf("before the swap, %d of %d answers were the nearest pool", nearest, all)
	}
	swapped := d.base
	swapped.table = rotated
	l.origins.setTable(rotated)
	tSwap := time.Now()
	bound := 2*l.sec(l.interval) + farDelay + time.Second
	d.tl.add(tSwap, bound, everywhere(swapped))
	waitFor(bound+l.sec(3*l.interval), func() bool { return l.followed(tSwap, near, inWorld(swapped)) > 0 })
	d.add("rotated table followed by every node, every client region", l.followed(tSwap, near, inWorld(swapped)), bound,
		fmt.Sprintf("2 × interval %ds + the check's own %v + 1 s health read", l.interval, farDelay))
	l.origins.setTable(geography)
	tBack := time.Now()
	backBound := 8*l.sec(l.interval) + 2*time.Second
	d.tl.add(tBack, backBound, everywhere(d.base))
	if err := l.settle(d.base, backBound+l.sec(2*l.interval)); err != nil {
		d.err = err
	}
	d.add("geography table followed again", l.followed(tBack, near, inWorld(d.base)), 0, "four checks of smoothing, unbounded")
	return l.end(d)
}

// Drill 6. PostgreSQL stops; ENAM's node is killed (SIGKILL) and started
// again. It tries the store for 5 s, then answers from its last good
// file, the same answers as before. PostgreSQL comes back; a write
// reaches every node, ENAM included.
func (l *lab) drillRestartFromLastGood() result {
	d := l.begin(result{zeroWrong: true})
	const victim = 1
	worlds := func(w world, fresh bool) [3][]world {
		var ws [3][]world
		for n := range regions {
			ws[n] = seesSome(w, n)
			if n == victim && fresh {
				blind := w
				blind.sees = [3]bool{} // no RTT yet: configured order
				ws[n] = append(ws[n], blind)
			}
		}
		return ws
	}
	tStop := time.Now()
	d.tl.add(tStop, 0, worlds(d.base, false))
	l.pg.stop()
	v := l.nodes[victim]
	v.kill()
	// storeProbe (5 s) in cmd/glbd, then the file; a second to d.start.
	const firstBound = 6 * time.Second
	tStart := time.Now()
	starting := worlds(d.base, true)
	for i := range starting[victim] {
		starting[victim][i].starting = true
	}
	d.tl.add(tStart, 0, starting)
	d.tl.add(tStart.Add(firstBound), 0, worlds(d.base, true))
	if err := v.start(); err != nil {
		return d.failed(err)
	}
	var first time.Duration
	if waitFor(firstBound+5*time.Second, func() bool {
		for _, s := range l.client.since(tStart) {
			if s.node == victim && s.answer != "" && !strings.Contains(s.answer, "(") {
				first = s.at.Sub(tStart)
				return true
			}
		}
		return false
	}) && v.logged(`msg="serving the last good snapshot until the store answers"`) {
		d.add("ENAM answers again, from its last good file", first, firstBound, "the store probe's 5 s + 1 s")
	} else {
		d.add("ENAM answers again, from its last good file", 0, firstBound, v.logTail())
	}
	fails := 0
	for _, s := range l.client.since(tStart) {
		if s.node == victim && s.answer == servfail {
			fails++
		}
	}
	d.notes = append(d.notes, fmt.Sprintf("ENAM answered SERVFAIL %d times while starting (no snapshot yet; not counted wrong within %v)", fails, firstBound))
	// Stay down past the vote window: every node on its own votes.
	time.Sleep(l.stale())
	if err := l.pg.start(); err != nil {
		return d.failed(err)
	}
	tUp := time.Now()
	tWrite, written := l.write(d, l.nodes[0], 30*time.Second)
	d.add("PostgreSQL down", tUp.Sub(tStop), 0, "")
	d.tl.add(later(tWrite, tStart.Add(firstBound)), propagation, worlds(written, false))
	waitFor(propagation+time.Second, func() bool { return l.followed(tWrite, isKind(qRev), inWorld(written)) > 0 })
	d.add("a write after PostgreSQL is back reaches every node, ENAM included", l.followed(tWrite, isKind(qRev), inWorld(written)), propagation, "")
	d.tl.add(later(tWrite, tUp.Add(l.stale()+propagation)), 0, everywhere(written))
	if err := l.settle(written, l.stale()+propagation); err != nil && d.err == nil {
		d.err = err
	}
	return l.end(d)
}
