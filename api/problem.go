package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/glb-dns/glb/pools"
)

// Problem type URIs (RFC 9457 §3.1.1). Statuses that need no more
// explanation than their code use about:blank.
const (
	problemValidation  = "urn:glb:problem:validation"
	problemInvalidJSON = "urn:glb:problem:invalid-json"
	problemConflict    = "urn:glb:problem:conflict"
	problemStale       = "urn:glb:problem:stale-revision"
	problemTooLarge    = "urn:glb:problem:body-too-large"
	problemState       = "urn:glb:problem:state"
	problemBlank       = "about:blank"
)

const problemContentType = "application/problem+json"

// Problem is an RFC 9457 problem detail with glb's extension members.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Errors names every bad field of a 400.
	Errors []pools.FieldError `json:"errors,omitempty"`
	// Referrers lists who still refers to an object that cannot be deleted.
	Referrers []pools.Referrer `json:"referrers,omitempty"`
	// Offset is the 0-based offset of the first byte at fault in a
	// malformed JSON body (its length when it ends too early).
	Offset *int64 `json:"offset,omitempty"`
	// MissingScope names the scope a token lacks (403).
	MissingScope string `json:"missing_scope,omitempty"`
	// Safety lists the safety rules a refused shift would break, and the
	// load balancers each protects (409).
	Safety []pools.ShiftHarm `json:"safety,omitempty"`
}

// Error lets handlers return a *Problem they built themselves.
func (p *Problem) Error() string { return p.Title + ": " + p.Detail }

func newProblem(status int, detail string) *Problem {
	return &Problem{Type: problemBlank, Title: http.StatusText(status), Status: status, Detail: detail}
}

// badRequest reports field errors (query parameters or body fields).
func badRequest(detail string, fes ...pools.FieldError) *Problem {
	return &Problem{Type: problemValidation, Title: "Invalid request", Status: http.StatusBadRequest, Detail: detail, Errors: fes}
}

// problemFor is the one mapping from errors to HTTP: every handler ends in
// it, so a status means the same thing on every route.
func problemFor(err error) *Problem {
	var (
		p   *Problem
		ve  *pools.ValidationError
		ce  *pools.ConflictError
		sfe *pools.SafetyError
		ste *pools.StateError
		se  *json.SyntaxError
		mbe *http.MaxBytesError
	)
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &ve):
		return &Problem{
			Type: problemValidation, Title: "Invalid request", Status: http.StatusBadRequest,
			Detail: fmt.Sprintf("%d field(s) at fault; nothing was stored", len(ve.Errors)),
			Errors: ve.Errors,
		}
	case errors.As(err, &ce):
		return &Problem{
			Type: problemConflict, Title: "Object is referenced", Status: http.StatusConflict,
			Detail: ce.Error(), Referrers: ce.Referrers,
		}
	case errors.As(err, &sfe):
		return safetyProblem(sfe)
	case errors.As(err, &ste):
		return &Problem{Type: problemState, Title: "Not allowed in this state", Status: http.StatusConflict, Detail: ste.Message}
	case errors.Is(err, pools.ErrNotFound):
		return newProblem(http.StatusNotFound, err.Error())
	case errors.Is(err, pools.ErrStale):
		p := newProblem(http.StatusPreconditionFailed, "If-Match does not name the stored revision; GET the object again")
		p.Type = problemStale
		return p
	case errors.Is(err, pools.ErrUnavailable):
		return newProblem(http.StatusServiceUnavailable, "the configuration store cannot be reached")
	case errors.As(err, &se):
		// encoding/json counts the bytes read, the bad one included.
		return syntaxProblem(se.Offset-1, se.Error())
	case errors.As(err, &mbe):
		p := newProblem(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body exceeds %d bytes", mbe.Limit))
		p.Type = problemTooLarge
		return p
	}
	return nil
}

// writeError answers err as problem+json. Errors that map to no known
// status are logged and answered 500 without their text, which may carry
// internal details (SQL, file paths).
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	p := problemFor(err)
	if p == nil {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		p = newProblem(http.StatusInternalServerError, "internal error; see the server log")
	} else if p.Status >= 500 {
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", p.Status, "err", err)
	}
	writeProblem(w, p)
}

func writeProblem(w http.ResponseWriter, p *Problem) {
	w.Header().Set("Content-Type", problemContentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// writeJSON writes v as a JSON response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
