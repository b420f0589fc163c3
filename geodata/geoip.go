package geodata

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/oschwald/geoip2-golang/v2"
	"github.com/oschwald/maxminddb-golang/v2"
	"github.com/oschwald/maxminddb-golang/v2/mmdbdata"
)

// database is one opened GeoIP file, immutable. Its memory mapping is
// released by a cleanup once the database is unreachable: a lookup holds
// the *database until it has finished reading (runtime.KeepAlive), so a
// reload never unmaps pages under a lookup, and lookups pay for no
// reference counting.
type database struct {
	path   string
	info   os.FileInfo
	kind   string
	built  time.Time
	reader *maxminddb.Reader
	// data decodes the data section; cursors from CursorAt are values, so
	// concurrent lookups share it without allocating.
	data     *mmdbdata.Decoder
	ipv4Only bool
	schema   Schema
}

// asn tells an ASN database from a City or Country one.
func (db *database) asn() bool { return db.schema == SchemaASN }

// Schema is the record layout of a database.
type Schema string

const (
	// SchemaMaxMind is MaxMind's GeoIP2 City/Country layout (also DB-IP
	// Lite's): nested country, continent, subdivisions and location maps
	// with ISO codes.
	SchemaMaxMind Schema = "maxmind"
	// SchemaIPLocationDB is the flat layout of ip-location-db
	// (github.com/sapics/ip-location-db): country_code, state1 (a name),
	// state2, city, postcode, latitude, longitude, timezone.
	SchemaIPLocationDB Schema = "ip-location-db"
	// SchemaASN is the layout of ASN databases, the same in MaxMind's
	// GeoLite2 ASN (and GeoIP2 ISP, DB-IP's ASN Lite) and in
	// ip-location-db's asn files: autonomous_system_number,
	// autonomous_system_organization.
	SchemaASN Schema = "asn"
)

// DatabaseInfo describes the loaded GeoIP database, for logs and /readyz.
type DatabaseInfo struct {
	Path     string
	Type     string // e.g. "GeoLite2-City", "city ipv4"
	Schema   Schema
	IPv4Only bool
	Built    time.Time
	Size     int64
	Modified time.Time
}

// mappedDatabases counts live mappings, so that a test can see a replaced
// database released.
var mappedDatabases atomic.Int64

// openDatabase maps and checks a MaxMind-format City or Country database
// (asn: an ASN database): its type, its metadata and search tree size,
// and the records of a spread of probe addresses. verify adds maxminddb's
// full verification of every record (for GeoLite2 City: about 20 s and
// gigabytes of garbage), for files from sources less trusted than the
// operator's own download.
func openDatabase(path string, verify, asn bool) (*database, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	size := int(info.Size())
	if size == 0 || int64(size) != info.Size() {
		return nil, fmt.Errorf("%s: bad size %d", path, info.Size())
	}
	buf, err := mapFile(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	db, err := newDatabase(path, info, buf, verify, asn)
	if err != nil {
		unmapFile(buf)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	mappedDatabases.Add(1)
	runtime.AddCleanup(db, func(b []byte) {
		unmapFile(b)
		mappedDatabases.Add(-1)
	}, buf)
	return db, nil
}

func newDatabase(path string, info os.FileInfo, buf []byte, verify, asn bool) (*database, error) {
	r, err := maxminddb.OpenBytes(buf, maxminddb.DisableStringCache())
	if err != nil {
		return nil, err
	}
	md := r.Metadata
	start := md.NodeCount*(md.RecordSize/4) + 16 // search tree, separator
	end := bytes.LastIndex(buf, []byte("\xAB\xCD\xEFMaxMind.com"))
	if end < 0 || uint(end) < start {
		return nil, errors.New("data section not found")
	}
	db := &database{
		path:     path,
		info:     info,
		kind:     md.DatabaseType,
		built:    md.BuildTime(),
		reader:   r,
		data:     mmdbdata.NewDecoder(buf[start:end], 0),
		ipv4Only: md.IPVersion == 4,
	}
	detect := detectSchema
	if asn {
		detect = detectASN
	}
	if db.schema, err = detect(buf, db); err != nil {
		return nil, err
	}
	if verify {
		if err := r.Verify(); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
	}
	if err := db.probe(); err != nil {
		return nil, err
	}
	return db, nil
}

// detectSchema tells the layout of the records from the database type in
// the metadata, else from the fields of a record.
func detectSchema(buf []byte, db *database) (Schema, error) {
	// geoip2 knows which MaxMind database types carry country records
	// (GeoIP2 and GeoLite2 City and Country, DB-IP's compatible editions):
	// any other MaxMind type, such as an ASN database, is refused here
	// rather than answering every query as unknown.
	g, err := geoip2.OpenBytes(buf)
	if err == nil {
		if _, err := g.Country(netip.IPv6Unspecified()); err != nil {
			var wrongType geoip2.InvalidMethodError
			if errors.As(err, &wrongType) {
				return "", err
			}
		}
		return SchemaMaxMind, nil
	}
	var unknownType geoip2.UnknownDatabaseTypeError
	if !errors.As(err, &unknownType) {
		return "", err
	}
	// ip-location-db names its types "city ipv4", "country ipv6", ...;
	// its City and Country records carry country_code, its ASN records
	// do not. The first record of the file tells.
	if db.firstRecordHas("country_code") {
		return SchemaIPLocationDB, nil
	}
	return "", fmt.Errorf("%w, and its records have no ip-location-db country_code field", err)
}

// detectASN checks that the records of an ASN database carry
// autonomous_system_number: a City or Country database given as one is
// refused rather than placing every client in AS 0.
func detectASN(buf []byte, db *database) (Schema, error) {
	const asnDBs = "an ASN database (GeoLite2-ASN, GeoIP2-ISP, DBIP-ASN-Lite, ip-location-db's asn files) is needed"
	g, err := geoip2.OpenBytes(buf)
	if err == nil {
		if _, err := g.ASN(netip.IPv6Unspecified()); err != nil {
			var wrongType geoip2.InvalidMethodError
			if errors.As(err, &wrongType) {
				return "", fmt.Errorf("%w: its records have no autonomous_system_number; %s", err, asnDBs)
			}
		}
		return SchemaASN, nil
	}
	var unknownType geoip2.UnknownDatabaseTypeError
	if !errors.As(err, &unknownType) {
		return "", err
	}
	// ip-location-db names its types "asn ipv4", ...: the first record
	// tells.
	if db.firstRecordHas("autonomous_system_number") {
		return SchemaASN, nil
	}
	return "", fmt.Errorf("%w, and its first record has no autonomous_system_number field; %s", err, asnDBs)
}

// firstRecordHas says whether the file's first record has the field
// name: ip-location-db's files all carry one type of record.
func (db *database) firstRecordHas(name string) bool {
	for res := range db.reader.Networks() {
		if res.Err() != nil || !res.Found() {
			continue
		}
		_, ok, err := field(db.data.CursorAt(uint(res.Offset())), name)
		return ok && err == nil
	}
	return false
}

// probe looks up addresses spread over the IPv4 space and the IPv6 global
// unicast space and decodes their records as lookups will: a file that is
// corrupt where clients are is refused before it replaces a good one.
func (db *database) probe() error {
	check := func(a netip.Addr) error {
		if db.ipv4Only && !a.Is4() {
			return nil
		}
		res := db.reader.Lookup(a)
		if err := res.Err(); err != nil {
			return fmt.Errorf("lookup %s: %w", a, err)
		}
		if !res.Found() {
			return nil
		}
		c := db.data.CursorAt(uint(res.Offset()))
		var err error
		if db.asn() {
			_, err = decodeASN(c)
		} else {
			var rec geoRecord
			err = decodeRecord(c, &rec)
		}
		if err != nil {
			return fmt.Errorf("record of %s: %w", a, err)
		}
		return nil
	}
	for i := range 512 {
		v := uint32(i)<<23 | 0x10101
		if err := check(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})); err != nil {
			return err
		}
	}
	for i := range 256 {
		var b [16]byte
		b[0], b[1], b[2], b[15] = 0x20|byte(i>>5), byte(i<<3), 0x10, 1
		if err := check(netip.AddrFrom16(b)); err != nil {
			return err
		}
	}
	return nil
}

func (db *database) describe() DatabaseInfo {
	return DatabaseInfo{Path: db.path, Type: db.kind, Schema: db.schema, IPv4Only: db.ipv4Only, Built: db.built,
		Size: db.info.Size(), Modified: db.info.ModTime()}
}

// geoRecord is what a lookup keeps of a database record; its strings are
// interned, never allocated per lookup.
type geoRecord struct {
	country   *country
	sub       subdivision
	continent string
	lat, lon  float64
	hasCoords bool
	// bits is the prefix length of the database network, in IPv4 bits for
	// an IPv4 address.
	bits int
}

// lookup finds addr (unmapped) in the database. out.bits is set whether or
// not a record is found: an empty network of the database decides as much
// as a full one. A corrupt record reads as not found: the file was
// verified when it was opened.
func (db *database) lookup(addr netip.Addr, out *geoRecord) bool {
	if db.ipv4Only && !addr.Is4() {
		return false
	}
	res := db.reader.Lookup(addr)
	if res.Err() != nil {
		return false
	}
	p := res.Prefix()
	out.bits = p.Bits()
	if addr.Is4() && !p.Addr().Is4() {
		// A record above the IPv4 subtree covers all of IPv4.
		out.bits = 0
	}
	if !res.Found() {
		return false
	}
	ok := decodeRecord(db.data.CursorAt(uint(res.Offset())), out) == nil
	runtime.KeepAlive(db)
	return ok
}

// lookupASN returns the AS number of addr in an ASN database, 0 when it
// has none (or its record is corrupt: the file was checked when opened).
func (db *database) lookupASN(addr netip.Addr) uint32 {
	if db.ipv4Only && !addr.Is4() {
		return 0
	}
	res := db.reader.Lookup(addr)
	if res.Err() != nil || !res.Found() {
		return 0
	}
	asn, err := decodeASN(db.data.CursorAt(uint(res.Offset())))
	runtime.KeepAlive(db)
	if err != nil {
		return 0
	}
	return asn
}

// decodeASN reads autonomous_system_number from an ASN record, skipping
// the organisation's name: nothing is allocated.
func decodeASN(c mmdbdata.Cursor) (uint32, error) {
	v, ok, err := field(c, "autonomous_system_number")
	if !ok || err != nil {
		return 0, err
	}
	n, _, err := v.ReadUint()
	if err != nil {
		return 0, err
	}
	if n > math.MaxUint32 {
		return 0, fmt.Errorf("autonomous_system_number %d out of range", n)
	}
	return uint32(n), nil
}

// decodeRecord reads the few fields steering needs from a City or Country
// record, skipping names in every language and everything else. It reads
// both schemas: their top-level keys do not overlap, so one pass over the
// keys serves either without asking which it is.
func decodeRecord(c mmdbdata.Cursor, out *geoRecord) error {
	m, err := c.MapReader()
	if err != nil {
		return err
	}
	var sub, subName []byte
	var have coordinates
	var registered mmdbdata.Cursor
	cur := m.First()
	for range m.Len() {
		key, v, err := cur.ReadMapKey()
		if err != nil {
			return err
		}
		switch string(key) {
		case "country":
			code, err := stringField(v, "iso_code")
			if err != nil {
				return err
			}
			out.country = countryOf(code)
		case "registered_country":
			registered = v // read only if there is no country
		case "continent":
			code, err := stringField(v, "code")
			if err != nil {
				return err
			}
			out.continent = internContinent(code)
		case "subdivisions":
			if sub, err = firstSubdivision(v); err != nil {
				return err
			}
		case "location":
			if err := readCoordinates(v, out); err != nil {
				return err
			}
		// ip-location-db
		case "country_code":
			code, _, err := v.ReadMapKey()
			if err != nil {
				return err
			}
			out.country = countryOf(code)
		case "state1":
			if subName, _, err = v.ReadMapKey(); err != nil {
				return err
			}
		default:
			if err := readCoordinate(key, v, out, &have); err != nil {
				return err
			}
		}
		if cur, err = v.Skip(); err != nil {
			return err
		}
	}
	if out.country == nil && registered != (mmdbdata.Cursor{}) {
		// Some networks (anycast, satellite) carry only the country that
		// registered them; it is still the best guess for steering.
		code, err := stringField(registered, "iso_code")
		if err != nil {
			return err
		}
		out.country = countryOf(code)
	}
	if out.country != nil && sub != nil {
		out.sub = out.country.internSub(sub)
	}
	if out.country != nil && len(subName) > 0 {
		// ip-location-db names the subdivision; the names regions.csv
		// lists (US states, Canadian provinces: those that decide a
		// region) become their codes, others are left out.
		out.sub = out.country.subByName(subName)
	}
	if have.lat || have.lon {
		// ip-location-db writes 0,0 where it knows no coordinates.
		out.hasCoords = have.lat && have.lon && (out.lat != 0 || out.lon != 0)
	}
	return nil
}

// field finds the value of key in the map at c.
func field(c mmdbdata.Cursor, key string) (mmdbdata.Cursor, bool, error) {
	m, err := c.MapReader()
	if err != nil {
		return mmdbdata.Cursor{}, false, err
	}
	cur := m.First()
	for range m.Len() {
		k, v, err := cur.ReadMapKey()
		if err != nil {
			return mmdbdata.Cursor{}, false, err
		}
		if string(k) == key {
			return v, true, nil
		}
		if cur, err = v.Skip(); err != nil {
			return mmdbdata.Cursor{}, false, err
		}
	}
	return mmdbdata.Cursor{}, false, nil
}

// stringField returns the bytes of a string value of the map at c, nil
// when absent. The bytes alias the mapped file and live only as long as
// the lookup.
func stringField(c mmdbdata.Cursor, key string) ([]byte, error) {
	v, ok, err := field(c, key)
	if !ok || err != nil {
		return nil, err
	}
	// A map key is a string value; reading the value as one gives its
	// bytes without the copy that ReadString makes.
	b, _, err := v.ReadMapKey()
	return b, err
}

// firstSubdivision returns the iso_code of the first (largest)
// subdivision: a US state, a Canadian province, an English nation.
func firstSubdivision(c mmdbdata.Cursor) ([]byte, error) {
	s, err := c.Slice()
	if err != nil {
		return nil, err
	}
	_, v, ok := s.Next(mmdbdata.Cursor{})
	if !ok {
		return nil, s.Err()
	}
	return stringField(v, "iso_code")
}

func readCoordinates(c mmdbdata.Cursor, out *geoRecord) error {
	m, err := c.MapReader()
	if err != nil {
		return err
	}
	var have coordinates
	cur := m.First()
	for range m.Len() {
		key, v, err := cur.ReadMapKey()
		if err != nil {
			return err
		}
		if err := readCoordinate(key, v, out, &have); err != nil {
			return err
		}
		if cur, err = v.Skip(); err != nil {
			return err
		}
	}
	out.hasCoords = have.lat && have.lon
	return nil
}

// coordinates records which of latitude and longitude a record has.
type coordinates struct{ lat, lon bool }

// readCoordinate reads v into out when key is latitude or longitude, as
// MaxMind's location map and ip-location-db's record both name them.
func readCoordinate(key []byte, v mmdbdata.Cursor, out *geoRecord, have *coordinates) error {
	var err error
	switch string(key) {
	case "latitude":
		out.lat, _, err = v.ReadFloat()
		have.lat = err == nil
	case "longitude":
		out.lon, _, err = v.ReadFloat()
		have.lon = err == nil
	}
	return err
}
