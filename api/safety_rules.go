package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/glb-dns/glb/pools"
)

// safetyRules answers GET /safety/rules: the global safety rules, with
// their revision as the ETag a PUT's If-Match names.
func (s *server) safetyRules(w http.ResponseWriter, r *http.Request) {
	rules, err := s.Store.SafetyRules(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeSafetyRules(w, rules)
}

// putSafetyRules answers PUT /safety/rules (admin): the whole set
// replaces the stored one. revision and modified_on may be sent back as
// read; the store sets them.
func (s *server) putSafetyRules(w http.ResponseWriter, r *http.Request) {
	want, err := safetyRulesIfMatch(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var rules pools.SafetyRules
	if err := readInto(w, r, &rules); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.Store.PutSafetyRules(r.Context(), rules, want)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.Info("global safety rules changed", "revision", out.Revision, "by", callerOf(r.Context()))
	writeSafetyRules(w, out)
}

func writeSafetyRules(w http.ResponseWriter, rules pools.SafetyRules) {
	w.Header().Set("ETag", `"`+strconv.FormatInt(rules.Revision, 10)+`"`)
	writeJSON(w, http.StatusOK, item{Result: rules})
}

// safetyRulesIfMatch is ifMatch, except that "0" names rules never
// written (their ETag) and no If-Match at all is -1: write whatever is
// stored.
func safetyRulesIfMatch(r *http.Request) (int64, error) {
	v := strings.TrimSpace(r.Header.Get("If-Match"))
	switch v {
	case "", "*":
		return -1, nil
	case `"0"`:
		return 0, nil
	}
	return ifMatch(r)
}
