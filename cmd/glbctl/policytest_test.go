package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// offline runs glbctl with a server address nothing listens on: an offline
// test that tried to reach it would fail.
func offline(args ...string) (code int, stdout, stderr string) {
	env := map[string]string{"GLB_SERVER": "http://127.0.0.1:1"}
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

// brokenPolicyFile writes testdata/policy-glb.yaml with each pair of
// edits (old, new) made once; an old text the file no longer holds fails
// the test, which would otherwise check an unbroken file.
func brokenPolicyFile(t *testing.T, edits ...string) string {
	t.Helper()
	good, err := os.ReadFile("testdata/policy-glb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	broken := string(good)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(broken, edits[i]) {
			t.Fatalf("testdata/policy-glb.yaml no longer holds %q", edits[i])
		}
		broken = strings.Replace(broken, edits[i], edits[i+1], 1)
	}
	return writeFile(t, "glb.yaml", broken)
}

// TestPolicyTestsOffline: the twenty-one expectations of the test file
// hold for the file, compiled with the server's steering code, with no
// server and no database.
func TestPolicyTestsOffline(t *testing.T) {
	t.Parallel()
	code, out, errOut := offline("test", "-f", "testdata/policy-glb.yaml", "-t", "testdata/policy-tests.yaml")
	if code != exitOK || !strings.Contains(out, "21 of 21 passed") {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
	}
}

// TestPolicyTestNamesTheBrokenExpectation: a country mapped to the wrong
// pool fails its test with the expectation, the client and the explain
// trace of what happened, and only that test.
func TestPolicyTestNamesTheBrokenExpectation(t *testing.T) {
	t.Parallel()
	file := brokenPolicyFile(t, "DE: [eu]", "DE: [us]")
	code, out, _ := offline("test", "-f", file, "-t", "testdata/policy-tests.yaml")
	if code != exitFailed {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		"FAIL de-to-eu: load balancer www, client country DE",
		"wrong pool: expected pool eu; got pool us",
		"country_pools.DE", // the trace: where the pool came from
		"20 of 21 passed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "FAIL "); n != 1 {
		t.Errorf("%d failures, want 1 (de-eu-down expects us, which the break does not change):\n%s", n, out)
	}
}

// TestPolicyRulesBreak: each rule fails where it should, naming the load
// balancer.
func TestPolicyRulesBreak(t *testing.T) {
	t.Parallel()
	// ap disabled: JP maps to a disabled pool; api left with one pool.
	file := brokenPolicyFile(t,
		"  - id: ap\n    name: ap\n", "  - id: ap\n    name: ap\n    enabled: false\n",
		"    default_pools: [eu, us]\n    fallback_pool: us\n", "    default_pools: [eu]\n    fallback_pool: eu\n")
	tests := writeFile(t, "tests.yaml", "rules:\n  - {name: two-pools, min_pools: 2}\n  - {name: geo-pools-enabled, geo_pools_enabled: true}\n")
	code, out, errOut := offline("test", "-f", file, "-t", tests)
	if code != exitFailed {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"FAIL two-pools\n  load balancer api has 1 enabled pool(s) [eu], fewer than 2",
		"FAIL geo-pools-enabled\n  load balancer www: country_pools.JP maps to pool ap, which is disabled",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestPolicyTestFileIsChecked: a test that cannot mean what it says is
// refused before anything runs (exit 2), every problem at once.
func TestPolicyTestFileIsChecked(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ tests, want string }{
		"unknown field": {"tests:\n  - {name: x, load_balancer: www, client: {country: DE}, expect: {pol: eu}}\n", `unknown field "pol"`},
		"problems": {`tests:
  - {name: x, load_balancer: nope, client: {country: DE, subnet: 192.0.2.0/24}, expect: {}}
  - {name: x, load_balancer: www, client: {country: XX}, down: [eu/zz, nope], type: MX, expect: {pool: nope}}
`, strings.Join([]string{
			`tests[0].load_balancer: "nope": no load balancer has this id`,
			"tests[0].client: give one of address, subnet, or a place",
			"tests[0].expect: expects nothing",
			`tests[1].name: "x" is also the name of tests[0]`,
			`tests[1].client: country "XX"`,
			`tests[1].type: "MX": must be A or AAAA`,
			`tests[1].down[0]: "eu/zz": pool eu has no origin "zz"`,
			`tests[1].down[1]: "nope": no pool has the id "nope"`,
			`tests[1].expect.pool: "nope": no pool has this id`,
		}, "\n")},
		"empty": {"{}\n", "no tests and no rules"},
	} {
		file := writeFile(t, strings.ReplaceAll(name, " ", "-")+".yaml", c.tests)
		code, out, errOut := offline("test", "-f", "testdata/policy-glb.yaml", "-t", file)
		if code != exitTrouble {
			t.Errorf("%s: exit %d, want 2\n%s%s", name, code, out, errOut)
		}
		for want := range strings.Lines(c.want) {
			if !strings.Contains(errOut, strings.TrimSpace(want)) {
				t.Errorf("%s: stderr lacks %q:\n%s", name, strings.TrimSpace(want), errOut)
			}
		}
	}
}

// TestPolicyTestsAgainstALiveServer: the same tests pass against a node
// that holds the same file, read over the API.
func TestPolicyTestsAgainstALiveServer(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	n.mustCtl(exitOK, "apply", "-f", "testdata/policy-glb.yaml")
	out := n.mustCtl(exitOK, "test", "-t", "testdata/policy-tests.yaml")
	if !strings.Contains(out, "21 of 21 passed ("+n.api+")") {
		t.Errorf("not every test passed against %s:\n%s", n.api, out)
	}
	// The live configuration is what is tested: a change on the server
	// fails the test the file still passes.
	st, body := n.call("PATCH", "/api/v1/load_balancers/www", map[string]any{"country_pools": map[string]any{"DE": []string{"us"}}}, "")
	if st != 200 {
		t.Fatalf("PATCH: %d %v", st, body)
	}
	code, out, _ := n.ctl("test", "-t", "testdata/policy-tests.yaml")
	if code != exitFailed || !strings.Contains(out, "FAIL de-to-eu") {
		t.Errorf("exit %d, want 1 with de-to-eu failing:\n%s", code, out)
	}
}
