package storetest

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// countsByBucket keys rows by their bucket (seconds after t0), pool and
// origin, checking that they come in bucket order.
func countsByBucket(t *testing.T, rows []pools.AnswerCount, t0 time.Time) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for i, r := range rows {
		if i > 0 && r.Bucket.Before(rows[i-1].Bucket) {
			t.Errorf("rows out of bucket order: %+v", rows)
		}
		m[fmt.Sprintf("%ds %s/%s", int(r.Bucket.Sub(t0).Seconds()), r.Pool, r.Origin)] += r.Answers
	}
	return m
}

func sameCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// testAnswerCounts: the nodes' rows of a bucket and cell are summed, a
// node writing its row again replaces it, a read keeps its load balancer
// and its half-open range, and compaction (twice at once) merges old
// 10-second rows into minute rows once each and drops rows past the
// retention.
func testAnswerCounts(t *testing.T, c context.Context, s pools.Store) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	row := func(at time.Duration, lb, pool, origin string, n int64) pools.AnswerCount {
		return pools.AnswerCount{Bucket: t0.Add(at), Step: pools.AnswerStepFine, LoadBalancer: lb, Pool: pool, Origin: origin,
			Region: "WEU", Country: "FR", Rcode: "NOERROR", Answers: n}
	}
	a := []pools.AnswerCount{row(0, "www", "eu", "a", 5), row(10*time.Second, "www", "eu", "a", 7), row(10*time.Second, "www", "us", "b", 1),
		row(70*time.Second, "www", "eu", "a", 11), row(0, "api", "eu", "a", 100)}
	if err := s.AddAnswerCounts(c, "node-a", a); err != nil {
		t.Fatal(err)
	}
	// node-b first writes 2, then (a retry with the count grown) 3.
	if err := s.AddAnswerCounts(c, "node-b", []pools.AnswerCount{row(10*time.Second, "www", "eu", "a", 2)}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddAnswerCounts(c, "node-b", []pools.AnswerCount{row(10*time.Second, "www", "eu", "a", 3)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.AnswerCounts(c, "www", t0, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"0s eu/a": 5, "10s eu/a": 10, "10s us/b": 1}
	if m := countsByBucket(t, got, t0); !sameCounts(m, want) {
		t.Fatalf("www in the first minute: %v, want %v", m, want)
	}
	// Two rows of one cell in one write: the later counts, as a retry's.
	if err := s.AddAnswerCounts(c, "node-c", []pools.AnswerCount{row(0, "twice", "eu", "a", 2), row(0, "twice", "eu", "a", 4)}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.AnswerCounts(c, "twice", t0, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	} else if m := countsByBucket(t, got, t0); !sameCounts(m, map[string]int64{"0s eu/a": 4}) {
		t.Fatalf("a cell written twice in one write: %v, want the later count, 4", m)
	}
	// Compaction: every row before 10:01 becomes a minute row; rows before
	// 10:00:30 would be dropped, but they are minute rows by then, of the
	// minute 10:00, which starts before keep: dropped too.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = s.CompactAnswerCounts(c, t0.Add(time.Minute+30*time.Second), t0.Add(-time.Hour)) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err = s.AnswerCounts(c, "www", t0, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]int64{"0s eu/a": 15, "0s us/b": 1, "70s eu/a": 11}
	if m := countsByBucket(t, got, t0); !sameCounts(m, want) {
		t.Fatalf("after two compactions at once: %v, want %v (the minute 10:00 merged once, 10:01:10 still fine)", m, want)
	}
	for _, r := range got {
		if r.Bucket.Equal(t0) && r.Step != pools.AnswerStepCoarse || r.Bucket.Equal(t0.Add(70*time.Second)) && r.Step != pools.AnswerStepFine {
			t.Errorf("row %+v: wrong step", r)
		}
	}
	if err := s.CompactAnswerCounts(c, t0, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, _ = s.AnswerCounts(c, "www", t0.Add(-time.Hour), t0.Add(time.Hour))
	if m := countsByBucket(t, got, t0); !sameCounts(m, map[string]int64{"70s eu/a": 11}) {
		t.Fatalf("after retention to 10:01: %v, want only 10:01:10", m)
	}
	got, _ = s.AnswerCounts(c, "api", t0.Add(-time.Hour), t0.Add(time.Hour))
	if len(got) != 0 {
		t.Fatalf("api's rows before the retention kept: %+v", got)
	}
}

// testAnswerCountsWindow: a read of [since, until) holds the buckets,
// fine and coarse, starting at since and before until, and not the one
// starting at until nor the one ending at since: two reads of adjacent
// windows never count a bucket twice.
func testAnswerCountsWindow(t *testing.T, c context.Context, s pools.Store) {
	since := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	until := since.Add(2 * time.Minute)
	row := func(at time.Time, step int, n int64) pools.AnswerCount {
		return pools.AnswerCount{Bucket: at, Step: step, LoadBalancer: "edge", Pool: "eu", Origin: "a",
			Region: "WEU", Country: "FR", Rcode: "NOERROR", Answers: n}
	}
	fine, coarse := pools.AnswerStepFine, pools.AnswerStepCoarse
	if err := s.AddAnswerCounts(c, "node-a", []pools.AnswerCount{
		row(since.Add(-10*time.Second), fine, 1), row(since, fine, 2), row(until.Add(-10*time.Second), fine, 4), row(until, fine, 8),
		row(since.Add(-time.Minute), coarse, 16), row(since.Add(time.Minute), coarse, 32), row(until, coarse, 64),
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.AnswerCounts(c, "edge", since, until)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, r := range got {
		sum += r.Answers
		if r.Bucket.Before(since) || !r.Bucket.Before(until) {
			t.Errorf("bucket %v (step %d) is outside [%v, %v)", r.Bucket, r.Step, since, until)
		}
	}
	if sum != 2+4+32 {
		t.Errorf("[since, until) counts %d answers, want %d: the buckets at since, until-10s and the minute since+1m", sum, 2+4+32)
	}
	next, err := s.AnswerCounts(c, "edge", until, until.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	sum = 0
	for _, r := range next {
		sum += r.Answers
	}
	if sum != 8+64 {
		t.Errorf("the next window counts %d answers, want %d: the buckets starting at its since", sum, 8+64)
	}
}

// testQuerySamples: the nodes' samples of a minute, subnet and type are
// summed, a node writing its row again replaces it, a read keeps its load
// balancer and minutes from since, and compaction drops the minutes
// before its fine bound.
func testQuerySamples(t *testing.T, c context.Context, s pools.Store) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	weu, enam := netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8:1::/56")
	sample := func(at time.Duration, lb uint64, subnet netip.Prefix, n int64) pools.QuerySample {
		return pools.QuerySample{Minute: t0.Add(at), LB: lb, Subnet: subnet, Type: 1, Count: n}
	}
	for _, w := range []struct {
		node string
		rows []pools.QuerySample
	}{
		{"node-a", []pools.QuerySample{sample(0, 7, weu, 3), sample(time.Minute, 7, weu, 1), sample(time.Minute, 7, enam, 2), sample(0, 8, weu, 50)}},
		{"node-b", []pools.QuerySample{sample(time.Minute, 7, weu, 9)}},
		{"node-b", []pools.QuerySample{sample(time.Minute, 7, weu, 4)}}, // replaces the 9
	} {
		if err := s.AddQuerySamples(c, w.node, w.rows); err != nil {
			t.Fatal(err)
		}
	}
	show := func(rows []pools.QuerySample) string {
		var out []string
		for _, r := range rows {
			out = append(out, fmt.Sprintf("%ds %s %d", int(r.Minute.Sub(t0).Seconds()), r.Subnet, r.Count))
		}
		slices.Sort(out)
		return strings.Join(out, ", ")
	}
	got, err := s.QuerySamples(c, 7, t0)
	if want := "0s 198.51.100.0/24 3, 60s 198.51.100.0/24 5, 60s 2001:db8:1::/56 2"; err != nil || show(got) != want {
		t.Fatalf("samples of 7: %s (%v), want %s", show(got), err, want)
	}
	if got, _ := s.QuerySamples(c, 7, t0.Add(time.Minute)); show(got) != "60s 198.51.100.0/24 5, 60s 2001:db8:1::/56 2" {
		t.Fatalf("since the second minute: %s", show(got))
	}
	if err := s.CompactAnswerCounts(c, t0.Add(time.Minute), t0.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.QuerySamples(c, 7, t0); show(got) != "60s 198.51.100.0/24 5, 60s 2001:db8:1::/56 2" {
		t.Fatalf("after compaction to the second minute: %s", show(got))
	}
}
