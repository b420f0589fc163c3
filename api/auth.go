package api

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// auth requires "Authorization: Bearer <Token>" when a token is set. The
// comparison is constant-time so that response timing does not reveal how
// much of a guessed token was right.
func (s *server) auth(next http.Handler) http.Handler {
	if s.Token == "" {
		return next
	}
	want := []byte(s.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		scheme, token, ok := strings.Cut(h, " ")
		switch {
		case h == "":
			w.Header().Set("WWW-Authenticate", `Bearer realm="glb"`)
			writeProblem(w, newProblem(http.StatusUnauthorized, "an Authorization: Bearer token is required"))
		case !ok || !strings.EqualFold(scheme, "Bearer") ||
			subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), want) != 1:
			w.Header().Set("WWW-Authenticate", `Bearer realm="glb", error="invalid_token"`)
			writeProblem(w, newProblem(http.StatusUnauthorized, "the bearer token is not valid"))
		default:
			next.ServeHTTP(w, r)
		}
	})
}
