package pools

import (
	"encoding/base64"
	"encoding/hex"
	"net/netip"
	"strconv"
	"strings"
)

// Static records of any type. The types glb checks field by field are kept
// in presentation format; every other type is kept in the generic form of
// RFC 3597 §5 ("\# length hex"), which the DNS server copies to the wire
// without interpreting it. A zone file import presents what it can and
// writes the rest in generic form, so nothing a master file holds is lost.
// As everywhere in this package, validation must refuse whatever the DNS
// server's compile would (dnsserver parses presentation format with
// miekg/dns; a test there holds the two together).

// rrTypes are the type mnemonics and codes of the IANA registry as
// miekg/dns spells them, less the meta and question types.
var rrTypes = map[string]uint16{
	"A": 1, "NS": 2, "MD": 3, "MF": 4, "CNAME": 5, "SOA": 6, "MB": 7, "MG": 8, "MR": 9, "NULL": 10,
	"PTR": 12, "HINFO": 13, "MINFO": 14, "MX": 15, "TXT": 16, "RP": 17, "AFSDB": 18, "X25": 19,
	"ISDN": 20, "RT": 21, "NSAP-PTR": 23, "SIG": 24, "KEY": 25, "PX": 26, "GPOS": 27, "AAAA": 28,
	"LOC": 29, "NXT": 30, "EID": 31, "NIMLOC": 32, "SRV": 33, "ATMA": 34, "NAPTR": 35, "KX": 36,
	"CERT": 37, "DNAME": 39, "APL": 42, "DS": 43, "SSHFP": 44, "IPSECKEY": 45, "RRSIG": 46,
	"NSEC": 47, "DNSKEY": 48, "DHCID": 49, "NSEC3": 50, "NSEC3PARAM": 51, "TLSA": 52, "SMIMEA": 53,
	"HIP": 55, "NINFO": 56, "RKEY": 57, "TALINK": 58, "CDS": 59, "CDNSKEY": 60, "OPENPGPKEY": 61,
	"CSYNC": 62, "ZONEMD": 63, "SVCB": 64, "HTTPS": 65, "SPF": 99, "UINFO": 100, "UID": 101,
	"GID": 102, "UNSPEC": 103, "NID": 104, "L32": 105, "L64": 106, "LP": 107, "EUI48": 108,
	"EUI64": 109, "URI": 256, "CAA": 257, "AVC": 258, "AMTRELAY": 260, "RESINFO": 261, "TA": 32768,
	"DLV": 32769,
}

// RRTypes returns a copy of the type table (mnemonic → code) records may
// use, for the test that holds it to the DNS library's.
func RRTypes() map[string]uint16 {
	out := make(map[string]uint16, len(rrTypes))
	for k, v := range rrTypes {
		out[k] = v
	}
	return out
}

// RRTypeCode returns the code of a type written as a mnemonic or as
// TYPEnnn (RFC 3597 §5), in either case; ok is false for anything else and
// for the meta types (OPT, TSIG, AXFR, ANY, …), which are no records.
func RRTypeCode(typ string) (uint16, bool) {
	typ = strings.ToUpper(typ)
	if c, ok := rrTypes[typ]; ok {
		return c, true
	}
	if n, ok := strings.CutPrefix(typ, "TYPE"); ok {
		c, err := strconv.ParseUint(n, 10, 16)
		if err != nil || c == 0 || c == 41 || c >= 128 && c <= 255 {
			// 0 is reserved, 41 is OPT, 128–255 are the meta and
			// question types (RFC 6895 §3.1).
			return 0, false
		}
		return uint16(c), true
	}
	return 0, false
}

// GenericRData decodes content in RFC 3597 generic form ("\# length hex");
// ok is false when content is not in that form. A malformed one returns a
// message.
func GenericRData(content string) (rdata []byte, msg string, ok bool) {
	f := strings.Fields(content)
	if len(f) == 0 || f[0] != `\#` {
		return nil, "", false
	}
	if len(f) < 2 {
		return nil, `generic form wants "\# length hex"`, true
	}
	n, err := strconv.ParseUint(f[1], 10, 16)
	if err != nil {
		return nil, "generic form: length is not a number in [0, 65535]", true
	}
	rd, err := hex.DecodeString(strings.Join(f[2:], ""))
	if err != nil {
		return nil, "generic form: data is not hexadecimal", true
	}
	if uint64(len(rd)) != n {
		return nil, "generic form: length " + f[1] + " but " + strconv.Itoa(len(rd)) + " bytes of data", true
	}
	return rd, "", true
}

// presented are the types kept in presentation format, by the check of
// their content; the types of checkRecordContent's switch are presented
// too. A type not here is kept in generic form.
var presented = map[string]func([]string) string{
	"PTR":        fieldsCheck(fName),
	"DNAME":      fieldsCheck(fName),
	"HINFO":      fieldsCheck(fString, fString),
	"RP":         fieldsCheck(fName, fName),
	"AFSDB":      fieldsCheck(fU16, fName),
	"KX":         fieldsCheck(fU16, fName),
	"RT":         fieldsCheck(fU16, fName),
	"LP":         fieldsCheck(fU16, fName),
	"L32":        fieldsCheck(fU16, fIPv4),
	"NID":        fieldsCheck(fU16, fLocator64),
	"L64":        fieldsCheck(fU16, fLocator64),
	"NAPTR":      fieldsCheck(fU16, fU16, fQuoted, fQuoted, fQuoted, fNameOrRoot),
	"URI":        fieldsCheck(fU16, fU16, fQuoted),
	"TLSA":       fieldsCheck(fU8, fU8, fU8, fHexRest),
	"SMIMEA":     fieldsCheck(fU8, fU8, fU8, fHexRest),
	"SSHFP":      fieldsCheck(fU8, fU8, fHexRest),
	"ZONEMD":     fieldsCheck(fU32, fU8, fU8, fHexRest),
	"DNSKEY":     fieldsCheck(fU16, fU8, fU8, fBase64Rest),
	"CDNSKEY":    fieldsCheck(fU16, fU8, fU8, fBase64Rest),
	"OPENPGPKEY": fieldsCheck(fBase64Rest),
	"DHCID":      fieldsCheck(fBase64Rest),
	"EUI48":      fieldsCheck(fEUI(6)),
	"EUI64":      fieldsCheck(fEUI(8)),
	"SPF":        checkStrings,
	"CDS":        func(f []string) string { return checkDS(strings.Join(f, " ")) },
}

// notKept are the types a zone of glb cannot hold: its SOA is the zone's
// soa field, and a signed zone is signed online (a master file's
// signatures and denial records would be stale at once).
var notKept = map[string]string{
	"SOA":        "the SOA comes from the zone's soa field",
	"RRSIG":      "glb signs zones online; a file's signatures are not kept",
	"SIG":        "glb signs zones online; a file's signatures are not kept",
	"NSEC":       "glb signs zones online and denies existence itself",
	"NSEC3":      "glb signs zones online and denies existence itself",
	"NSEC3PARAM": "glb signs zones online and denies existence itself",
	"NXT":        "glb signs zones online and denies existence itself",
}

// TypeKept reports how a record of type typ is kept: presentation is true
// when glb checks and keeps its presentation format, false when it keeps
// the generic form; msg says why a type cannot be kept at all.
func TypeKept(typ string) (presentation bool, msg string) {
	typ = strings.ToUpper(typ)
	if m, ok := notKept[typ]; ok {
		return false, m
	}
	switch typ {
	case "A", "AAAA", "CNAME", "TXT", "MX", "CAA", "NS", "DS", "SRV", "SVCB", "HTTPS":
		return true, ""
	}
	if _, ok := presented[typ]; ok {
		return true, ""
	}
	if _, ok := RRTypeCode(typ); !ok {
		return false, "unknown record type " + strconv.Quote(typ)
	}
	return false, ""
}

// checkAnyContent checks a record of a type outside the switch of
// checkRecordContent.
func checkAnyContent(typ, content string) string {
	typ = strings.ToUpper(typ)
	if m, ok := notKept[typ]; ok {
		return m
	}
	if _, ok := RRTypeCode(typ); !ok {
		return errUnknownType
	}
	if _, msg, ok := GenericRData(content); ok {
		return msg
	}
	check, ok := presented[typ]
	if !ok {
		return typ + ` is kept in the generic form of RFC 3597: "\# length hex"`
	}
	f, msg := splitPresentation(content)
	if msg != "" {
		return msg
	}
	return check(f)
}

// splitPresentation splits rdata at blanks outside quotes, keeping the
// quotes; it refuses an unterminated quote.
func splitPresentation(s string) ([]string, string) {
	var out []string
	i := 0
	for i < len(s) {
		c := s[i]
		if c == ' ' || c == '\t' {
			i++
			continue
		}
		j := i
		if c == '"' {
			j++
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, "unterminated quoted string"
			}
			j++
		} else {
			for j < len(s) && s[j] != ' ' && s[j] != '\t' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(s))
		}
		out = append(out, s[i:j])
		i = j
	}
	return out, ""
}

// field checks one field; rest checks take every remaining field.
type field struct {
	check func(string) string
	rest  bool
}

var (
	fName       = field{check: func(s string) string { return prefixed("name ", checkHostname(s, false)) }}
	fNameOrRoot = field{check: func(s string) string {
		if s == "." {
			return ""
		}
		return prefixed("name ", checkHostname(s, false))
	}}
	fU8        = field{check: uintCheck(8)}
	fU16       = field{check: uintCheck(16)}
	fU32       = field{check: uintCheck(32)}
	fString    = field{check: checkCharString}
	fQuoted    = field{check: checkQuoted}
	fIPv4      = field{check: checkIPv4}
	fLocator64 = field{check: checkLocator64}
	fHexRest   = field{rest: true, check: func(s string) string {
		if b, err := hex.DecodeString(s); err != nil || len(b) == 0 {
			return "not hexadecimal"
		}
		return ""
	}}
	fBase64Rest = field{rest: true, check: func(s string) string {
		if b, err := base64.StdEncoding.DecodeString(s); err != nil || len(b) == 0 {
			return "not base64"
		}
		return ""
	}}
)

func fEUI(n int) field {
	return field{check: func(s string) string {
		p := strings.Split(s, "-")
		if len(p) != n {
			return "want " + strconv.Itoa(n) + " hexadecimal pairs joined by -"
		}
		for _, x := range p {
			if _, err := hex.DecodeString(x); err != nil || len(x) != 2 {
				return "want " + strconv.Itoa(n) + " hexadecimal pairs joined by -"
			}
		}
		return ""
	}}
}

func prefixed(p, msg string) string {
	if msg == "" {
		return ""
	}
	return p + msg
}

func uintCheck(bits int) func(string) string {
	return func(s string) string {
		if _, err := strconv.ParseUint(s, 10, bits); err != nil {
			return strconv.Quote(s) + " is not a number in [0, " + strconv.FormatUint(1<<bits-1, 10) + "]"
		}
		return ""
	}
}

func checkIPv4(s string) string {
	if ip, err := netip.ParseAddr(s); err != nil || !ip.Is4() {
		return strconv.Quote(s) + " is not an IPv4 address"
	}
	return ""
}

// checkLocator64 checks an ILNP 64-bit locator or node id (RFC 6742):
// four groups of one to four hexadecimal digits joined by colons.
func checkLocator64(s string) string {
	p := strings.Split(s, ":")
	if len(p) != 4 {
		return strconv.Quote(s) + " is not four groups of hexadecimal digits joined by :"
	}
	for _, x := range p {
		if _, err := strconv.ParseUint(x, 16, 16); err != nil || len(x) > 4 {
			return strconv.Quote(s) + " is not four groups of hexadecimal digits joined by :"
		}
	}
	return ""
}

// stringLen is the length of a character-string written with RFC 1035
// escapes (\X and \DDD), without its quotes; ok is false on a broken
// escape.
func stringLen(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			if i+1 >= len(s) {
				return 0, false
			}
			if s[i+1] >= '0' && s[i+1] <= '9' {
				if i+3 >= len(s) {
					return 0, false
				}
				d, err := strconv.Atoi(s[i+1 : i+4])
				if err != nil || d > 255 {
					return 0, false
				}
				i += 3
			} else {
				i++
			}
		}
		n++
	}
	return n, true
}

// checkCharString checks one character-string, quoted or not.
func checkCharString(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	} else if strings.ContainsRune(s, '"') {
		return "a string has a stray quote"
	}
	n, ok := stringLen(s)
	if !ok {
		return "a string has a broken escape"
	}
	if n > 255 {
		return "a string is longer than 255 bytes"
	}
	return ""
}

func checkQuoted(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "want a quoted string"
	}
	return checkCharString(s)
}

// checkStrings checks one or more character-strings (TXT, SPF).
func checkStrings(f []string) string {
	if len(f) == 0 {
		return "must not be empty"
	}
	for _, s := range f {
		if msg := checkCharString(s); msg != "" {
			return msg
		}
	}
	return ""
}

// fieldsCheck checks fields against a list of field kinds.
func fieldsCheck(kinds ...field) func([]string) string {
	return func(f []string) string {
		for i, k := range kinds {
			if i >= len(f) {
				return "want " + strconv.Itoa(len(kinds)) + " fields, got " + strconv.Itoa(len(f))
			}
			if k.rest {
				return k.check(strings.Join(f[i:], ""))
			}
			if msg := k.check(f[i]); msg != "" {
				return msg
			}
		}
		if len(f) > len(kinds) {
			return "want " + strconv.Itoa(len(kinds)) + " fields, got " + strconv.Itoa(len(f))
		}
		return ""
	}
}
