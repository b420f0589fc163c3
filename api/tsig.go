package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// tsigRoutes adds the TSIG key routes (admin): the keys with which DNS
// UPDATE messages are signed.
func (s *server) tsigRoutes(r chi.Router) {
	collection{list: s.listTSIGKeys, create: s.createTSIGKey, get: s.getTSIGKey, delete: s.deleteTSIGKey}.mount(r, Prefix+"/tsig_keys", "name")
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
	req := tsigKeyRequest{Algorithm: pools.TSIGHMACSHA256}
	if err := readInto(w, r, &req); err != nil {
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
	created(w, Prefix+"/tsig_keys/"+k.Name, NewTSIGKey{TSIGKey: k, Secret: secret})
}

func (s *server) listTSIGKeys(w http.ResponseWriter, r *http.Request) {
	listWhole(s, w, r, s.Store.TSIGKeys)
}

func (s *server) getTSIGKey(w http.ResponseWriter, r *http.Request) {
	getNamed(s, w, r, s.Store.TSIGKey, pools.CanonicalName(chi.URLParam(r, "name")))
}

func (s *server) deleteTSIGKey(w http.ResponseWriter, r *http.Request) {
	s.deleteLogged(w, r, s.Store.DeleteTSIGKey, pools.CanonicalName(chi.URLParam(r, "name")), "TSIG key deleted", "key")
}
