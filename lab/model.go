package main

import (
	"math"
	"slices"
	"time"
)

// A world is what a correct node knows at some moment: which regions'
// origins fail, the distances it has measured and been told of, and the
// content of the record the drills rewrite. From it follows the answer a
// correct node gives to each of the client's queries.
type world struct {
	down  [3]bool // a region's origins all fail
	table delays
	// sees[r]: the node has fresh RTTs measured from region r (its own,
	// or read from the store within 3 check periods of r's heartbeat).
	sees [3]bool
	rev  string // the A record of rev.<zone>
	// starting: the node has no snapshot yet (it is trying the store
	// before it reads its last good file) and answers SERVFAIL, which
	// sends a resolver to another nameserver: no answer, but no false one.
	starting bool
}

// servfail is how the client writes a SERVFAIL without records.
const servfail = "SERVFAIL(0 answers)"

// fallbackOrder is, for each region, the others nearest first, by the
// region centres steering uses when the client's region has no RTT data
// (WEU–ENAM ≈ 6,300 km, WEU–NEAS ≈ 9,000 km, ENAM–NEAS ≈ 11,000 km).
var fallbackOrder = [3][]int{{1, 2}, {0, 2}, {0, 1}}

// expect lists the addresses a correct node answers to q.
func (w world) expect(q query) []string {
	if w.starting {
		w.starting = false
		return append(w.expect(q), servfail)
	}
	switch q.kind {
	case qRev:
		return []string{w.rev}
	case qFailover:
		for p := range 3 {
			if !w.down[p] {
				return poolAddrs(p)
			}
		}
		return poolAddrs(2) // the fallback pool
	default: // qNearest
		row := -1
		if w.sees[q.client] {
			row = q.client
		} else {
			for _, r := range fallbackOrder[q.client] {
				if w.sees[r] {
					row = r
					break
				}
			}
		}
		best, bestRTT := -1, time.Duration(math.MaxInt64)
		for p := range 3 {
			if w.down[p] {
				continue
			}
			if row < 0 { // no data: the configured order
				return poolAddrs(p)
			}
			if d := w.table[p][row]; d < bestRTT {
				best, bestRTT = p, d
			}
		}
		if best < 0 {
			return poolAddrs(2)
		}
		return poolAddrs(best)
	}
}

func poolAddrs(p int) []string {
	var out []string
	for j := range originsPerRegion {
		out = append(out, originAddr(p, j).String())
	}
	return out
}

var seesAll = [3]bool{true, true, true}

// seesSome is w as node n may see it while the others' votes lapse or
// come back one node at a time: its own region's RTTs, and any of the
// others'.
func seesSome(w world, n int) []world {
	var out []world
	for mask := range 1 << 3 {
		if mask&(1<<n) == 0 {
			continue
		}
		v := w
		for r := range 3 {
			v.sees[r] = mask&(1<<r) != 0
		}
		out = append(out, v)
	}
	return out
}

// step is a change of what correct nodes answer, at a moment. For grace
// after it, the answers of the step before also count as correct: the
// drill's bound for the change to reach the answers.
type step struct {
	at    time.Time
	grace time.Duration
	// worlds[n]: the worlds node n may be in (a node's knowledge of
	// the others' RTTs can lapse at any time within a window).
	worlds [3][]world
}

// timeline is a drill's sequence of steps, in time order.
type timeline struct{ steps []step }

func (tl *timeline) add(at time.Time, grace time.Duration, worlds [3][]world) {
	tl.steps = append(tl.steps, step{at: at, grace: grace, worlds: worlds})
}

// everywhere is the same worlds for every node.
func everywhere(ws ...world) [3][]world { return [3][]world{ws, ws, ws} }

// ok says whether a correct node n could give answer to q at t.
func (tl *timeline) ok(n int, q query, t time.Time, answer string) bool {
	for i, s := range tl.steps {
		if s.at.After(t) {
			break
		}
		// This step's worlds count while it is the latest, or while the
		// next one's grace runs.
		if i+1 < len(tl.steps) {
			next := tl.steps[i+1]
			if !next.at.After(t) && !t.Before(next.at.Add(next.grace)) {
				continue
			}
		}
		for _, w := range s.worlds[n] {
			if slices.Contains(w.expect(q), answer) {
				return true
			}
		}
	}
	return false
}

// current is the last step's worlds for node n.
func (tl *timeline) current(n int) []world { return tl.steps[len(tl.steps)-1].worlds[n] }
