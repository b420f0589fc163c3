package pools

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// SteeringMeasuredLatency ranks the default pools by what real users
// measured from the client's network (RUM beacons), else its autonomous
// system, else its country, else its region, else by health-check RTT as
// dynamic_latency does.
const SteeringMeasuredLatency SteeringPolicy = "measured_latency"

// PoolRUM is what the RUM beacon fetches to time a pool: a small object
// served by the pool's origins (the beacon adds a cache-busting query).
type PoolRUM struct {
	ProbeURL string `json:"probe_url"`
}

// LoadBalancerRUM is a load balancer's real user measurement settings:
// the site keys a page's beacon names it with, the page origins allowed to
// post reports, and how many samples a client group needs before its
// medians rank the pools.
type LoadBalancerRUM struct {
	SiteKeys       []string `json:"site_keys"`
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
	// MinSamples a pool needs at a level (network, AS, country, region) for
	// that level's median to count; 0 is DefaultRUMMinSamples.
	MinSamples int `json:"min_samples"`
}

// DefaultRUMMinSamples is min_samples when unset.
const DefaultRUMMinSamples = 20

// RUMMinSamples is the load balancer's min_samples, defaulted.
func (l *LoadBalancer) RUMMinSamples() int {
	if l.RUM == nil || l.RUM.MinSamples <= 0 {
		return DefaultRUMMinSamples
	}
	return l.RUM.MinSamples
}

// Limits of RUM settings.
const (
	MaxRUMSiteKeys  = 8
	MaxRUMOrigins   = 32
	MaxProbeURLLen  = 2048
	MaxRUMMinSample = 1_000_000
)

func checkPoolRUM(e *errs, r *PoolRUM) {
	if r == nil {
		return
	}
	if msg := probeURLProblem(r.ProbeURL); msg != "" {
		e.add("rum.probe_url", "%s", msg)
	}
}

func probeURLProblem(s string) string {
	if s == "" {
		return "required: the URL of a small object on the pool's origins, e.g. https://pool.example.com/rum.gif"
	}
	if len(s) > MaxProbeURLLen {
		return fmt.Sprintf("at most %d characters", MaxProbeURLLen)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("%q is not an absolute http or https URL", s)
	}
	if u.Fragment != "" || u.User != nil {
		return fmt.Sprintf("%q: no fragment or user information", s)
	}
	return ""
}

func checkLBRUM(e *errs, r *LoadBalancerRUM) {
	if r == nil {
		return
	}
	if len(r.SiteKeys) == 0 {
		e.add("rum.site_keys", "at least one site key is required: the beacon names the load balancer with it")
	}
	if len(r.SiteKeys) > MaxRUMSiteKeys {
		e.add("rum.site_keys", "at most %d site keys", MaxRUMSiteKeys)
	}
	for i, k := range r.SiteKeys {
		if !siteKeyOK(k) {
			e.add(fmt.Sprintf("rum.site_keys[%d]", i), "%q: 8 to 64 letters, digits, '-' or '_'", k)
		}
	}
	if len(r.AllowedOrigins) > MaxRUMOrigins {
		e.add("rum.allowed_origins", "at most %d origins", MaxRUMOrigins)
	}
	for i, o := range r.AllowedOrigins {
		if msg := webOriginProblem(o); msg != "" {
			e.add(fmt.Sprintf("rum.allowed_origins[%d]", i), "%s", msg)
		}
	}
	inRange(e, "rum.min_samples", r.MinSamples, 0, MaxRUMMinSample)
}

// siteKeyOK: a site key is public (it sits in the operator's pages); it
// names the load balancer, it does not authenticate anyone.
func siteKeyOK(k string) bool {
	if len(k) < 8 || len(k) > 64 {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// webOriginProblem checks a web origin as browsers send it in Origin:
// scheme://host[:port], nothing after.
func webOriginProblem(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("%q is not a web origin such as https://www.example.com", s)
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.HasSuffix(s, "/") {
		return fmt.Sprintf("%q: an origin is scheme://host[:port] with nothing after", s)
	}
	if s != strings.ToLower(s) {
		return fmt.Sprintf("%q: write it in lower case, as browsers send it", s)
	}
	return ""
}

// AllowsOrigin reports whether a page of origin may post reports.
func (r *LoadBalancerRUM) AllowsOrigin(origin string) bool {
	for _, o := range r.AllowedOrigins {
		if o == origin {
			return true
		}
	}
	return false
}

// HasSiteKey reports whether key is one of the load balancer's.
func (r *LoadBalancerRUM) HasSiteKey(key string) bool {
	for _, k := range r.SiteKeys {
		if k == key {
			return true
		}
	}
	return false
}

// RUMHistogramBuckets is the length of a RUMSamples histogram: bucket i
// holds durations in [2^((i-1)/8), 2^(i/8)) ms (bucket 0 below 1 ms), so
// that a median read from it is within 9 % of the true one and
// histograms of several nodes and minutes merge by adding.
const RUMHistogramBuckets = 128

// RUMSamples is what one node took from reports in one minute for one
// client network (/24 or /48) and pool: a histogram of the times
// measured. Nodes write their own; readers sum them over nodes and the
// window.
type RUMSamples struct {
	Minute  time.Time
	Network netip.Prefix
	Pool    string
	Counts  []int32 // RUMHistogramBuckets long
}

// RUMToken is a beacon's unique name seen from both sides: Resolver is
// the resolver network (/24 or /48) that asked for it over DNS, Network the
// client network whose report carried it. Either may be unknown yet.
type RUMToken struct {
	Token    string
	Resolver netip.Prefix
	Network  netip.Prefix
	Seen     time.Time
}

// RUMResolverLink is how many reports' tokens tied a client network to
// the resolver network that looked them up.
type RUMResolverLink struct {
	Resolver netip.Prefix
	Network  netip.Prefix
	Reports  int64
}

// RUMStore merges the nodes' real user measurements.
type RUMStore interface {
	// AddRUMSamples records histograms a node took; recording the same
	// node's minute, network and pool again replaces it (a retried write).
	AddRUMSamples(ctx context.Context, node string, rows []RUMSamples) error
	// RUMSamples sums every node's histograms of minutes starting at or
	// after since, one row per network and pool (Minute zero).
	RUMSamples(ctx context.Context, since time.Time) ([]RUMSamples, error)
	// AddRUMTokens records what a node saw of beacon tokens: a row with
	// Resolver set fills the token's resolver, one with Network its
	// network, whichever side came first; Seen is the latest.
	AddRUMTokens(ctx context.Context, rows []RUMToken) error
	// RUMResolverLinks counts, per resolver and client network, the
	// tokens seen at or after since that both sides named.
	RUMResolverLinks(ctx context.Context, since time.Time) ([]RUMResolverLink, error)
	// PruneRUM deletes samples of minutes and tokens seen before before.
	PruneRUM(ctx context.Context, before time.Time) error
}
