package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// tsigRoutes adds the TSIG key routes (admin): the keys with which DNS
// UPDATE messages are signed.
func (s *server) tsigRoutes(r chi.Router) {
	r.Get(Prefix+"/tsig_keys", s.listTSIGKeys)
	r.Post(Prefix+"/tsig_keys", s.createTSIGKey)
	r.Get(Prefix+"/tsig_keys/{name}", s.getTSIGKey)
	r.Delete(Prefix+"/tsig_keys/{name}", s.deleteTSIGKey)
}

// tsigKeyRequest is the body of POST /tsig_keys.
type tsigKeyRequest struct {
	Name      string            `json:"name"`
	Algorithm string            `json:"algorithm"`
	Grants    []pools.TSIGGrant `json:"grants"`
}

// NewTSIGKey is the answer to POST /tsig_keys: the key and, this once,
// its secret (base64, as nsupdate -y and BIND key files take it).
type NewTSIGKey struct {
	pools.TSIGKey
	Secret string `json:"secret"`
}

func (s *server) createTSIGKey(w http.ResponseWriter, r *http.Request) {
	doc, err := readJSON(w, r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	req := tsigKeyRequest{Algorithm: pools.TSIGHMACSHA256}
	if err := decodeInto(doc, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	secret := pools.NewTSIGSecret(req.Algorithm)
	k, err := s.Store.CreateTSIGKey(r.Context(), pools.TSIGKey{Name: req.Name, Algorithm: req.Algorithm, Grants: req.Grants, Secret: secret})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.Info("TSIG key created", "key", k.Name, "by", callerOf(r.Context()))
	w.Header().Set("Location", Prefix+"/tsig_keys/"+k.Name)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, item{Result: NewTSIGKey{TSIGKey: k, Secret: secret}})
}

func (s *server) listTSIGKeys(w http.ResponseWriter, r *http.Request) {
	page, err := parsePage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	all, err := s.Store.TSIGKeys(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	offset, limit := page.Bounds()
	items := all[min(offset, len(all)):min(offset+limit, len(all))]
	writeJSON(w, http.StatusOK, pageOf(items, page, len(all)))
}

func (s *server) getTSIGKey(w http.ResponseWriter, r *http.Request) {
	k, err := s.Store.TSIGKey(r.Context(), pools.CanonicalName(chi.URLParam(r, "name")))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, item{Result: k})
}

func (s *server) deleteTSIGKey(w http.ResponseWriter, r *http.Request) {
	name := pools.CanonicalName(chi.URLParam(r, "name"))
	if err := s.Store.DeleteTSIGKey(r.Context(), name); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.Info("TSIG key deleted", "key", name, "by", callerOf(r.Context()))
	w.WriteHeader(http.StatusNoContent)
}
