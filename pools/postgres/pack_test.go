package postgres

import (
	"reflect"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// A packed view reads back as the states packed, each confirmed at the
// publication, pools and origins shared between views; a damaged one is
// an error, not states.
func TestPackRoundTrip(t *testing.T) {
	r := rowArrays{
		pool:     []string{"p1", "p1", "p2"},
		origin:   []string{"o1", "o2", "o1"},
		healthy:  []bool{true, false, true},
		reason:   []string{"", "connection refused", ""},
		rtt:      []int64{int64(12 * time.Millisecond), 0, int64(3 * time.Second)},
		monitors: []string{"", `[{"monitor":"m1","healthy":false,"reason":"timeout"}]`, ""},
	}
	b, err := pack(r)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := interner{}
	got, err := unpack(b, at, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []pools.OriginState{
		{Pool: "p1", Origin: "o1", Healthy: true, RTT: 12 * time.Millisecond, CheckedAt: at},
		{Pool: "p1", Origin: "o2", Reason: "connection refused", CheckedAt: at,
			Monitors: []pools.MonitorState{{Monitor: "m1", Reason: "timeout"}}},
		{Pool: "p2", Origin: "o1", Healthy: true, RTT: 3 * time.Second, CheckedAt: at},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("unpacked\n%+v\nwant\n%+v", got, want)
	}
	n := len(in)
	if again, _ := unpack(b, at, in); len(in) != n || len(again) != 3 {
		t.Errorf("a second view of the same names interned %d strings more", len(in)-n)
	}
	empty, err := pack(rowArrays{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := unpack(empty, at, in); err != nil || len(got) != 0 {
		t.Errorf("an empty view: %v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {9}, b[:len(b)/2], append([]byte{packFormat}, "not flate"...)} {
		if got, err := unpack(bad, at, interner{}); err == nil {
			t.Errorf("unpack(%q) = %v, want an error", bad, got)
		}
	}
}
