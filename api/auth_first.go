package api

import (
	"net/http"
	"strings"
)

// authAPI authenticates every request under Prefix before it is routed:
// an unknown path or a wrong method answers 401 like any other, so that
// a client without a token cannot tell which routes exist. The decoded
// path decides: the router may route on the raw one, but a raw path under
// the prefix decodes to one under it too (the prefix has no escapes).
func (s *server) authAPI(next http.Handler) http.Handler {
	authed := s.auth(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if underPrefix(r.URL.Path) {
			authed.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func underPrefix(p string) bool {
	return p == Prefix || strings.HasPrefix(p, Prefix+"/")
}
