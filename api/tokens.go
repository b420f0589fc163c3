package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// tokenRequest is the body of POST /tokens.
type tokenRequest struct {
	Name      string        `json:"name"`
	Scopes    []pools.Scope `json:"scopes"`
	ExpiresOn *time.Time    `json:"expires_on"`
	Zones     []string      `json:"zones"`
}

// NewToken is the answer to POST /tokens: the token and, this once, its
// secret.
type NewToken struct {
	pools.Token
	Secret string `json:"secret"`
}

func (s *server) createToken(w http.ResponseWriter, r *http.Request) {
	var req tokenRequest
	if err := readInto(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	var fes []pools.FieldError
	for i, z := range req.Zones {
		if z == "" {
			continue // Validate names it
		}
		if _, err := s.Store.Get(r.Context(), pools.KindZone, z); errors.Is(err, pools.ErrNotFound) {
			fes = append(fes, pools.FieldError{Path: fmt.Sprintf("zones[%d]", i), Message: fmt.Sprintf("no zone %q", z)})
		} else if err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if len(fes) > 0 {
		s.writeError(w, r, badRequest(fmt.Sprintf("%d field(s) at fault; nothing was stored", len(fes)), fes...))
		return
	}
	secret, hash := pools.NewTokenSecret()
	tok, err := s.Store.CreateToken(r.Context(), pools.Token{Name: req.Name, Scopes: req.Scopes, ExpiresOn: req.ExpiresOn, Zones: req.Zones, Hash: hash})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.Info("token created", "token", tok.Name, "scopes", tok.Scopes, "zones", tok.Zones, "by", callerOf(r.Context()))
	created(w, Prefix+"/tokens/"+tok.Name, NewToken{Token: tok, Secret: secret})
}

func (s *server) listTokens(w http.ResponseWriter, r *http.Request) {
	listWhole(s, w, r, s.Store.Tokens)
}

func (s *server) getToken(w http.ResponseWriter, r *http.Request) {
	getNamed(s, w, r, s.Store.Token, chi.URLParam(r, "name"))
}

// listWhole answers one page of a list the store returns whole: tokens
// and TSIG keys, a handful per installation.
func listWhole[T any](s *server, w http.ResponseWriter, r *http.Request, all func(context.Context) ([]T, error)) {
	page, err := parsePage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	items, err := all(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	offset, limit := page.Bounds()
	writeJSON(w, http.StatusOK, pageOf(items[min(offset, len(items)):min(offset+limit, len(items))], page, len(items)))
}

// getNamed answers the thing named name, as get finds it.
func getNamed[T any](s *server, w http.ResponseWriter, r *http.Request, get func(context.Context, string) (T, error), name string) {
	v, err := get(r.Context(), name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, item{Result: v})
}

// created answers 201 with v, made at location; the answer holds a secret
// shown this once, so no cache may keep it.
func created(w http.ResponseWriter, location string, v any) {
	w.Header().Set("Location", location)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, item{Result: v})
}

func (s *server) deleteToken(w http.ResponseWriter, r *http.Request) {
	revoke := func(ctx context.Context, name string) error {
		err := s.Store.DeleteToken(ctx, name)
		if err == nil {
			// Before the 204: whoever is told it is revoked finds it so.
			s.tokens.invalidate()
		}
		return err
	}
	s.deleteLogged(w, r, revoke, chi.URLParam(r, "name"), "token revoked", "token")
}

// deleteLogged answers a DELETE of the thing named name (by key in the
// log): del removes it, then the removal is logged as msg.
func (s *server) deleteLogged(w http.ResponseWriter, r *http.Request, del func(context.Context, string) error, name, msg, key string) {
	if err := del(r.Context(), name); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.Info(msg, key, name, "by", callerOf(r.Context()))
	w.WriteHeader(http.StatusNoContent)
}

// readInto reads the request's JSON object into v strictly, naming every
// unknown or mistyped field like the resources do.
func readInto(w http.ResponseWriter, r *http.Request, v any) error {
	doc, err := readJSON(w, r, false)
	if err != nil {
		return err
	}
	fes, err := pools.DecodeInto(doc, v)
	if err != nil {
		return err
	}
	if len(fes) > 0 {
		return badRequest(fmt.Sprintf("%d field(s) at fault; nothing was stored", len(fes)), fes...)
	}
	return nil
}

// pageList is the envelope of one page of anything.
type pageList[T any] struct {
	Result     []T        `json:"result"`
	ResultInfo resultInfo `json:"result_info"`
}

func pageOf[T any](items []T, page pools.Page, total int) pageList[T] {
	_, per := page.Bounds()
	if items == nil {
		items = []T{}
	}
	return pageList[T]{Result: items, ResultInfo: resultInfo{
		Page: max(page.Page, 1), PerPage: per, Count: len(items), TotalCount: total,
		TotalPages: (total + per - 1) / per,
	}}
}
