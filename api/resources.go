package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// item is the envelope of one object.
type item struct {
	Result any `json:"result"`
}

// list is the envelope of one page of objects.
type list struct {
	Result     []pools.Object `json:"result"`
	ResultInfo resultInfo     `json:"result_info"`
}

type resultInfo struct {
	Page       int `json:"page"`
	PerPage    int `json:"per_page"`
	Count      int `json:"count"`
	TotalCount int `json:"total_count"`
	TotalPages int `json:"total_pages"`
}

// patchAttempts bounds how often a PATCH without If-Match re-reads and
// re-applies itself when a concurrent write moved the revision between
// its read and its write.
const patchAttempts = 3

// resource serves one kind; every kind shares these handlers, so that a
// status code or header means the same on every collection.
type resource struct {
	s    *server
	kind pools.Kind
}

func (h resource) list(w http.ResponseWriter, r *http.Request) {
	page, err := parsePage(r)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	res, err := h.s.Store.List(r.Context(), h.kind, page)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	items := res.Items
	if items == nil {
		items = []pools.Object{}
	}
	writeJSON(w, http.StatusOK, list{Result: items, ResultInfo: resultInfo{
		Page: page.Page, PerPage: page.PerPage, Count: len(items), TotalCount: res.TotalCount,
		TotalPages: (res.TotalCount + page.PerPage - 1) / page.PerPage,
	}})
}

// parsePage reads ?page= and ?per_page=, reporting both when both are bad.
func parsePage(r *http.Request) (pools.Page, error) {
	p := pools.Page{Page: 1, PerPage: pools.DefaultPerPage}
	var fes []pools.FieldError
	q := r.URL.Query()
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fes = append(fes, pools.FieldError{Path: "page", Message: "must be a positive integer"})
		}
		p.Page = n
	}
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > pools.MaxPerPage {
			fes = append(fes, pools.FieldError{Path: "per_page", Message: fmt.Sprintf("must be an integer in [1, %d]", pools.MaxPerPage)})
		}
		p.PerPage = n
	}
	if len(fes) > 0 {
		return p, badRequest("bad query parameters", fes...)
	}
	return p, nil
}

func (h resource) get(w http.ResponseWriter, r *http.Request) {
	o, err := h.s.Store.Get(r.Context(), h.kind, chi.URLParam(r, "id"))
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	if notModified(r, etag(o)) {
		w.Header().Set("ETag", etag(o))
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeObject(w, http.StatusOK, o)
}

// decodeBody reads the request's object of h's kind, without what only
// the store may set, as POST and PUT take it.
func (h resource) decodeBody(w http.ResponseWriter, r *http.Request) (pools.Object, error) {
	doc, err := readJSON(w, r, false)
	if err != nil {
		return nil, err
	}
	o, err := decodeObject(h.kind, doc)
	if err != nil {
		return nil, err
	}
	clearReadOnly(o)
	return o, nil
}

func (h resource) create(w http.ResponseWriter, r *http.Request) {
	o, err := h.decodeBody(w, r)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	out, err := h.s.Store.Create(r.Context(), o)
	if err == nil {
		w.Header().Set("Location", Prefix+"/"+string(h.kind)+"/"+out.ObjectMeta().ID)
	}
	h.written(w, r, http.StatusCreated, out, err)
}

// written answers a write of one object, whichever verb made it: the
// store's error, or the object as stored once a zone that signs has its
// first key (ensureZoneKey).
func (h resource) written(w http.ResponseWriter, r *http.Request, status int, out pools.Object, err error) {
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	h.s.ensureZoneKey(r.Context(), out)
	writeObject(w, status, out)
}

func (h resource) replace(w http.ResponseWriter, r *http.Request) {
	out, err := h.put(w, r)
	h.written(w, r, http.StatusOK, out, err)
}

// put stores a PUT's body under the path's id, on the condition its
// If-Match names.
func (h resource) put(w http.ResponseWriter, r *http.Request) (pools.Object, error) {
	ifRev, err := ifMatch(r)
	if err != nil {
		return nil, err
	}
	o, err := h.decodeBody(w, r)
	if err != nil {
		return nil, err
	}
	if err := setID(o, chi.URLParam(r, "id")); err != nil {
		return nil, err
	}
	return h.s.Store.Replace(r.Context(), o, ifRev)
}

// patch applies an RFC 7396 merge patch to the stored object's JSON, then
// decodes and validates the result as a PUT would. Without If-Match the
// write is still conditional on the revision it patched, so a concurrent
// write is never silently overwritten: the patch is re-applied to the new
// object instead.
func (h resource) patch(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	ifRev, err := ifMatch(r)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	patch, err := readJSON(w, r, true)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	for attempt := 1; ; attempt++ {
		out, err := h.patchOnce(r, id, patch, ifRev)
		if errors.Is(err, pools.ErrStale) && ifRev == 0 && attempt < patchAttempts {
			continue
		}
		h.written(w, r, http.StatusOK, out, err)
		return
	}
}

func (h resource) patchOnce(r *http.Request, id string, patch map[string]any, ifRev int64) (pools.Object, error) {
	cur, err := h.s.Store.Get(r.Context(), h.kind, id)
	if err != nil {
		return nil, err
	}
	rev := cur.ObjectMeta().Revision
	if ifRev > 0 && ifRev != rev {
		return nil, pools.ErrStale
	}
	o, err := applyPatch(cur, patch)
	if err != nil {
		return nil, err
	}
	return h.s.Store.Replace(r.Context(), o, rev)
}

// applyPatch returns cur with a merge patch applied, decoded and checked
// for shape as a PUT body would be, ready to store (or to preview).
func applyPatch(cur pools.Object, patch map[string]any) (pools.Object, error) {
	doc, err := toDocument(cur)
	if err != nil {
		return nil, err
	}
	// The patch is applied to a fresh copy each time: mergePatch
	// mutates its target, never its patch.
	merged := mergePatch(doc, patch).(map[string]any)
	o, err := decodeObject(cur.Kind(), merged)
	if err != nil {
		return nil, err
	}
	if err := setID(o, cur.ObjectMeta().ID); err != nil {
		return nil, err
	}
	clearReadOnly(o)
	return o, nil
}

func (h resource) delete(w http.ResponseWriter, r *http.Request) {
	ifRev, err := ifMatch(r)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	if err := h.s.Store.Delete(r.Context(), h.kind, chi.URLParam(r, "id"), ifRev); err != nil {
		h.s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// toDocument renders an object as the generic JSON a merge patch applies to.
func toDocument(o pools.Object) (map[string]any, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", o.Kind(), err)
	}
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode %s: %w", o.Kind(), err)
	}
	return doc, nil
}

// setID makes the object's id the one in the path; a different id in the
// body is refused rather than ignored, since it most likely means the
// client sent the wrong object to the wrong URL.
func setID(o pools.Object, id string) error {
	m := o.ObjectMeta()
	if m.ID != "" && m.ID != id {
		return badRequest("the id in the body differs from the id in the path",
			pools.FieldError{Path: "id", Message: fmt.Sprintf("must be absent or %q", id)})
	}
	m.ID = id
	return nil
}

// clearReadOnly drops what only the store may set, so that an object read
// with GET can be sent back with PUT unchanged.
func clearReadOnly(o pools.Object) {
	m := o.ObjectMeta()
	m.Revision, m.CreatedOn, m.ModifiedOn = 0, time.Time{}, time.Time{}
	if z, ok := o.(*pools.Zone); ok {
		z.Serial = 0
	}
}

func etag(o pools.Object) string {
	return `"` + strconv.FormatInt(o.ObjectMeta().Revision, 10) + `"`
}

func writeObject(w http.ResponseWriter, status int, o pools.Object) {
	w.Header().Set("ETag", etag(o))
	writeJSON(w, status, item{Result: o})
}

// ifMatch reads If-Match as the revision the client last saw (0: none
// given, or "*"). A weak or non-numeric tag can never equal a revision, so
// it is stale at once; a list of tags is refused since the store compares
// one revision.
func ifMatch(r *http.Request) (int64, error) {
	v := strings.TrimSpace(r.Header.Get("If-Match"))
	switch {
	case v == "" || v == "*":
		return 0, nil
	case strings.Contains(v, ","):
		return 0, badRequest("If-Match: give one entity tag, the revision from the ETag")
	case strings.HasPrefix(v, "W/"):
		return 0, pools.ErrStale
	case len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"':
		return 0, badRequest(`If-Match: an entity tag is quoted, e.g. "7"`)
	}
	n, err := strconv.ParseInt(v[1:len(v)-1], 10, 64)
	if err != nil || n < 1 {
		return 0, pools.ErrStale
	}
	return n, nil
}
