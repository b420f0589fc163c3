package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
)

// TestExplainPrintsWhatWasIgnored: the table shows each ignored item on a
// line of its own, under the query it belongs to.
func TestExplainPrintsWhatWasIgnored(t *testing.T) {
	t.Parallel()
	var e api.Explanation
	if err := json.Unmarshal([]byte(`{"client": "198.51.100.7", "ecs": "203.0.113.0/24", "located_by": "198.51.100.7/32",
		"decision": {"client": {"known": false, "prefix": -1}},
		"ignored": [{"what": "ecs", "setting": "location_strategy.prefer_ecs", "reason": "the ECS subnet 203.0.113.0/24 was not used"}]}`), &e); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printExplanation(&b, &e)
	if !strings.Contains(b.String(), "ignored        ecs: the ECS subnet 203.0.113.0/24 was not used\n") {
		t.Errorf("explain output:\n%s", b.String())
	}
}

// TestExplainPrintsBrokenSafetyRules: a safety rule that health broke
// after a shift started is said before the decision.
func TestExplainPrintsBrokenSafetyRules(t *testing.T) {
	t.Parallel()
	var e api.Explanation
	if err := json.Unmarshal([]byte(`{"client": "198.51.100.7", "decision": {"client": {"known": false, "prefix": -1},
		"safety": [{"rule": "min_serving_pools", "load_balancer": "www", "name": "www.example.com", "serving": 0, "minimum": 1,
		"message": "0 steering pools serve, fewer than safety.min_serving_pools"}]}}`), &e); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printExplanation(&b, &e)
	if !strings.Contains(b.String(), "SAFETY         rule min_serving_pools no longer holds: 0 steering pools serve, fewer than safety.min_serving_pools (1)\n") {
		t.Errorf("explain output:\n%s", b.String())
	}
}

// TestExplainPrintsMeasured: the client's AS is on its location line, and
// the RUM level that ranked the pools with its figures follows them.
func TestExplainPrintsMeasured(t *testing.T) {
	t.Parallel()
	var e api.Explanation
	if err := json.Unmarshal([]byte(`{"client": "127.0.0.1", "ecs": "203.0.113.0/24", "located_by": "203.0.113.0/24",
		"decision": {"client": {"known": true, "country": "FR", "asn": 64500, "prefix": 16},
		"measured": {"level": "asn", "group": "AS64500", "asn": 64500, "min_samples": 5, "reason": "the client's autonomous system has min_samples",
		"pools": [{"pool": "a", "name": "a", "median_ms": 12.34, "p75_ms": 20, "samples": 40, "counted": true},
		{"pool": "b", "name": "b", "median_ms": 50, "p75_ms": 60, "samples": 3, "counted": false}]}}}`), &e); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printExplanation(&b, &e)
	for _, want := range []string{"client         country FR, AS64500 (/16)\n", "measured       level asn AS64500: the client's autonomous system has min_samples\n",
		"  a median 12.3 ms, p75 20.0 ms, 40 samples\n", "  b median 50.0 ms, p75 60.0 ms, 3 samples (under min_samples)\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("explain output lacks %q:\n%s", want, b.String())
		}
	}
}
