package main

import (
	"slices"
	"strconv"
	"strings"
)

// AdjustEndpoints puts the desired endpoints in the form Records reports
// them, so that ExternalDNS compares like with like: names canonical,
// only glb's properties kept, each in one spelling, those at their
// default left out. A value that does not parse is kept as it came:
// ApplyChanges refuses it and says why, where a silent drop would hide
// the mistake. Targets are sorted, as Records reports them.
//
// A load-balanced endpoint whose name has an operator's load balancer
// loses its TTL: that TTL is the operator's and ApplyChanges leaves it, so
// asking for another would plan the same update at every sync.
func (p *provider) AdjustEndpoints(eps []*endpoint) []*endpoint {
	if eps == nil {
		eps = []*endpoint{}
	}
	p.mu.Lock()
	operators := p.operatorLBs
	p.mu.Unlock()
	for _, e := range eps {
		e.DNSName = canonicalName(e.DNSName)
		slices.Sort(e.Targets)
		if e.SetIdentifier != "" && operators[e.DNSName] && (e.RecordType == "A" || e.RecordType == "AAAA") {
			e.RecordTTL = 0
		}
		var props []property
		for _, pr := range e.ProviderSpecific {
			v := strings.TrimSpace(pr.Value)
			switch pr.Name {
			case propWeight:
				if w, err := strconv.ParseFloat(v, 64); err == nil {
					if w == 1 {
						continue
					}
					v = strconv.FormatFloat(w, 'g', -1, 64)
				}
			case propRegion:
				v = strings.ToUpper(v)
			case propMonitor:
				if v == p.monitor {
					continue
				}
			case propPool:
				if e.SetIdentifier != "" && v == poolIDFor(p.owner, e.DNSName, e.SetIdentifier) {
					continue
				}
			default:
				if !strings.HasPrefix(pr.Name, "webhook/glb-") {
					continue // another provider's: glb has no use for it
				}
				// A misspelt glb property stays, for ApplyChanges to refuse.
			}
			props = append(props, property{pr.Name, v})
		}
		slices.SortFunc(props, func(a, b property) int { return strings.Compare(a.Name, b.Name) })
		e.ProviderSpecific = props
	}
	return eps
}
