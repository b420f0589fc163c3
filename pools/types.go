package pools

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Meta is carried by every stored object. The store sets it; clients only
// read it (ID may be given on create by a client that wants stable ids).
type Meta struct {
	ID string `json:"id"`
	// Revision increases on every write of this object; it is the ETag.
	Revision   int64     `json:"revision"`
	CreatedOn  time.Time `json:"created_on"`
	ModifiedOn time.Time `json:"modified_on"`
}

// NewID returns a random 32-hex-digit id, the form Cloudflare uses.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Zone is a DNS zone served authoritatively.
type Zone struct {
	Meta
	// Name is the apex, e.g. "glb.example.com" (no trailing dot needed).
	Name        string   `json:"name"`
	Nameservers []string `json:"nameservers"`
	SOA         SOA      `json:"soa"`
	// TTL of apex and static records that set none. Default 300.
	TTL     uint32   `json:"ttl"`
	Records []Record `json:"records"`
	// Serial is the SOA serial; the store advances it on every change to
	// the zone or to a load balancer in it. Read-only.
	Serial uint32 `json:"serial"`
	// DNSSEC turns online signing on.
	DNSSEC ZoneDNSSEC `json:"dnssec"`
	// Transfer lets secondaries follow the zone (AXFR, IXFR, NOTIFY);
	// nil: none may.
	Transfer *ZoneTransfer `json:"transfer,omitempty"`
}

// SOA holds the zone's SOA fields other than the serial.
type SOA struct {
	MName   string `json:"mname"`
	RName   string `json:"rname"`
	Refresh uint32 `json:"refresh"`
	Retry   uint32 `json:"retry"`
	Expire  uint32 `json:"expire"`
	Minimum uint32 `json:"minimum"`
}

// Record is a static record of a zone, as in Cloudflare's DNS records.
type Record struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Content string `json:"content"`
	// TTL 0 means the zone's ttl.
	TTL uint32 `json:"ttl,omitempty"`
	// Owner names the tool that manages the record (see MaxOwnerLen).
	Owner string `json:"owner,omitempty"`
}

// MonitorType is the kind of health check.
type MonitorType string

const (
	MonitorHTTP  MonitorType = "http"
	MonitorHTTPS MonitorType = "https"
	MonitorTCP   MonitorType = "tcp"
	// MonitorUDP sends send and expects a reply containing expect.
	MonitorUDP MonitorType = "udp"
	// MonitorDNS asks query_name/query_type and expects expected_rcode
	// (and expected_answer in the answer section when set).
	MonitorDNS MonitorType = "dns"
	// MonitorTLS completes a handshake and checks the leaf certificate's
	// remaining validity against min_days_valid.
	MonitorTLS MonitorType = "tls"
	// MonitorSMTP wants a 220 banner and a 250 to EHLO (and, with
	// starttls, a handshake after STARTTLS); a 4xx or 5xx is down.
	MonitorSMTP MonitorType = "smtp"
	// MonitorGRPC asks grpc.health.v1.Health/Check for service and wants
	// SERVING, in the clear or over TLS.
	MonitorGRPC MonitorType = "grpc"
	// MonitorICMP sends count echo requests and wants at most max_loss
	// percent of them unanswered.
	MonitorICMP MonitorType = "icmp"
	// MonitorFeed is not probed: its word comes from outside, through the
	// feed API (an Alertmanager webhook or a generic PUT), and lasts its
	// ttl.
	MonitorFeed MonitorType = "feed"
)

// MonitorTypes lists the monitor types in the order docs and errors name them.
var MonitorTypes = []MonitorType{MonitorHTTP, MonitorHTTPS, MonitorTCP, MonitorUDP, MonitorDNS, MonitorTLS, MonitorSMTP,
	MonitorGRPC, MonitorICMP, MonitorFeed}

// PayloadEncoding says how a udp monitor's send and expect are written.
const (
	PayloadText = "text" // the bytes as written (the default)
	PayloadHex  = "hex"  // hexadecimal digits, spaces allowed
)

// DNSTransport is a dns monitor's protocol.
const (
	DNSOverUDP = "udp" // the default
	DNSOverTCP = "tcp"
)

// Monitor says how origins are health-checked. Defaults are Cloudflare's.
type Monitor struct {
	Meta
	Description string      `json:"description"`
	Type        MonitorType `json:"type"`   // default http
	Method      string      `json:"method"` // default GET (http/https)
	Path        string      `json:"path"`   // default "/"
	// Port 0 means the scheme's default (80, 443); tcp needs a port.
	Port   int                 `json:"port"`
	Header map[string][]string `json:"header,omitempty"`
	// Timeout of one attempt, in seconds. Default 5.
	Timeout int `json:"timeout"`
	// Interval between checks, in seconds. Default 60; at least 1.
	Interval int `json:"interval"`
	// Retries are immediate re-attempts after a failed attempt. Default 2.
	Retries int `json:"retries"`
	// ExpectedCodes: "200", "2xx", or a comma-separated list of either.
	ExpectedCodes   string `json:"expected_codes"`
	ExpectedBody    string `json:"expected_body"`
	FollowRedirects bool   `json:"follow_redirects"`
	AllowInsecure   bool   `json:"allow_insecure"`
	// ConsecutiveUp/Down: checks in a row needed to change state; 0 means 1.
	ConsecutiveUp   int `json:"consecutive_up"`
	ConsecutiveDown int `json:"consecutive_down"`

	// Send and Expect (udp): the datagram sent and what the reply must
	// contain (any reply when empty), in PayloadEncoding.
	Send            string `json:"send,omitempty"`
	Expect          string `json:"expect,omitempty"`
	PayloadEncoding string `json:"payload_encoding,omitempty"` // text (default) or hex

	// QueryName and QueryType (dns): the question; Protocol udp (default)
	// or tcp. ExpectedRcode defaults to NOERROR; ExpectedAnswer, when set,
	// must be contained in one answer record's data (case-insensitive).
	QueryName      string `json:"query_name,omitempty"`
	QueryType      string `json:"query_type,omitempty"`
	Protocol       string `json:"protocol,omitempty"`
	ExpectedRcode  string `json:"expected_rcode,omitempty"`
	ExpectedAnswer string `json:"expected_answer,omitempty"`

	// ServerName (tls) is the SNI name and the name the certificate must
	// carry; empty: the origin's address. MinDaysValid: the origin is
	// down when its leaf certificate expires within that many days.
	ServerName   string `json:"server_name,omitempty"`
	MinDaysValid int    `json:"min_days_valid,omitempty"`

	// StartTLS (smtp): after EHLO, upgrade with STARTTLS, verifying the
	// certificate for server_name unless allow_insecure.
	StartTLS bool `json:"starttls,omitempty"`

	// Service (grpc) is the name asked of grpc.health.v1.Health/Check;
	// empty asks for the server's overall health. TLS (grpc) speaks TLS,
	// verifying the certificate for server_name unless allow_insecure.
	Service string `json:"service,omitempty"`
	TLS     bool   `json:"tls,omitempty"`

	// Count (icmp) echo requests are sent each attempt (default 3); the
	// origin is down when more than MaxLoss percent go unanswered
	// (default 0: every one must come back).
	Count   int `json:"count,omitempty"`
	MaxLoss int `json:"max_loss,omitempty"`

	// TTL (feed), in seconds, is how long a feed's word lasts when it
	// does not give its own (an Alertmanager webhook never does);
	// default 300. PoolLabel and OriginLabel name the alert labels that
	// say which origin an alert is about: default glb_pool (the pool's
	// id or name) and glb_origin.
	TTL         int    `json:"ttl,omitempty"`
	PoolLabel   string `json:"pool_label,omitempty"`
	OriginLabel string `json:"origin_label,omitempty"`
}

// Feed defaults (MonitorFeed).
const (
	DefaultFeedTTL     = 300
	MaxFeedTTL         = 7 * 24 * 3600
	DefaultPoolLabel   = "glb_pool"
	DefaultOriginLabel = "glb_origin"
	DefaultICMPCount   = 3
)

// OriginSteeringPolicy chooses among a pool's eligible origins.
type OriginSteeringPolicy string

const (
	// OriginRandom: weighted random (the default).
	OriginRandom OriginSteeringPolicy = "random"
	// OriginHash: weighted rendezvous hashing on the client subnet.
	OriginHash OriginSteeringPolicy = "hash"
)

// OriginSteering is a pool's origin_steering object.
type OriginSteering struct {
	Policy OriginSteeringPolicy `json:"policy"`
}

// Pool is a group of origins.
type Pool struct {
	Meta
	Name        string `json:"name"`
	Description string `json:"description"`
	Enabled     bool   `json:"enabled"` // default true
	// MinimumOrigins healthy origins for the pool to be healthy. Default 1.
	MinimumOrigins int `json:"minimum_origins"`
	// Monitor is a monitor id, or empty for none (always healthy). It is
	// short for Monitors: [{monitor: id, must_be_healthy: true}]; see Group.
	Monitor string `json:"monitor"`
	// Monitors is the pool's monitor group (Cloudflare's monitor groups):
	// several monitors, each deciding an origin's health by the rule of
	// Group, or only shown. Empty: Monitor alone decides.
	Monitors       []PoolMonitor  `json:"monitors"`
	CheckRegions   []string       `json:"check_regions"`
	Latitude       *float64       `json:"latitude"`
	Longitude      *float64       `json:"longitude"`
	OriginSteering OriginSteering `json:"origin_steering"`
	Origins        []Origin       `json:"origins"`
	// Owner names the tool that manages the pool (see MaxOwnerLen).
	Owner string `json:"owner,omitempty"`
	// LoadShedding moves a share of the traffic that would come to this
	// pool on to the next candidate (Cloudflare's load_shedding).
	LoadShedding LoadShedding `json:"load_shedding"`
	// RUM is how real users' browsers time the pool (measured_latency).
	RUM *PoolRUM `json:"rum,omitempty"`
}

// PoolMonitor is one monitor of a pool's group.
type PoolMonitor struct {
	Monitor string `json:"monitor"`
	// MustBeHealthy: an origin this monitor sees down is down.
	MustBeHealthy bool `json:"must_be_healthy"`
	// MonitoringOnly: checked and shown, never part of the decision.
	MonitoringOnly bool `json:"monitoring_only"`
}

// MaxMonitorsPerPool bounds a monitor group: each monitor multiplies the
// checks of every origin of the pool.
const MaxMonitorsPerPool = 8

// Group is the monitor group that decides the pool's origins' health:
// Monitors when given, else Monitor as a group of one monitor that must
// be healthy, else none (every origin counts as healthy). The rule, per
// origin and per node: the origin is up when every must_be_healthy
// monitor sees it up and, when the group has other deciding monitors
// (neither must_be_healthy nor monitoring_only), at least one of them
// does; monitoring_only monitors never count.
func (p *Pool) Group() []PoolMonitor {
	if len(p.Monitors) > 0 {
		return p.Monitors
	}
	if p.Monitor != "" {
		return []PoolMonitor{{Monitor: p.Monitor, MustBeHealthy: true}}
	}
	return nil
}

// Checked reports whether the pool has a monitor (alone or in a group).
func (p *Pool) Checked() bool { return p.Monitor != "" || len(p.Monitors) > 0 }

// Uses reports whether the pool checks its origins with monitor id.
func (p *Pool) Uses(id string) bool {
	if p.Monitor == id {
		return true
	}
	for _, m := range p.Monitors {
		if m.Monitor == id {
			return true
		}
	}
	return false
}

// ShedPolicy says which queries a pool sheds.
type ShedPolicy string

const (
	// ShedRandom: each query is shed with the given odds.
	ShedRandom ShedPolicy = "random"
	// ShedHash: by a hash of the client subnet, so a client sticks.
	ShedHash ShedPolicy = "hash"
)

// LoadShedding is a pool's load_shedding object; 0 % (the default) sheds
// nothing.
type LoadShedding struct {
	DefaultPercent float64    `json:"default_percent"`
	DefaultPolicy  ShedPolicy `json:"default_policy"`
	// ByLoad, when set, sheds by the load the origins report through
	// their feeds (NS1's shed_load); nil: load fed in is only shown.
	ByLoad *ByLoad `json:"by_load,omitempty"`
}

// Origin is one server of a pool.
type Origin struct {
	Name    string `json:"name"`
	Address string `json:"address"` // IPv4, IPv6 or a hostname
	Enabled bool   `json:"enabled"` // default true
	// Weight in [0, 1], default 1: share = weight / sum of eligible weights.
	Weight float64 `json:"weight"`
	// Zone is a free label matched against the client's zone (zonal affinity).
	Zone   string              `json:"zone"`
	Header map[string][]string `json:"header,omitempty"`
	// Owner names the tool that manages the origin (see MaxOwnerLen).
	Owner string `json:"owner,omitempty"`
}

// SteeringPolicy chooses the order of candidate pools.
type SteeringPolicy string

const (
	// SteeringDefault is accepted on input for "geo when a geo map is
	// set, else off", and stored and shown as that name.
	SteeringDefault        SteeringPolicy = ""
	SteeringOff            SteeringPolicy = "off"
	SteeringGeo            SteeringPolicy = "geo"
	SteeringProximity      SteeringPolicy = "proximity"
	SteeringDynamicLatency SteeringPolicy = "dynamic_latency"
	SteeringRandom         SteeringPolicy = "random"
)

// Policy is the steering policy the load balancer steers by: its
// steering_policy, or when that is unset, geo if it maps regions or
// countries and off otherwise. It is the one name every reader shows.
func (l *LoadBalancer) Policy() SteeringPolicy {
	if l.SteeringPolicy != SteeringDefault {
		return l.SteeringPolicy
	}
	if len(l.RegionPools) > 0 || len(l.CountryPools) > 0 {
		return SteeringGeo
	}
	return SteeringOff
}

// PreferECS says when an EDNS Client Subnet is trusted over the resolver's
// address.
type PreferECS string

const (
	// PreferECSAuto, the default, follows the steering: the subnet
	// locates the client whenever the answer depends on the client's
	// location (geo, proximity and dynamic_latency steering, zonal
	// affinity), as a user picking geo steering expects. Load balancers
	// stored before it keep their value.
	PreferECSAuto      PreferECS = "auto"
	PreferECSAlways    PreferECS = "always"
	PreferECSNever     PreferECS = "never"
	PreferECSProximity PreferECS = "proximity" // only with proximity steering
	PreferECSGeo       PreferECS = "geo"       // only with geo steering
)

// Spillover is the zonal affinity mode.
type Spillover string

const (
	AffinityDisabled       Spillover = "ZONAL_AFFINITY_DISABLED"
	AffinityStayWithinZone Spillover = "ZONAL_AFFINITY_STAY_WITHIN_ZONE"
	AffinitySpillCrossZone Spillover = "ZONAL_AFFINITY_SPILL_CROSS_ZONE"
)

// RandomSteering holds the pool weights of the random steering policy.
type RandomSteering struct {
	DefaultWeight float64            `json:"default_weight"` // default 1
	PoolWeights   map[string]float64 `json:"pool_weights,omitempty"`
}

// LocationStrategy says where the client's location comes from.
type LocationStrategy struct {
	PreferECS PreferECS `json:"prefer_ecs"`
}

// ZonalAffinity is a load balancer's zonal affinity setting.
type ZonalAffinity struct {
	Spillover      Spillover `json:"spillover"`
	SpilloverRatio float64   `json:"spillover_ratio"`
}

// LoadBalancer is a hostname inside a zone answered by steering.
type LoadBalancer struct {
	Meta
	Zone             string              `json:"zone"` // zone id
	Name             string              `json:"name"` // FQDN inside the zone
	Description      string              `json:"description"`
	Enabled          bool                `json:"enabled"` // default true
	TTL              uint32              `json:"ttl"`     // default 30
	SteeringPolicy   SteeringPolicy      `json:"steering_policy"`
	DefaultPools     []string            `json:"default_pools"`
	FallbackPool     string              `json:"fallback_pool"`
	RegionPools      map[string][]string `json:"region_pools,omitempty"`
	CountryPools     map[string][]string `json:"country_pools,omitempty"`
	RandomSteering   RandomSteering      `json:"random_steering"`
	LocationStrategy LocationStrategy    `json:"location_strategy"`
	ZonalAffinity    ZonalAffinity       `json:"zonal_affinity"`
	// Answers is how many origin records one answer carries; 0 = all eligible.
	Answers int `json:"answers"` // default 1
	// Owner names the tool that manages the load balancer (see MaxOwnerLen).
	Owner string `json:"owner,omitempty"`
	// AllDown is what is answered when none of the steering pools serves.
	AllDown AllDown `json:"all_down"`
	// Safety are the rules a shift must keep for this load balancer.
	Safety Safety `json:"safety"`
	// HTTPS, when set, answers HTTPS queries for the name (https.go).
	HTTPS *HTTPSRecord `json:"https,omitempty"`
	// RUM is the real user measurement settings (measured_latency).
	RUM *LoadBalancerRUM `json:"rum,omitempty"`
}

// AllDownAction is what a load balancer answers when every candidate
// pool is down (or shifted).
type AllDownAction string

const (
	// AllDownFallback: the fallback pool, whatever its health (fail open).
	AllDownFallback AllDownAction = "fallback"
	// AllDownNoData: NOERROR, no answer, the SOA in authority.
	AllDownNoData AllDownAction = "nodata"
	// AllDownRefused: REFUSED.
	AllDownRefused AllDownAction = "refused"
	// AllDownAddresses: fixed "sorry" addresses.
	AllDownAddresses AllDownAction = "addresses"
)

// AllDown is a load balancer's all_down object.
type AllDown struct {
	Action    AllDownAction `json:"action"`
	Addresses []string      `json:"addresses,omitempty"`
}

// Safety holds a load balancer's shift safety rules.
type Safety struct {
	// MinServingPools of its steering pools (default, region and country
	// pools; not the fallback) must stay serving. Default 1; 0 turns the
	// rule off.
	MinServingPools int `json:"min_serving_pools"`
	// MaxShiftedZones: at most this many zones shifted at once for it; 0
	// (the default) sets no limit.
	MaxShiftedZones int `json:"max_shifted_zones"`
}

// MaxOwnerLen bounds an owner label. An owner is a free label, empty for
// what an operator made by hand. glb does not interpret it: a tool that
// writes configuration on someone's behalf (glb-externaldns writes
// "external-dns:<cluster>") marks what it made, so that it changes only
// that, and an operator sees at a glance what not to edit by hand.
const MaxOwnerLen = 128

// Network is an operator's statement of where the clients of a prefix are.
// Fields it sets override GeoIP for addresses inside it.
type Network struct {
	Meta
	CIDR        string   `json:"cidr"`
	Description string   `json:"description"`
	Zone        string   `json:"zone"`
	Region      string   `json:"region"`
	Country     string   `json:"country"`
	Latitude    *float64 `json:"latitude"`
	Longitude   *float64 `json:"longitude"`
}

// Defaults fill fields a client left out. UnmarshalJSON starts from them,
// so an omitted field takes its default and an explicit zero stays zero.

// DefaultZone returns a zone with Cloudflare-like SOA timers.
func DefaultZone() Zone {
	return Zone{TTL: 300, SOA: SOA{Refresh: 14400, Retry: 3600, Expire: 604800, Minimum: 300}}
}

// DefaultMonitor returns a monitor with Cloudflare's defaults.
func DefaultMonitor() Monitor {
	return Monitor{Type: MonitorHTTP, Method: "GET", Path: "/", Timeout: 5, Interval: 60, Retries: 2, ExpectedCodes: "200"}
}

// DefaultPool returns a pool with Cloudflare's defaults.
func DefaultPool() Pool {
	return Pool{Enabled: true, MinimumOrigins: 1, OriginSteering: OriginSteering{Policy: OriginRandom},
		LoadShedding: LoadShedding{DefaultPolicy: ShedRandom}}
}

// DefaultOrigin returns an origin with Cloudflare's defaults.
func DefaultOrigin() Origin { return Origin{Enabled: true, Weight: 1} }

// DefaultLoadBalancer returns a load balancer with Cloudflare's defaults.
func DefaultLoadBalancer() LoadBalancer {
	return LoadBalancer{
		Enabled:          true,
		TTL:              30,
		RandomSteering:   RandomSteering{DefaultWeight: 1},
		LocationStrategy: LocationStrategy{PreferECS: PreferECSAuto},
		ZonalAffinity:    ZonalAffinity{Spillover: AffinityDisabled},
		Answers:          1,
		AllDown:          AllDown{Action: AllDownFallback},
		Safety:           Safety{MinServingPools: 1},
	}
}

// decodeStrict decodes b into v rejecting unknown fields: a misspelt field
// must be an error, not a silently ignored setting.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// decodeOver decodes b strictly into *dst, starting from def so that a
// field b leaves out keeps its default; *dst is unchanged on error. P is
// the type without its UnmarshalJSON, so that decoding does not recurse.
func decodeOver[P any](b []byte, dst *P, def P) error {
	if err := decodeStrict(b, &def); err != nil {
		return err
	}
	*dst = def
	return nil
}

func (z *Zone) UnmarshalJSON(b []byte) error {
	type plain Zone
	return decodeOver(b, (*plain)(z), plain(DefaultZone()))
}

func (m *Monitor) UnmarshalJSON(b []byte) error {
	type plain Monitor
	return decodeOver(b, (*plain)(m), plain(DefaultMonitor()))
}

func (p *Pool) UnmarshalJSON(b []byte) error {
	type plain Pool
	return decodeOver(b, (*plain)(p), plain(DefaultPool()))
}

func (o *Origin) UnmarshalJSON(b []byte) error {
	type plain Origin
	return decodeOver(b, (*plain)(o), plain(DefaultOrigin()))
}

func (l *LoadBalancer) UnmarshalJSON(b []byte) error {
	type plain LoadBalancer
	if err := decodeOver(b, (*plain)(l), plain(DefaultLoadBalancer())); err != nil {
		return err
	}
	// An empty or missing steering_policy (older files and stores, and
	// Cloudflare's clients, send one) reads as the name it steers by.
	l.SteeringPolicy = l.Policy()
	return nil
}

func (n *Network) UnmarshalJSON(b []byte) error {
	type plain Network
	return decodeOver(b, (*plain)(n), plain{})
}

// Config is the whole configuration at one global revision: what a node
// compiles into its snapshot.
type Config struct {
	Revision      int64          `json:"revision"`
	Zones         []Zone         `json:"zones"`
	Monitors      []Monitor      `json:"monitors"`
	Pools         []Pool         `json:"pools"`
	LoadBalancers []LoadBalancer `json:"load_balancers"`
	Networks      []Network      `json:"networks"`
	// DNSSECKeys are every zone's keys (private parts included), read in
	// the same transaction as the rest.
	DNSSECKeys []ZoneKey `json:"dnssec_keys,omitempty"`
	// Shifts are every stored shift, ended ones included (steering keeps
	// those in force at the time it compiles).
	Shifts []Shift `json:"shifts,omitempty"`
	// Rollouts are every stored rollout, ended ones included (steering
	// applies those in force at the time it compiles).
	Rollouts []Rollout `json:"rollouts,omitempty"`
}

// NewConfig returns a Config with every list of objects empty, not nil,
// as a store's Config starts: a kind without objects reads as [], the
// same from either store.
func NewConfig() *Config {
	return &Config{Zones: []Zone{}, Monitors: []Monitor{}, Pools: []Pool{}, LoadBalancers: []LoadBalancer{},
		Networks: []Network{}, Shifts: []Shift{}, Rollouts: []Rollout{}}
}

// Add appends o to the list of its kind, and reports whether Config holds
// that kind.
func (c *Config) Add(o Object) bool {
	switch v := o.(type) {
	case *Zone:
		c.Zones = append(c.Zones, *v)
	case *Monitor:
		c.Monitors = append(c.Monitors, *v)
	case *Pool:
		c.Pools = append(c.Pools, *v)
	case *LoadBalancer:
		c.LoadBalancers = append(c.LoadBalancers, *v)
	case *Network:
		c.Networks = append(c.Networks, *v)
	case *Shift:
		c.Shifts = append(c.Shifts, *v)
	case *Rollout:
		c.Rollouts = append(c.Rollouts, *v)
	default:
		return false
	}
	return true
}
