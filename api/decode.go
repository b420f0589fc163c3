package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/glb-dns/glb/pools"
)

// MaxBodyBytes bounds a request body: the largest legitimate object (a
// pool of 64 origins, a zone with its records) is far smaller.
const MaxBodyBytes = 1 << 20

// readJSON reads the body (at most MaxBodyBytes) and parses it into a
// generic value, rejecting syntax errors, trailing data and non-objects.
// Numbers stay json.Number so that re-encoding loses no precision.
func readJSON(w http.ResponseWriter, r *http.Request, mergePatch bool) (map[string]any, error) {
	if err := checkContentType(r, mergePatch); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, badRequest("reading the request body: " + err.Error())
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest("the request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, syntaxProblem(int64(len(body)), "unexpected end of JSON input")
		}
		return nil, err
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		// The byte at fault is the first one of the trailing data.
		rest := body[end:]
		end += int64(len(rest) - len(bytes.TrimLeft(rest, " \t\r\n")))
		return nil, syntaxProblem(end, "data after the JSON object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, badRequest("the request body must be a JSON object")
	}
	return obj, nil
}

// syntaxProblem reports malformed JSON. offset has one meaning for every
// cause: the 0-based offset of the first byte at fault (the body's length
// when it ends too early).
func syntaxProblem(offset int64, msg string) *Problem {
	return &Problem{
		Type: problemInvalidJSON, Title: "Malformed JSON", Status: http.StatusBadRequest,
		Detail: fmt.Sprintf("at byte offset %d: %s", offset, msg), Offset: &offset,
	}
}

// checkContentType accepts JSON media types (and, for PATCH, RFC 7396's
// application/merge-patch+json). A request without any Content-Type is
// read as JSON, as documented: a body sent with no header at all can
// only be meant as the API's one format. A form body (what curl -d sends
// without -H) is refused, since it is almost always a forgotten header
// rather than an intent.
func checkContentType(r *http.Request, mergePatch bool) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || mergePatch && mt == "application/merge-patch+json") {
		return nil
	}
	want := "application/json"
	if mergePatch {
		want = "application/merge-patch+json or application/json"
	}
	return newProblem(http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q; want %s", ct, want))
}

// decodeObject turns a parsed JSON object into a fresh object of kind k
// with its defaults, reporting every unknown field and wrongly typed value
// with its full path (pools.Decode).
func decodeObject(k pools.Kind, doc map[string]any) (pools.Object, error) {
	o, fes, err := pools.Decode(k, doc)
	if err != nil {
		return nil, err
	}
	if len(fes) > 0 {
		return nil, badRequest(fmt.Sprintf("%d field(s) at fault; nothing was stored", len(fes)), fes...)
	}
	return o, nil
}
