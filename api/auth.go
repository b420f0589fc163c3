package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/glb-dns/glb/pools"
)

// Problem type of a token that lacks a scope.
const problemForbidden = "urn:glb:problem:missing-scope"

// requiredScope is what a request needs: managing tokens and TSIG keys needs admin,
// anything about notification subscriptions (reading them and their
// deliveries too) integrations, reading anything else read, feeding
// health in feed, every other method write. It looks only at the method and the path, so that it
// holds before routing too. What a body asks for can need more (a rollout
// with a guard: integrations), checked by its handler.
func requiredScope(r *http.Request) pools.Scope {
	p := r.URL.Path
	if p == Prefix+"/tokens" || strings.HasPrefix(p, Prefix+"/tokens/") {
		return pools.ScopeAdmin
	}
	if p == Prefix+"/notifications" || strings.HasPrefix(p, Prefix+"/notifications/") {
		// A subscription makes every node send requests to its URL, and
		// its deliveries tell what answered there.
		return pools.ScopeIntegrations
	}
	if p == Prefix+"/tsig_keys" || strings.HasPrefix(p, Prefix+"/tsig_keys/") {
		// A TSIG key is a credential that writes DNS, like a token.
		return pools.ScopeAdmin
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return pools.ScopeRead
	}
	if p == Prefix+"/safety/rules" {
		// The global rules guard every load balancer: who may loosen
		// them may as well override them.
		return pools.ScopeAdmin
	}
	if isNodeDrain(p) {
		// Taking a node out of service is an operator's act on the
		// fleet, not on the configuration.
		return pools.ScopeAdmin
	}
	if isFeed(p) {
		// Health and load fed in: what a monitoring system's token may
		// do, and nothing more; write includes it.
		return pools.ScopeFeed
	}
	if r.Method == http.MethodPost && isPreview(p) {
		// A preview stores nothing: whoever may read may ask "what if".
		return pools.ScopeRead
	}
	return pools.ScopeWrite
}

// isPreview reports whether p is /load_balancers/{id}/preview.
func isPreview(p string) bool {
	rest, ok := strings.CutPrefix(p, Prefix+"/load_balancers/")
	id, ok2 := strings.CutSuffix(rest, "/preview")
	return ok && ok2 && id != "" && !strings.Contains(id, "/")
}

// auth authenticates the bearer token, checks its scope and puts the
// caller in the request's context for the audit log. With no bootstrap
// token the API is open (glbd allows that on loopback only) and every
// caller is anonymous.
func (s *server) auth(next http.Handler) http.Handler {
	var bootstrap []byte
	if s.Token != "" {
		h := sha256.Sum256([]byte(s.Token))
		bootstrap = h[:]
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bootstrap == nil {
			next.ServeHTTP(w, asAdmin(withCaller(r, pools.ActorAnonymous)))
			return
		}
		h := r.Header.Get("Authorization")
		scheme, secret, ok := strings.Cut(h, " ")
		if h == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="glb"`)
			writeProblem(w, newProblem(http.StatusUnauthorized, "an Authorization: Bearer token is required"))
			return
		}
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			unauthorized(w, "the Authorization header is not a bearer token")
			return
		}
		// Both sides are hashed first, so that the comparison is of equal
		// lengths and constant-time whatever was sent.
		hash := pools.HashToken(strings.TrimSpace(secret))
		if subtle.ConstantTimeCompare(hash, bootstrap) == 1 {
			next.ServeHTTP(w, asAdmin(withCaller(r, pools.ActorBootstrap)))
			return
		}
		tok, err := s.tokens.lookup(r.Context(), hash)
		switch {
		case errors.Is(err, pools.ErrNotFound):
			unauthorized(w, "the bearer token is not valid")
			return
		case err != nil:
			s.writeError(w, r, err)
			return
		case tok.Expired(s.Now()):
			unauthorized(w, "the bearer token has expired")
			return
		}
		if need := requiredScope(r); !tok.Allows(need) {
			writeProblem(w, missingScope(tok.Name, need))
			return
		}
		r = withCaller(r, tok.Name)
		r = r.WithContext(context.WithValue(r.Context(), grantKey{}, grant{token: tok.Name, scopes: tok.Scopes, zones: tok.Zones}))
		if len(tok.Zones) > 0 {
			s.zoneScoped(next).ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// missingScope is the 403 of a token that lacks need.
func missingScope(token string, need pools.Scope) *Problem {
	p := newProblem(http.StatusForbidden, "token "+token+" lacks the "+string(need)+" scope")
	p.Type, p.Title, p.MissingScope = problemForbidden, "Missing scope", string(need)
	return p
}

type grantKey struct{}

// grant is what the request's token may do. The bootstrap token, and an
// API without tokens (loopback only), are admin.
type grant struct {
	token  string
	scopes []pools.Scope
	// zones limits the token to these zones' objects (zone_scope.go).
	zones []string
}

// asAdmin marks the request as made with admin rights: the bootstrap
// token, or an API without tokens (loopback only).
func asAdmin(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), grantKey{}, grant{token: callerOf(r.Context()), scopes: []pools.Scope{pools.ScopeAdmin}}))
}

// allows reports whether the request's token has scope s.
func allows(ctx context.Context, s pools.Scope) bool {
	g, _ := ctx.Value(grantKey{}).(grant)
	t := pools.Token{Scopes: g.scopes}
	return t.Allows(s)
}

// needScope is nil when the request's token has s, else its 403.
func needScope(ctx context.Context, s pools.Scope) error {
	if allows(ctx, s) {
		return nil
	}
	g, _ := ctx.Value(grantKey{}).(grant)
	return missingScope(g.token, s)
}

// isAdmin reports whether the request was made with admin rights.
func isAdmin(ctx context.Context) bool { return allows(ctx, pools.ScopeAdmin) }

func isUnavailable(err error) bool { return errors.Is(err, pools.ErrUnavailable) }

func unauthorized(w http.ResponseWriter, detail string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="glb", error="invalid_token"`)
	writeProblem(w, newProblem(http.StatusUnauthorized, detail))
}

func withCaller(r *http.Request, actor string) *http.Request {
	ctx := pools.WithCaller(r.Context(), pools.Caller{Actor: actor, Method: r.Method})
	return r.WithContext(ctx)
}

// callerOf is who the request authenticated as.
func callerOf(ctx context.Context) string { return pools.CallerOf(ctx).Actor }
