package api

import "github.com/glb-dns/glb/steering"

// Explanation is the body of GET /load_balancers/{id}/explain. It lives
// here, with the document that describes it, so that a test holds its
// fields and the schema equal.
type Explanation struct {
	// Revision is the configuration revision of the snapshot decided on.
	Revision int64  `json:"revision"`
	Client   string `json:"client"`
	ECS      string `json:"ecs,omitempty"`
	// LocatedBy is the prefix whose location steered: the ECS subnet when
	// the load balancer's prefer_ecs allows it, else the client address.
	LocatedBy string `json:"located_by"`
	// Decision is the whole trace; its client member is the location.
	Decision steering.Trace `json:"decision"`
	// DNSSEC says whether the answer is signed.
	DNSSEC ExplainDNSSEC `json:"dnssec"`
	// Ignored lists what the query carried, or what locates a client,
	// that did not steer this answer, with the setting that decided it:
	// an ECS subnet not used, a client no network or GeoIP entry placed.
	Ignored []ExplainIgnored `json:"ignored"`
}

// ExplainIgnored is one thing the decision did without.
type ExplainIgnored struct {
	// What is "ecs" (the query's EDNS Client Subnet) or "location" (no
	// operator network and no GeoIP entry placed the client).
	What string `json:"what"`
	// Setting names the setting that decided, e.g.
	// location_strategy.prefer_ecs; empty when none did.
	Setting string `json:"setting,omitempty"`
	// Reason says it in a sentence, with what to change.
	Reason string `json:"reason"`
}
