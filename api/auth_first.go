package api

import (
	"net/http"
	"strings"
)

// authAPI authenticates every request under Prefix before it is routed:
// an unknown path or a wrong method answers 401 like any other, so that
// a client without a token cannot tell which routes exist. The raw
// (escaped) path counts too, since the router may route on it.
func (s *server) authAPI(next http.Handler) http.Handler {
	authed := s.auth(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if underPrefix(r.URL.Path) || underPrefix(r.URL.RawPath) {
			authed.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func underPrefix(p string) bool {
	return p == Prefix || strings.HasPrefix(p, Prefix+"/")
}
