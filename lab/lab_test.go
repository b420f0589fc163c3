package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ciDrills are the lab's shortest drills, run by go test (and so by CI,
// which runs as root); make lab runs them all. Drill 11 adds about 15 s.
var ciDrills = []int{1, 2, 3, 7, 8, 10, 11}

// TestLabShortDrills builds glbd and runs the shortest drills in a lab of
// their own: about a minute and a half. It needs root; without it, it
// skips.
func TestLabShortDrills(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the lab needs root (network namespaces, nftables); run make lab as root")
	}
	if testing.Short() {
		t.Skip("-short: the lab takes a minute or two")
	}
	bin := filepath.Join(t.TempDir(), "glbd")
	build := exec.Command("go", "build", "-o", bin, "../cmd/glbd")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building glbd: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	results, err := runLab(ctx, config{out: testLog{t}, glbd: bin, interval: 2, drills: ciDrills})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(ciDrills) {
		t.Fatalf("%d drills ran, want %d", len(results), len(ciDrills))
	}
	for _, r := range results {
		if !r.pass {
			t.Errorf("drill %d (%s) failed; its figures are above", r.n, r.title)
		}
	}
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
