package notify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/glb-dns/glb/pools"
)

// request is one delivery attempt as it goes on the wire.
type request struct {
	body   []byte
	header http.Header
}

// render writes c's event in its subscription's format, at now (the
// signature's timestamp).
func render(c *pools.Claim, now time.Time) (request, error) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	var body any
	switch c.Subscription.Format {
	case pools.FormatStandard:
		b, err := json.Marshal(c.Event)
		if err != nil {
			return request{}, err
		}
		ts := now.Unix()
		sig, err := Sign(c.Subscription.Secret, c.Event.ID, ts, b)
		if err != nil {
			return request{}, err
		}
		h.Set("webhook-id", c.Event.ID)
		h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		h.Set("webhook-signature", sig)
		return request{body: b, header: h}, nil
	case pools.FormatSlack:
		body = slackMessage(&c.Event)
	case pools.FormatPagerDuty:
		body = pagerDutyEvent(&c.Event, c.Subscription.Secret)
	default:
		return request{}, fmt.Errorf("unknown format %q", c.Subscription.Format)
	}
	b, err := json.Marshal(body)
	return request{body: b, header: h}, err
}

// slack is a Slack incoming-webhook message: text is what notifications
// and clients without blocks show.
type slack struct {
	Text string `json:"text"`
}

func slackMessage(e *pools.Event) slack {
	mark := ""
	switch {
	case e.Type == pools.EventTest:
		mark = ":wave: "
	case isState(e) && e.Down():
		mark = ":red_circle: "
	case isState(e):
		mark = ":large_green_circle: "
	}
	return slack{Text: fmt.Sprintf("%s*glb* %s: %s", mark, e.Type, e.Data.Summary)}
}

// isState: the event reports a state that goes down and comes back.
func isState(e *pools.Event) bool {
	switch e.Type {
	case pools.EventOriginHealth, pools.EventPoolHealth, pools.EventFailover, pools.EventNode:
		return true
	}
	return false
}

// pagerDuty is a PagerDuty Events API v2 event.
type pagerDuty struct {
	RoutingKey  string          `json:"routing_key"`
	EventAction string          `json:"event_action"`
	DedupKey    string          `json:"dedup_key"`
	Payload     *pagerDutyAlert `json:"payload,omitempty"`
	Client      string          `json:"client,omitempty"`
}

type pagerDutyAlert struct {
	Summary       string           `json:"summary"`
	Source        string           `json:"source"`
	Severity      string           `json:"severity"`
	Timestamp     string           `json:"timestamp,omitempty"`
	Component     string           `json:"component,omitempty"`
	Group         string           `json:"group,omitempty"`
	Class         string           `json:"class,omitempty"`
	CustomDetails *pools.EventData `json:"custom_details,omitempty"`
}

// DedupKey is the PagerDuty dedup key of what an event reports on: the
// same for the trigger and the resolve.
func DedupKey(e *pools.Event) string {
	switch e.Type {
	case pools.EventOriginHealth:
		return "glb/origin/" + e.Data.Pool + "/" + e.Data.Origin
	case pools.EventPoolHealth:
		return "glb/pool/" + e.Data.Pool
	case pools.EventFailover:
		return "glb/failover/" + e.Data.LoadBalancer
	case pools.EventNode:
		return "glb/node/" + e.Data.Node
	}
	return "glb/" + e.Type + "/" + e.ID
}

func pagerDutyEvent(e *pools.Event, routingKey string) pagerDuty {
	out := pagerDuty{RoutingKey: routingKey, DedupKey: DedupKey(e), Client: "glb"}
	if isState(e) && !e.Down() {
		// A resolve needs only the key; PagerDuty ignores a payload.
		out.EventAction = "resolve"
		return out
	}
	out.EventAction = "trigger"
	severity := "info"
	switch e.Type {
	case pools.EventOriginHealth, pools.EventNode:
		severity = "warning"
	case pools.EventPoolHealth:
		severity = "error"
	case pools.EventFailover:
		severity = "critical"
	}
	summary := e.Data.Summary
	if len(summary) > 1024 { // the Events API's limit
		summary = summary[:1021] + "..."
	}
	source := "glb"
	switch {
	case e.Data.LoadBalancerName != "":
		source = e.Data.LoadBalancerName
	case e.Data.Origin != "":
		source = e.Data.Pool + "/" + e.Data.Origin
	case e.Data.Pool != "":
		source = e.Data.Pool
	case e.Data.Node != "":
		source = e.Data.Node
	}
	data := e.Data
	out.Payload = &pagerDutyAlert{Summary: summary, Source: source, Severity: severity,
		Timestamp: e.Time.UTC().Format(time.RFC3339Nano), Component: e.Data.PoolName, Group: e.Data.LoadBalancerName,
		Class: e.Type, CustomDetails: &data}
	return out
}
