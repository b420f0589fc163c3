package pools

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// HTTPSRecord is a load balancer's optional HTTPS record (RFC 9460): a
// query of type HTTPS for the load balancer's name is answered with one
// record, priority 1, target ".", these parameters, and as ipv4hint and
// ipv6hint the origins steering chose for that client, so that a browser
// that asks for HTTPS, A and AAAA at once gets the same answer twice.
type HTTPSRecord struct {
	// ALPN lists the protocol ids the origins speak ("h2", "h3").
	ALPN []string `json:"alpn,omitempty"`
	// NoDefaultALPN: the origins do not speak http/1.1 (needs ALPN).
	NoDefaultALPN bool `json:"no_default_alpn,omitempty"`
	// Port the origins serve on when not 443; 0 sends no port parameter.
	Port int `json:"port,omitempty"`
	// ECH is an ECHConfigList in base64 (RFC 9849).
	ECH string `json:"ech,omitempty"`
}

// Bounds of an HTTPS record's parameters, so that the record with 64
// hints of each family still fits a TCP message comfortably.
const (
	MaxHTTPSALPN   = 16
	MaxHTTPSECHLen = 4096 // decoded bytes
)

// checkHTTPS validates a load balancer's https object.
func checkHTTPS(e *errs, h *HTTPSRecord) {
	if h == nil {
		return
	}
	if len(h.ALPN) > MaxHTTPSALPN {
		e.add("https.alpn", "at most %d protocol ids", MaxHTTPSALPN)
	}
	seen := map[string]bool{}
	for i, a := range h.ALPN {
		path := fmt.Sprintf("https.alpn[%d]", i)
		switch {
		case a == "" || len(a) > 255:
			e.add(path, "a protocol id is 1 to 255 bytes (h2, h3, http/1.1)")
		case strings.ContainsAny(a, ",\\\" ") || strings.IndexFunc(a, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0:
			// Printable ASCII without the characters presentation format
			// escapes: every registered ALPN id is such.
			e.add(path, "%q: a protocol id is printable ASCII without commas, quotes, backslashes or spaces", a)
		case seen[a]:
			e.add(path, "%q listed twice", a)
		}
		seen[a] = true
	}
	if h.NoDefaultALPN && len(h.ALPN) == 0 {
		// RFC 9460 §7.1.1: no-default-alpn without alpn leaves no protocol.
		e.add("https.no_default_alpn", "needs alpn: without http/1.1 and without alpn no protocol is left")
	}
	if h.Port < 0 || h.Port > 65535 {
		e.add("https.port", "must be in [1, 65535] (0 or absent: no port parameter, clients use 443)")
	}
	if h.ECH != "" {
		b, err := base64.StdEncoding.DecodeString(h.ECH)
		switch {
		case err != nil:
			e.add("https.ech", "not standard base64")
		case len(b) > MaxHTTPSECHLen:
			e.add("https.ech", "at most %d bytes", MaxHTTPSECHLen)
		}
	}
}
