package steering

import (
	"math"
	"math/rand/v2"
	"testing"
)

// share draws n answers and returns each origin's share of them.
func share(t *testing.T, s *Snapshot, n int) (map[string]float64, Answer) {
	t.Helper()
	counts := map[string]int{}
	var last Answer
	decideN(s, "www.glb.example.com", Request{Type: QTypeA, SourcePrefix: -1, Client: client("")}, rand.New(rand.NewPCG(42, 7)), n, func(ans *Answer) {
		if ans.N != 1 {
			t.Fatalf("answer has %d records, want 1", ans.N)
		}
		counts[s.Origin(ans.Origins[0]).Name]++
		last = *ans
	})
	out := map[string]float64{}
	for k, v := range counts {
		out[k] = float64(v) / float64(n)
	}
	return out, last
}

func assertShares(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		if math.Abs(got[name]-w) > 0.01 {
			t.Errorf("%s got %.4f of answers, want %.2f ±0.01", name, got[name], w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s answered %.4f but should get nothing", name, got[name])
		}
	}
}

// TestFrenchSeedWeights: A 0.4, B 0.3, C 0.3 over 100,000 draws.
func TestFrenchSeedWeights(t *testing.T) {
	t.Parallel()
	build := func(wa, wb, wc float64, down ...string) *world {
		w := newWorld()
		w.pool("p", origin{"A", "192.0.2.1", "", wa}, origin{"B", "192.0.2.2", "", wb}, origin{"C", "192.0.2.3", "", wc})
		w.pool("next", origin{"N", "192.0.2.9", "", 1})
		w.pool("fb", origin{"F", "192.0.2.10", "", 1})
		w.lb("www", []string{"p", "next"}, "fb")
		w.down("p", down...)
		return w
	}
	const n = 100_000
	got, _ := share(t, build(0.4, 0.3, 0.3).compile(t), n)
	assertShares(t, got, map[string]float64{"A": 0.4, "B": 0.3, "C": 0.3})

	got, _ = share(t, build(0.4, 0.3, 0.3, "A").compile(t), n)
	assertShares(t, got, map[string]float64{"B": 0.5, "C": 0.5})

	got, _ = share(t, build(0.4, 0.3, 0, "A").compile(t), n)
	assertShares(t, got, map[string]float64{"B": 1})

	// B at 0 too: the pool has no eligible origin, counts as unhealthy,
	// and the next pool answers.
	got, ans := share(t, build(0.4, 0, 0, "A").compile(t), n)
	assertShares(t, got, map[string]float64{"N": 1})
	if ans.Fallback {
		t.Errorf("the next pool answered but Fallback is set")
	}
	// With no next pool healthy, the fallback pool answers.
	w := build(0.4, 0, 0, "A")
	w.down("next", "N")
	got, ans = share(t, w.compile(t), 1000)
	assertShares(t, got, map[string]float64{"F": 1})
	if !ans.Fallback || ans.FailOpen {
		t.Errorf("fallback pool answered: Fallback=%v FailOpen=%v, want true false", ans.Fallback, ans.FailOpen)
	}
}

// TestMultipleAnswersWithoutReplacement: answers = 2 never repeats an
// origin, and the first record still follows the weights.
func TestMultipleAnswersWithoutReplacement(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.pool("p", origin{"A", "192.0.2.1", "", 0.5}, origin{"B", "192.0.2.2", "", 0.25}, origin{"C", "192.0.2.3", "", 0.25})
	w.lb("www", []string{"p"}, "p").Answers = 2
	s := w.compile(t)
	first := map[string]int{}
	const n = 50_000
	decideN(s, "www.glb.example.com", Request{Type: QTypeA, SourcePrefix: -1}, rand.New(rand.NewPCG(1, 1)), n, func(ans *Answer) {
		if ans.N != 2 || ans.Origins[0] == ans.Origins[1] {
			t.Fatalf("answer %v, want two distinct origins", ans.Records())
		}
		first[s.Origin(ans.Origins[0]).Name]++
	})
	if got := float64(first["A"]) / n; math.Abs(got-0.5) > 0.01 {
		t.Errorf("A first in %.3f of answers, want 0.5", got)
	}
}
