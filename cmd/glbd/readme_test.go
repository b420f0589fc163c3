package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestReadmeQuickStart runs the README's quick-start commands against a
// fresh glbd, so that what a newcomer pastes keeps working.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- quickstart -->")
	block, _, ok2 := strings.Cut(rest, "<!-- /quickstart -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no <!-- quickstart --> block")
	}
	script := strings.TrimSpace(block)
	script = strings.TrimPrefix(script, "```sh")
	script = strings.TrimSuffix(script, "```")
	if !strings.Contains(script, "127.0.0.1:8080") || !strings.Contains(script, "-p 5353") {
		t.Fatal("the quick start no longer uses the default addresses; update this test")
	}

	g := startGlbd(t, "")
	_, dnsPort := splitHostPort(t, g.dns)
	script = strings.ReplaceAll(script, "http://127.0.0.1:8080", g.api)
	script = strings.ReplaceAll(script, "-p 5353", "-p "+dnsPort)
	out, err := exec.Command("bash", "-euo", "pipefail", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("quick start failed: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if !slices.Contains([]string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}, last) {
		t.Fatalf("dig printed %q, want one of the three origins; whole output:\n%s", last, out)
	}
}
