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
}
