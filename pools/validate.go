package pools

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// MaxOriginsPerPool bounds a pool so that steering can keep its origin
// sets in one machine word (no allocation per query).
const MaxOriginsPerPool = 64

// MaxPoolsPerList bounds each pool list of a load balancer for the same
// reason: candidate orders are sorted in a fixed buffer.
const MaxPoolsPerList = 64

// Regions are Cloudflare's region codes.
var Regions = []string{"WNAM", "ENAM", "WEU", "EEU", "NSAM", "SSAM", "OC", "ME", "NAF", "SAF", "SAS", "SEAS", "NEAS"}

// RegionNames are Cloudflare's names of the region codes.
var RegionNames = map[string]string{
	"WNAM": "Western North America", "ENAM": "Eastern North America", "WEU": "Western Europe", "EEU": "Eastern Europe",
	"NSAM": "Northern South America", "SSAM": "Southern South America", "OC": "Oceania", "ME": "Middle East",
	"NAF": "Northern Africa", "SAF": "Southern Africa", "SAS": "Southern Asia", "SEAS": "South East Asia", "NEAS": "North East Asia",
}

// IsRegion reports whether s is one of Regions.
func IsRegion(s string) bool {
	for _, r := range Regions {
		if r == s {
			return true
		}
	}
	return false
}

// References answers the cross-object questions of validation. Stores
// implement it inside their write transaction.
type References interface {
	// ZoneName returns the canonical name of the zone with that id.
	ZoneName(id string) (string, bool)
	PoolExists(id string) bool
	MonitorExists(id string) bool
}

// Validate checks a zone on its own.
func (z *Zone) Validate(refs References) error {
	var e errs
	nameOK := true
	if msg := checkHostname(z.Name, false); msg != "" {
		e.add("name", "%s", msg)
		nameOK = false
	}
	if len(z.Nameservers) == 0 {
		e.add("nameservers", "at least one nameserver is required")
	}
	for i, ns := range z.Nameservers {
		if msg := checkHostname(ns, false); msg != "" {
			e.add(fmt.Sprintf("nameservers[%d]", i), "%s", msg)
		}
	}
	if z.SOA.MName != "" {
		if msg := checkHostname(z.SOA.MName, false); msg != "" {
			e.add("soa.mname", "%s", msg)
		}
	}
	if z.SOA.RName != "" {
		if msg := checkHostname(z.SOA.RName, false); msg != "" {
			e.add("soa.rname", "%s", msg)
		}
	}
	if z.SOA.Refresh == 0 {
		e.add("soa.refresh", "must be positive")
	}
	if z.SOA.Retry == 0 {
		e.add("soa.retry", "must be positive")
	}
	if z.SOA.Expire == 0 {
		e.add("soa.expire", "must be positive")
	}
	for i, r := range z.Records {
		z.checkRecord(&e, fmt.Sprintf("records[%d]", i), r, nameOK)
	}
	if nameOK {
		z.checkCuts(refs, &e)
	}
	z.Transfer.check(z, &e)
	return e.err()
}

// checkRecord checks one record of z on its own (p is its path in
// errors): what the zone-wide rules (zone cuts) need is checked apart.
// nameOK says z's name is valid, so that inside-the-zone means something.
func (z *Zone) checkRecord(e *errs, p string, r Record, nameOK bool) {
	zone := CanonicalName(z.Name)
	if msg := checkHostname(r.Name, false); msg != "" {
		e.add(p+".name", "%s", msg)
	} else if nameOK && !InZone(CanonicalName(r.Name), zone) {
		e.add(p+".name", "%q is not inside zone %q", r.Name, z.Name)
	}
	if msg := checkRecordContent(r.Type, r.Content); msg != "" {
		if _, kept := notKept[strings.ToUpper(r.Type)]; kept {
			e.add(p+".type", "%s", msg)
		} else if msg == errUnknownType {
			e.add(p+".type", "unknown record type %q (a mnemonic of the IANA registry, or TYPEnnn)", r.Type)
		} else {
			e.add(p+".content", "%s", msg)
		}
	}
	if strings.EqualFold(r.Type, "CNAME") && CanonicalName(r.Name) == zone {
		e.add(p+".name", "a CNAME cannot be at the zone apex")
	}
	checkOwner(e, p+".owner", r.Owner)
}

const errUnknownType = "unknown type"

// checkRecordContent validates presentation-format content for the static
// record types glb serves.
func checkRecordContent(typ, content string) string {
	content = strings.TrimSpace(content)
	switch strings.ToUpper(typ) {
	case "A":
		if ip, err := netip.ParseAddr(content); err != nil || !ip.Is4() {
			return "not an IPv4 address"
		}
	case "AAAA":
		if ip, err := netip.ParseAddr(content); err != nil || !ip.Is6() || ip.Is4In6() {
			return "not an IPv6 address"
		}
	case "CNAME", "NS":
		if msg := checkHostname(content, false); msg != "" {
			return "target " + msg
		}
	case "DS":
		return checkDS(content)
	case "SRV":
		return checkSRV(content)
	case "SVCB", "HTTPS":
		return checkSVCB(content)
	case "TXT":
		if content == "" {
			return "must not be empty"
		}
	case "MX":
		f := strings.Fields(content)
		if len(f) != 2 {
			return `want "preference exchange", e.g. "10 mail.example.com"`
		}
		if _, err := strconv.ParseUint(f[0], 10, 16); err != nil {
			return "preference is not a number in [0, 65535]"
		}
		if msg := checkHostname(f[1], false); msg != "" {
			return "exchange " + msg
		}
	case "CAA":
		f := strings.Fields(content)
		if len(f) < 3 {
			return `want "flags tag value", e.g. "0 issue \"letsencrypt.org\""`
		}
		if _, err := strconv.ParseUint(f[0], 10, 8); err != nil {
			return "flags is not a number in [0, 255]"
		}
	default:
		return checkAnyContent(typ, content)
	}
	return ""
}

// Validate checks a monitor on its own.
func (m *Monitor) Validate(_ References) error {
	var e errs
	m.validateKind(&e)
	inRange(&e, "port", m.Port, 0, 65535)
	if m.Timeout < 1 {
		e.add("timeout", "must be at least 1 second")
	}
	if m.Interval < 1 {
		e.add("interval", "must be at least 1 second")
	}
	inRange(&e, "retries", m.Retries, 0, 5)
	notNegative(&e, "consecutive_up", m.ConsecutiveUp)
	notNegative(&e, "consecutive_down", m.ConsecutiveDown)
	if m.Timeout >= 1 && m.Interval >= 1 && m.Timeout*(m.Retries+1) > m.Interval*10 {
		e.add("timeout", "timeout × (retries + 1) must stay within 10 intervals")
	}
	return e.err()
}

// checkExpectedCodes accepts "200", "2xx" and comma-separated lists of them.
func checkExpectedCodes(s string) string {
	if strings.TrimSpace(s) == "" {
		return "required for http and https monitors"
	}
	for _, c := range strings.Split(s, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		if len(c) != 3 || c[0] < '1' || c[0] > '5' {
			return fmt.Sprintf("%q is not a status code or class like 2xx", c)
		}
		if c[1:] == "xx" {
			continue
		}
		if _, err := strconv.Atoi(c); err != nil {
			return fmt.Sprintf("%q is not a status code or class like 2xx", c)
		}
	}
	return ""
}

func checkOwner(e *errs, path, owner string) {
	if len(owner) > MaxOwnerLen {
		e.add(path, "at most %d bytes", MaxOwnerLen)
	}
	for _, c := range owner {
		if c < 0x20 || c == 0x7f {
			e.add(path, "no control characters")
			break
		}
	}
}

func checkUnit(e *errs, path string, v float64) {
	inRange(e, path, v, 0, 1)
}

// inRange adds "must be in [lo, hi]" at path unless lo ≤ v ≤ hi (NaN
// never is): the bounds checked are the bounds told.
func inRange[N int | uint32 | float64](e *errs, path string, v, lo, hi N) {
	if !(v >= lo && v <= hi) {
		e.add(path, "must be in [%v, %v]", lo, hi)
	}
}

// notNegative adds "must not be negative" at path when v is.
func notNegative(e *errs, path string, v int) {
	if v < 0 {
		e.add(path, "must not be negative")
	}
}

func checkCoordinates(e *errs, prefix string, lat, lon *float64) {
	switch {
	case (lat == nil) != (lon == nil):
		e.add(join(prefix, "latitude"), "latitude and longitude are set together or not at all")
	case lat != nil:
		inRange(e, join(prefix, "latitude"), *lat, -90, 90)
		inRange(e, join(prefix, "longitude"), *lon, -180, 180)
	}
}

// Validate checks a pool; refs may be nil to skip the monitor reference.
func (p *Pool) Validate(refs References) error {
	var e errs
	if strings.TrimSpace(p.Name) == "" {
		e.add("name", "required")
	}
	if p.MinimumOrigins < 1 {
		e.add("minimum_origins", "must be at least 1")
	}
	if p.Monitor != "" && refs != nil && !refs.MonitorExists(p.Monitor) {
		e.add("monitor", "no monitor with id %q", p.Monitor)
	}
	checkGroup(&e, p, refs)
	for i, r := range p.CheckRegions {
		if msg := RegionProblem(r); msg != "" {
			e.add(fmt.Sprintf("check_regions[%d]", i), "%s", msg)
		}
	}
	checkCoordinates(&e, "", p.Latitude, p.Longitude)
	switch p.OriginSteering.Policy {
	case OriginRandom, OriginHash:
	default:
		e.add("origin_steering.policy", "must be random or hash")
	}
	checkOwner(&e, "owner", p.Owner)
	checkShedding(&e, p.LoadShedding)
	checkPoolRUM(&e, p.RUM)
	if len(p.Origins) == 0 {
		e.add("origins", "at least one origin is required")
	}
	if len(p.Origins) > MaxOriginsPerPool {
		e.add("origins", "at most %d origins per pool", MaxOriginsPerPool)
	}
	seen := map[string]int{}
	for i, o := range p.Origins {
		path := fmt.Sprintf("origins[%d]", i)
		if strings.TrimSpace(o.Name) == "" {
			e.add(path+".name", "required")
		} else if j, dup := seen[o.Name]; dup {
			e.add(path+".name", "duplicate origin name %q (also origins[%d])", o.Name, j)
		} else {
			seen[o.Name] = i
		}
		if msg := addressProblem(o.Address); msg != "" {
			e.add(path+".address", "%s", msg)
		}
		if !(o.Weight >= 0 && o.Weight <= 1) {
			e.add(path+".weight", "must be in [0, 1]: a weight is a share of the pool's answers (0.7 and 0.3; 1 and 1 for an even split)")
		}
		checkOwner(&e, path+".owner", o.Owner)
		for k := range o.Header {
			if !strings.EqualFold(k, "Host") {
				e.add(path+".header", "only the Host header may be set per origin, not %q", k)
			}
		}
	}
	// A pool with fewer enabled origins than minimum_origins can never
	// be healthy: every query would skip it. Refused, so that the typo
	// (or the last origin disabled) is seen when it is made; a pool meant
	// to take no traffic is disabled instead.
	if p.Enabled && p.MinimumOrigins >= 1 && len(p.Origins) > 0 {
		enabled := 0
		for _, o := range p.Origins {
			if o.Enabled {
				enabled++
			}
		}
		if p.MinimumOrigins > enabled {
			e.add("minimum_origins", "%d is more than the %d enabled origin%s: the pool could never be healthy; lower minimum_origins, enable origins, or disable the pool", p.MinimumOrigins, enabled, plural(enabled))
		}
	}
	return e.err()
}

// checkGroup checks a pool's monitors and how they sit with monitor: both
// may be given only when they say the same thing, so that neither is
// silently ignored.
func checkGroup(e *errs, p *Pool, refs References) {
	if len(p.Monitors) > MaxMonitorsPerPool {
		e.add("monitors", "at most %d monitors per pool", MaxMonitorsPerPool)
	}
	seen := map[string]int{}
	for i, m := range p.Monitors {
		path := fmt.Sprintf("monitors[%d]", i)
		switch j, dup := seen[m.Monitor]; {
		case m.Monitor == "":
			e.add(path+".monitor", "required")
		case dup:
			e.add(path+".monitor", "monitor %q is already monitors[%d]", m.Monitor, j)
		default:
			seen[m.Monitor] = i
			if refs != nil && !refs.MonitorExists(m.Monitor) {
				e.add(path+".monitor", "no monitor with id %q", m.Monitor)
			}
		}
		if m.MustBeHealthy && m.MonitoringOnly {
			e.add(path, "must_be_healthy and monitoring_only exclude each other: a monitoring_only monitor never decides")
		}
	}
	if p.Monitor != "" && len(p.Monitors) > 0 &&
		(len(p.Monitors) != 1 || p.Monitors[0] != PoolMonitor{Monitor: p.Monitor, MustBeHealthy: true}) {
		e.add("monitor", "conflicts with monitors: monitor %q stands for monitors [{\"monitor\": %q, \"must_be_healthy\": true}]; give the group in monitors alone and leave monitor empty", p.Monitor, p.Monitor)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// addressProblem says why s is not an origin address (an IP address or a
// hostname), in the words of what it probably is, or returns "".
func addressProblem(s string) string {
	if _, isIP := ParseAddress(s); isIP {
		return ""
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return "required: an IPv4 or IPv6 address or a hostname"
	}
	if t != s {
		// Pasted with spaces: said as such rather than as a bad label,
		// and not trimmed here, so that what is stored is what was sent.
		if msg := addressProblem(t); msg != "" {
			return msg
		}
		return fmt.Sprintf("%q has spaces around it; send %q", s, t)
	}
	if i := strings.Index(s, "://"); i > 0 {
		rest := strings.TrimSuffix(s[i+3:], "/")
		return fmt.Sprintf("%q is a URL; give the address alone (%q), without %s:// or a path", s, rest, s[:i])
	}
	if host, port, ok := hostPort(s); ok {
		return fmt.Sprintf("%q has a port (:%s); give the address alone (%q): the port a monitor checks is set on the monitor", s, port, host)
	}
	if looksNumeric(s) {
		// RFC 3696 §2: no top-level domain is all digits, so this is a
		// mistyped IPv4 address, not a hostname to answer with a CNAME.
		return fmt.Sprintf("%q is not an IPv4 address (four numbers 0-255 such as 192.0.2.1)", s)
	}
	if looksLikeIPv4Typo(s) {
		// 127.0.0.1O: digits and dots with a letter slipped in would be
		// answered as CNAME 127.0.0.1o.
		return fmt.Sprintf("%q is not an IPv4 address: it has a letter among its numbers (four numbers 0-255 such as 192.0.2.1); a hostname would need a label that is not a number", s)
	}
	if strings.Contains(s, ":") {
		return fmt.Sprintf("%q is not an IPv6 address", s)
	}
	if msg := checkHostname(s, false); msg != "" {
		return fmt.Sprintf("%q is not an IPv4 or IPv6 address or hostname: %s", s, msg)
	}
	return ""
}

// hostPort splits "192.0.2.1:80", "[2001:db8::1]:80" or "host.example:80"
// into address and port when the address part is itself a valid origin.
func hostPort(s string) (host, port string, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 || strings.Trim(s[i+1:], "0123456789") != "" {
		return "", "", false
	}
	host, port = s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return "", "", false // an IPv6 address with a bad last group, not a port
	}
	if _, isIP := ParseAddress(host); isIP || checkHostname(host, false) == "" {
		return host, port, true
	}
	return "", "", false
}

// looksLikeIPv4Typo reports four dot-separated parts, each a number but
// for one or two letters, with the letters only where digits belong
// (O for 0, l or I for 1): what a slip of the keyboard makes of an IPv4
// address.
func looksLikeIPv4Typo(s string) bool {
	parts := strings.Split(strings.TrimSuffix(s, "."), ".")
	if len(parts) != 4 {
		return false
	}
	letters := 0
	for _, p := range parts {
		if p == "" || len(p) > 4 {
			return false
		}
		digits := 0
		for j := 0; j < len(p); j++ {
			switch c := p[j]; {
			case c >= '0' && c <= '9':
				digits++
			case strings.IndexByte("oOlIi", c) >= 0:
				letters++
			default:
				return false
			}
		}
		if digits == 0 {
			return false
		}
	}
	return letters > 0 && letters <= 2
}

// looksNumeric reports whether s is dots and digits only: meant as an IPv4
// address.
func looksNumeric(s string) bool {
	s = strings.TrimSuffix(s, ".")
	return s != "" && strings.Trim(s, "0123456789.") == ""
}

// Validate checks a load balancer; refs resolves its zone and pools.
func (l *LoadBalancer) Validate(refs References) error {
	var e errs
	checkOwner(&e, "owner", l.Owner)
	zoneName, zoneOK := "", false
	if l.Zone == "" {
		e.add("zone", "required")
	} else if refs != nil {
		if zoneName, zoneOK = refs.ZoneName(l.Zone); !zoneOK {
			e.add("zone", "no zone with id %q", l.Zone)
		}
	}
	if msg := checkHostname(l.Name, false); msg != "" {
		e.add("name", "%s", msg)
	} else if zoneOK && !InZone(CanonicalName(l.Name), zoneName) {
		e.add("name", "%q is not inside zone %q", l.Name, zoneName)
	} else if zoneOK {
		l.checkCut(refs, &e)
	}
	inRange(&e, "ttl", l.TTL, 1, 86400)
	switch l.SteeringPolicy {
	case SteeringDefault, SteeringOff, SteeringGeo, SteeringProximity, SteeringDynamicLatency, SteeringMeasuredLatency, SteeringRandom:
	default:
		e.add("steering_policy", "must be one of off, geo, proximity, dynamic_latency, measured_latency, random")
	}
	if len(l.DefaultPools) == 0 {
		e.add("default_pools", "at least one pool is required")
	}
	pool := func(path, id string) {
		if id == "" {
			e.add(path, "empty pool id")
		} else if refs != nil && !refs.PoolExists(id) {
			e.add(path, "no pool with id %q", id)
		}
	}
	lists := map[string][]string{"default_pools": l.DefaultPools}
	for r, ids := range l.RegionPools {
		lists["region_pools."+r] = ids
	}
	for c, ids := range l.CountryPools {
		lists["country_pools."+c] = ids
	}
	for _, path := range slices.Sorted(maps.Keys(lists)) {
		if len(lists[path]) > MaxPoolsPerList {
			e.add(path, "at most %d pools", MaxPoolsPerList)
		}
	}
	for i, id := range l.DefaultPools {
		pool(fmt.Sprintf("default_pools[%d]", i), id)
	}
	if l.FallbackPool == "" {
		e.add("fallback_pool", "required")
	} else {
		pool("fallback_pool", l.FallbackPool)
	}
	for _, r := range slices.Sorted(maps.Keys(l.RegionPools)) {
		if msg := RegionProblem(r); msg != "" {
			e.add("region_pools."+r, "%s", msg)
		}
		for i, id := range l.RegionPools[r] {
			pool(fmt.Sprintf("region_pools.%s[%d]", r, i), id)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(l.CountryPools)) {
		if msg := CountryProblem(c); msg != "" {
			e.add("country_pools."+c, "%s", msg)
		}
		for i, id := range l.CountryPools[c] {
			pool(fmt.Sprintf("country_pools.%s[%d]", c, i), id)
		}
	}
	checkUnit(&e, "random_steering.default_weight", l.RandomSteering.DefaultWeight)
	for _, id := range slices.Sorted(maps.Keys(l.RandomSteering.PoolWeights)) {
		pool("random_steering.pool_weights."+id, id)
		checkUnit(&e, "random_steering.pool_weights."+id, l.RandomSteering.PoolWeights[id])
	}
	switch l.LocationStrategy.PreferECS {
	case PreferECSAuto, PreferECSAlways, PreferECSNever, PreferECSProximity, PreferECSGeo:
	default:
		e.add("location_strategy.prefer_ecs", "must be one of auto, always, never, proximity, geo")
	}
	switch l.ZonalAffinity.Spillover {
	case AffinityDisabled, AffinityStayWithinZone, AffinitySpillCrossZone:
	default:
		e.add("zonal_affinity.spillover", "must be one of %s, %s, %s", AffinityDisabled, AffinityStayWithinZone, AffinitySpillCrossZone)
	}
	checkUnit(&e, "zonal_affinity.spillover_ratio", l.ZonalAffinity.SpilloverRatio)
	inRange(&e, "answers", l.Answers, 0, MaxOriginsPerPool)
	checkAllDown(&e, l.AllDown)
	checkHTTPS(&e, l.HTTPS)
	checkLBRUM(&e, l.RUM)
	notNegative(&e, "safety.min_serving_pools", l.Safety.MinServingPools)
	notNegative(&e, "safety.max_shifted_zones", l.Safety.MaxShiftedZones)
	return e.err()
}

// Validate checks an operator network.
func (n *Network) Validate(_ References) error {
	var e errs
	if p, msg := ParseCIDR(n.CIDR); msg != "" {
		e.add("cidr", "%s", msg)
	} else if p.Masked() != p {
		e.add("cidr", "%q has host bits set; did you mean %s?", n.CIDR, p.Masked())
	}
	if n.Region != "" {
		if msg := RegionProblem(n.Region); msg != "" {
			e.add("region", "%s", msg)
		}
	}
	if n.Country != "" {
		if msg := CountryProblem(n.Country); msg != "" {
			e.add("country", "%s", msg)
		}
	}
	checkCoordinates(&e, "", n.Latitude, n.Longitude)
	return e.err()
}

// ParseCIDR parses a prefix such as 198.51.100.0/24, or says in the
// operator's words what is wrong with it.
func ParseCIDR(s string) (netip.Prefix, string) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p, ""
	}
	addr, bits, ok := strings.Cut(s, "/")
	if strings.TrimSpace(s) == "" {
		return netip.Prefix{}, "required: a prefix such as 198.51.100.0/24"
	}
	if !ok {
		return netip.Prefix{}, fmt.Sprintf("%q has no prefix length: write it as %s/24 or %s/32 (IPv6: /48, /128)", s, addr, addr)
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil || ip.Zone() != "" {
		return netip.Prefix{}, fmt.Sprintf("%q: %q is not an IPv4 or IPv6 address", s, addr)
	}
	return netip.Prefix{}, fmt.Sprintf("%q: prefix length %q is not a number in [0, %d]", s, bits, ip.BitLen())
}

func checkShedding(e *errs, ls LoadShedding) {
	inRange(e, "load_shedding.default_percent", ls.DefaultPercent, 0, 100)
	switch ls.DefaultPolicy {
	case ShedRandom, ShedHash:
	default:
		e.add("load_shedding.default_policy", "must be random or hash")
	}
	checkByLoad(e, ls.ByLoad)
}

// MaxSorryAddresses bounds all_down.addresses.
const MaxSorryAddresses = 16

func checkAllDown(e *errs, a AllDown) {
	switch a.Action {
	case AllDownFallback, AllDownNoData, AllDownRefused:
		if len(a.Addresses) > 0 {
			e.add("all_down.addresses", "only with action addresses (a merge patch clears them with null)")
		}
	case AllDownAddresses:
		if len(a.Addresses) == 0 {
			e.add("all_down.addresses", "at least one address is required with action addresses")
		}
		if len(a.Addresses) > MaxSorryAddresses {
			e.add("all_down.addresses", "at most %d addresses", MaxSorryAddresses)
		}
		for i, s := range a.Addresses {
			if ip, err := netip.ParseAddr(s); err != nil || ip.Zone() != "" {
				e.add(fmt.Sprintf("all_down.addresses[%d]", i), "not an IPv4 or IPv6 address")
			}
		}
	default:
		e.add("all_down.action", "must be one of fallback, nodata, refused, addresses")
	}
}
