package main

// ExternalDNS's webhook protocol as of v0.14 to v0.20: the JSON of its Go
// types endpoint.Endpoint, plan.Changes and endpoint.DomainFilter, which
// its documentation promises to keep stable. They are restated here rather
// than imported, so that glb's module does not take in ExternalDNS's
// dependency tree.

// mediaType is the only media type and version of the protocol; ExternalDNS
// refuses a negotiation answered with any other Content-Type.
const mediaType = "application/external.dns.webhook+json;version=1"

// endpoint is one record set as ExternalDNS sees it: a name, a type, its
// targets and, for weighted or failover sets, the set identifier.
type endpoint struct {
	DNSName          string            `json:"dnsName,omitempty"`
	Targets          []string          `json:"targets,omitempty"`
	RecordType       string            `json:"recordType,omitempty"`
	SetIdentifier    string            `json:"setIdentifier,omitempty"`
	RecordTTL        int64             `json:"recordTTL,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	ProviderSpecific []property        `json:"providerSpecific,omitempty"`
}

// property is a provider-specific property; annotations
// external-dns.alpha.kubernetes.io/webhook-NAME arrive as "webhook/NAME".
type property struct {
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
}

// changes is a plan's changes: UpdateOld and UpdateNew are the same
// records before and after.
type changes struct {
	Create    []*endpoint `json:"create,omitempty"`
	UpdateOld []*endpoint `json:"updateOld,omitempty"`
	UpdateNew []*endpoint `json:"updateNew,omitempty"`
	Delete    []*endpoint `json:"delete,omitempty"`
}

// domainFilter is what negotiation answers: the names this provider
// manages. ExternalDNS drops endpoints outside it before planning.
type domainFilter struct {
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// The provider-specific properties glb-externaldns reads, from the
// annotations external-dns.alpha.kubernetes.io/webhook-glb-*.
const (
	propWeight  = "webhook/glb-weight"
	propRegion  = "webhook/glb-region"
	propPool    = "webhook/glb-pool"
	propMonitor = "webhook/glb-monitor"
)

func (e *endpoint) property(name string) string {
	for _, p := range e.ProviderSpecific {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}
