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
