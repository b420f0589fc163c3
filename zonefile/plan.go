package zonefile

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// Mode says what an import does with the zone's records.
type Mode string

const (
	// Merge keeps every record of the zone and adds the file's; a record
	// in both takes the file's TTL.
	Merge Mode = "merge"
	// Replace makes the file's records the zone's records.
	Replace Mode = "replace"
)

// Diff is what an import changes, or would change on a dry run. The SOA
// and apex NS of the file are the zone's own fields: their differences
// are reported, never applied.
type Diff struct {
	Mode    Mode           `json:"mode"`
	Added   []pools.Record `json:"added"`
	Removed []pools.Record `json:"removed"`
	// Changed lists records in both whose TTL differs (after is the file's).
	Changed   []Change `json:"changed"`
	Unchanged int      `json:"unchanged"`
	// SOA lists the SOA fields in which the file differs from the zone.
	SOA []FieldDifference `json:"soa"`
	// Nameservers is set when the file's apex NS differ from the zone's.
	Nameservers *NameserversDifference `json:"nameservers,omitempty"`
}

// Change is a record whose TTL an import changes.
type Change struct {
	Before pools.Record `json:"before"`
	After  pools.Record `json:"after"`
}

// FieldDifference is one SOA field as the zone has it and as the file
// has it.
type FieldDifference struct {
	Field string `json:"field"`
	Zone  string `json:"zone"`
	File  string `json:"file"`
}

// NameserversDifference is the zone's apex NS beside the file's.
type NameserversDifference struct {
	Zone []string `json:"zone"`
	File []string `json:"file"`
}

// Empty reports whether the import changes no record.
func (d *Diff) Empty() bool {
	return len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0
}

// Plan applies f to a copy of z by mode and returns the zone's new
// records and the diff. lbs maps the canonical name of every load
// balancer of the zone to its id: such a name owns no static record. The
// error is a *pools.ValidationError naming lines of the file; nothing in
// z changes.
func Plan(z *pools.Zone, f *File, mode Mode, lbs map[string]string) ([]pools.Record, *Diff, error) {
	if mode == "" {
		mode = Merge
	}
	zone := pools.CanonicalName(z.Name)
	d := &Diff{Mode: mode, Added: []pools.Record{}, Removed: []pools.Record{}, Changed: []Change{}, SOA: []FieldDifference{}}
	var errs []pools.FieldError
	unit := f.Unit
	if unit == "" {
		unit = "line"
	}
	bad := func(line int, format string, a ...any) {
		if len(errs) < MaxErrors {
			errs = append(errs, pools.FieldError{Path: unit + " " + strconv.Itoa(line), Message: fmt.Sprintf(format, a...)})
		}
	}
	for _, e := range f.Records {
		if id, ok := lbs[e.Record.Name]; ok {
			bad(e.Line, "%s is load balancer %s: its answers come from its pools, not from records", e.Record.Name, id)
		}
	}

	effTTL := func(r pools.Record) uint32 {
		if r.TTL == 0 {
			return z.TTL
		}
		return r.TTL
	}
	// The zone's records by identity, and where each of the result's
	// records came from: a file line, or 0 for one the zone had.
	type slot struct {
		rec  pools.Record
		line int
		gone bool
	}
	var out []slot
	index := map[string]int{}
	for _, r := range z.Records {
		index[key(r)] = len(out)
		out = append(out, slot{rec: r, gone: mode == Replace})
	}
	seen := map[string]int{}
	for _, e := range f.Records {
		k := key(e.Record)
		if first, dup := seen[k]; dup {
			_ = first
			continue // a record given twice is one record (RFC 2181 §5)
		}
		seen[k] = e.Line
		if i, ok := index[k]; ok {
			s := &out[i]
			s.gone = false
			s.line = e.Line
			if effTTL(s.rec) != e.Record.TTL {
				before := s.rec
				s.rec.TTL = e.Record.TTL
				d.Changed = append(d.Changed, Change{Before: before, After: s.rec})
			} else {
				d.Unchanged++
			}
			continue
		}
		index[k] = len(out)
		out = append(out, slot{rec: e.Record, line: e.Line})
		d.Added = append(d.Added, e.Record)
	}
	records := make([]pools.Record, 0, len(out))
	lines := make([]int, 0, len(out))
	for _, s := range out {
		if s.gone {
			d.Removed = append(d.Removed, s.rec)
			continue
		}
		records = append(records, s.rec)
		lines = append(lines, s.line)
	}

	// CNAME and other data (RFC 1034 §3.6.2), a load balancer's name
	// counting as data; told at the line of a record from the file.
	byName := map[string][]int{}
	for i, r := range records {
		byName[r.Name] = append(byName[r.Name], i)
	}
	for name, idx := range byName {
		var cname, other = -1, -1
		for _, i := range idx {
			if strings.EqualFold(records[i].Type, "CNAME") {
				if cname < 0 || lines[i] > 0 {
					cname = i
				}
			} else if other < 0 || lines[i] > 0 && lines[other] == 0 {
				other = i
			}
		}
		if cname < 0 || other < 0 && name != zone {
			continue
		}
		at := cname
		if lines[at] == 0 && other >= 0 {
			at = other
		}
		what := "other records"
		if name == zone {
			what = "the zone's SOA and NS"
		} else if other >= 0 {
			what = records[other].Type + " " + records[other].Content
		}
		line := lines[at]
		if line == 0 {
			continue // the zone had it so; its own validation says so
		}
		bad(line, "a CNAME cannot share its name %s with %s", name, what)
	}

	if len(errs) == 0 {
		next := *z
		next.Records = records
		if err := next.Validate(nil); err != nil {
			var ve *pools.ValidationError
			if !errors.As(err, &ve) {
				return nil, nil, err
			}
			for _, fe := range ve.Errors {
				if i, rest, ok := recordIndex(fe.Path); ok && lines[i] > 0 {
					bad(lines[i], "%s%s", rest, fe.Message)
				} else {
					errs = append(errs, fe)
				}
			}
		}
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b pools.FieldError) int { return lineOf(a.Path) - lineOf(b.Path) })
		return nil, nil, &pools.ValidationError{Errors: errs}
	}

	if f.SOA != nil {
		d.SOA = soaDifferences(z, f.SOA)
	}
	if len(f.NS) > 0 {
		var file []string
		for _, e := range f.NS {
			file = append(file, e.Record.Content)
		}
		var have []string
		for _, ns := range z.Nameservers {
			have = append(have, pools.CanonicalName(ns))
		}
		fs, hs := slices.Clone(file), slices.Clone(have)
		slices.Sort(fs)
		slices.Sort(hs)
		if !slices.Equal(fs, hs) {
			d.Nameservers = &NameserversDifference{Zone: have, File: file}
		}
	}
	return records, d, nil
}

// Import parses a master file and plans it into z: the errors of both
// together, by line (a *pools.ValidationError), or the new records and
// the diff.
func Import(r io.Reader, z *pools.Zone, mode Mode, lbs map[string]string) ([]pools.Record, *Diff, error) {
	f, perr := Parse(r, z.Name, z.TTL)
	return PlanRead(z, f, perr, mode, lbs)
}

// PlanRead is Plan after a read (Parse or Pull) whose error perr may
// list records it could not keep: the errors of both together, by line.
func PlanRead(z *pools.Zone, f *File, perr error, mode Mode, lbs map[string]string) ([]pools.Record, *Diff, error) {
	records, d, err := Plan(z, f, mode, lbs)
	if perr == nil {
		return records, d, err
	}
	var pe, ve *pools.ValidationError
	errors.As(perr, &pe)
	if err != nil && !errors.As(err, &ve) {
		return nil, nil, err
	}
	all := pe.Errors
	if ve != nil {
		all = append(all, ve.Errors...)
	}
	slices.SortStableFunc(all, func(a, b pools.FieldError) int { return lineOf(a.Path) - lineOf(b.Path) })
	all = slices.CompactFunc(all, func(a, b pools.FieldError) bool { return a == b })
	return nil, nil, &pools.ValidationError{Errors: all[:min(len(all), MaxErrors)]}
}

var recordPath = regexp.MustCompile(`^records\[(\d+)\]\.?(.*)$`)

// recordIndex reads "records[3].content" as 3 and "content: ".
func recordIndex(path string) (int, string, bool) {
	m := recordPath.FindStringSubmatch(path)
	if m == nil {
		return 0, "", false
	}
	i, _ := strconv.Atoi(m[1])
	rest := ""
	if m[2] != "" {
		rest = m[2] + ": "
	}
	return i, rest, true
}

func lineOf(path string) int {
	_, num, _ := strings.Cut(path, " ")
	n, err := strconv.Atoi(num)
	if err != nil {
		return 1 << 30
	}
	return n
}

// soaDifferences compares the file's SOA with the zone's as glb serves
// it (the defaults of an unset mname and rname filled in).
func soaDifferences(z *pools.Zone, f *SOA) []FieldDifference {
	out := []FieldDifference{}
	mname, rname := SOANames(z)
	cmp := func(field, zone, file string) {
		if zone != file {
			out = append(out, FieldDifference{Field: field, Zone: zone, File: file})
		}
	}
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	cmp("mname", mname, f.MName)
	cmp("rname", rname, f.RName)
	cmp("serial", u(z.Serial), u(f.Serial))
	cmp("refresh", u(z.SOA.Refresh), u(f.Refresh))
	cmp("retry", u(z.SOA.Retry), u(f.Retry))
	cmp("expire", u(z.SOA.Expire), u(f.Expire))
	cmp("minimum", u(z.SOA.Minimum), u(f.Minimum))
	return out
}

// SOANames are the MNAME and RNAME glb serves for z (canonical, no
// trailing dot), as the DNS server compiles them.
func SOANames(z *pools.Zone) (mname, rname string) {
	apex := pools.CanonicalName(z.Name)
	switch {
	case z.SOA.MName != "":
		mname = pools.CanonicalName(z.SOA.MName)
	case len(z.Nameservers) > 0:
		mname = pools.CanonicalName(z.Nameservers[0])
	default:
		mname = apex
	}
	rname = "hostmaster." + apex
	if z.SOA.RName != "" {
		rname = pools.CanonicalName(strings.Replace(z.SOA.RName, "@", ".", 1))
	}
	return mname, rname
}

// key is a record's identity: owner, type and rdata as the DNS library
// presents it, so that "10 mail.example.com" and "10 mail.example.com."
// are one record.
func key(r pools.Record) string {
	return pools.CanonicalName(r.Name) + " " + strings.ToUpper(r.Type) + " " + canonicalContent(r)
}

// canonicalContent is a record's rdata in one spelling: presentation
// format as the DNS library writes it (names fully qualified, lower
// case), or the generic form's lower-case hex.
func canonicalContent(r pools.Record) string {
	if rd, msg, ok := pools.GenericRData(r.Content); ok && msg == "" {
		if _, known := pools.RRTypeCode(r.Type); known {
			// A generic record of a type the library presents is the
			// same record as its presentation.
			p, err := dns.NewRR(fmt.Sprintf(`. 0 IN %s \# %d %x`, strings.ToUpper(r.Type), len(rd), rd))
			if err == nil && p != nil {
				if _, still := p.(*dns.RFC3597); !still {
					return RData(p)
				}
			}
		}
		return fmt.Sprintf(`\# %d %x`, len(rd), rd)
	}
	rr, err := dns.NewRR(". 0 IN " + strings.ToUpper(r.Type) + " " + r.Content)
	if err != nil || rr == nil {
		return r.Content
	}
	return RData(rr)
}
