package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// readmeBlock returns the shell commands of the README block between
// <!-- name --> and <!-- /name -->.
func readmeBlock(t *testing.T, name string) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- "+name+" -->")
	block, _, ok2 := strings.Cut(rest, "<!-- /"+name+" -->")
	if !ok || !ok2 {
		t.Fatalf("README.md has no <!-- %s --> block", name)
	}
	script := strings.TrimSpace(block)
	script = strings.TrimPrefix(script, "```sh")
	script = strings.TrimSuffix(script, "```")
	if !strings.Contains(script, "127.0.0.1:8080") || !strings.Contains(script, "-p 5353") {
		t.Fatalf("the %s block no longer uses the default addresses; update this test", name)
	}
	return script
}

// TestReadmeGeoQuickStart runs the README's geo example after the quick
// start, on one fresh glbd: ECS under the default prefer_ecs (auto), located by the
// networks, sends each client to its country's pool.
func TestReadmeGeoQuickStart(t *testing.T) {
	t.Parallel()
	script := readmeBlock(t, "quickstart") + "\n" + readmeBlock(t, "quickstart-geo")
	out := runAgainstFreshGlbd(t, "geo quick start", script)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		t.Fatalf("geo quick start printed too little:\n%s", out)
	}
	gb, us := strings.TrimSpace(lines[len(lines)-2]), strings.TrimSpace(lines[len(lines)-1])
	if !slices.Contains([]string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}, gb) || us != "192.0.2.11" {
		t.Fatalf("dig printed %q for the GB subnet and %q for the US one, want one of web's and 192.0.2.11; whole output:\n%s", gb, us, out)
	}
}

// runAgainstFreshGlbd runs the README's script against a fresh glbd, its
// addresses put where the README has the defaults, and returns what it
// printed; a failing script fails the test.
func runAgainstFreshGlbd(t *testing.T, what, script string) []byte {
	t.Helper()
	g := startGlbd(t, "")
	_, dnsPort := splitHostPort(t, g.dns)
	script = strings.ReplaceAll(script, "http://127.0.0.1:8080", g.api)
	script = strings.ReplaceAll(script, "-p 5353", "-p "+dnsPort)
	out, err := exec.Command("bash", "-euo", "pipefail", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%s failed: %v\n%s", what, err, out)
	}
	return out
}

// TestReadmeQuickStart runs the README's quick-start commands against a
// fresh glbd, so that what a newcomer pastes keeps working.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	script := readmeBlock(t, "quickstart")

	out := runAgainstFreshGlbd(t, "quick start", script)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if !slices.Contains([]string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}, last) {
		t.Fatalf("dig printed %q, want one of the three origins; whole output:\n%s", last, out)
	}
}
