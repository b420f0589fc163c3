package geodata

// Location is where a client is, as steering needs it. The zero value is
// an unknown client.
type Location struct {
	// Zone is the client's zone for zonal affinity: the zone of its
	// operator network, else its region code; "" when unknown.
	Zone string
	// Region is Cloudflare's region code (WNAM, ENAM, WEU, ...), "" unknown.
	Region      string
	Country     string // ISO 3166 alpha-2, upper case
	Subdivision string // ISO 3166-2 subdivision code without the country, e.g. "CA"
	Continent   string // two-letter continent code
	Latitude    float64
	Longitude   float64
	// HasCoordinates tells whether Latitude/Longitude are known.
	HasCoordinates bool
	// ASN is the client's autonomous system number from the ASN database
	// (--geoip-asn-db), 0 when unknown. It does not make a client Known.
	ASN uint32
	// Prefix is the length of the network that decided the location: for an
	// address inside an ECS subnet, min(ECS source prefix, database network
	// prefix). IPv4 lengths count IPv4 bits (0-32). -1 when nothing matched.
	Prefix int
}

// Known reports whether anything located the client.
func (l *Location) Known() bool { return l.Prefix >= 0 }
