package api

import (
	"net/http"
	"strings"
)

// notModified evaluates If-None-Match for a GET or HEAD by RFC 9110
// §13.1.2: true when the header is "*" (the object exists) or when any
// entity tag it lists matches current by weak comparison, which ignores
// the W/ prefix on either side. Header lines sent more than once count as
// one list; a malformed list matches nothing, so the client gets the
// object rather than a 304 it cannot interpret.
func notModified(r *http.Request, current string) bool {
	v := strings.TrimSpace(strings.Join(r.Header.Values("If-None-Match"), ","))
	if v == "" {
		return false
	}
	if v == "*" {
		return true
	}
	want := strings.TrimPrefix(current, "W/")
	for v != "" {
		tag, rest, ok := nextETag(v)
		if !ok {
			return false
		}
		if strings.TrimPrefix(tag, "W/") == want {
			return true
		}
		v = rest
	}
	return false
}

// nextETag splits the first entity tag (RFC 9110 §8.8.3: an optional W/
// and a quoted string without DQUOTE inside) off a comma-separated list.
// A comma may sit inside the quotes, so the list is scanned, not split.
func nextETag(v string) (tag, rest string, ok bool) {
	v = strings.TrimLeft(v, " \t,")
	start := 0
	if strings.HasPrefix(v, "W/") {
		start = 2
	}
	if len(v) < start+2 || v[start] != '"' {
		return "", "", false
	}
	end := strings.IndexByte(v[start+1:], '"')
	if end < 0 {
		return "", "", false
	}
	end += start + 2
	rest = strings.TrimLeft(v[end:], " \t")
	if rest != "" && rest[0] != ',' {
		return "", "", false
	}
	return v[:end], strings.TrimLeft(rest, " \t,"), true
}
