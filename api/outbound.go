package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/glb-dns/glb/pools"
)

// outboundURL is one URL a request points glbd at, and the field that
// holds it.
type outboundURL struct{ path, url string }

// checkOutbound checks, as they are written, the URLs a request would
// have every node send requests to: the outbound policy (loopback,
// private, link-local, ... refused unless --outbound-allow lets them) on
// the address written or every address the name resolves to now. The
// nodes check again at every request, on the address connected to.
func (s *server) checkOutbound(ctx context.Context, urls ...outboundURL) []pools.FieldError {
	var fes []pools.FieldError
	for _, u := range urls {
		if u.url == "" {
			continue
		}
		if err := s.Outbound.CheckURL(ctx, s.Resolver, u.url); err != nil {
			fes = append(fes, pools.FieldError{Path: u.path, Message: err.Error()})
		}
	}
	return fes
}

// guardScope is the 403 of a rollout whose guards send requests (a
// webhook, a Prometheus query) asked by a token without the integrations
// scope; nil when it has none or the token may.
func guardScope(ctx context.Context, g pools.RolloutGuards) error {
	if g.Webhook == "" && g.Prometheus == "" {
		return nil
	}
	if err := needScope(ctx, pools.ScopeIntegrations); err != nil {
		p := err.(*Problem)
		p.Detail = fmt.Sprintf("%s: a rollout guard that sends requests (guards.webhook, guards.prometheus) needs a token with the integrations scope", p.Detail)
		return p
	}
	return nil
}

// refuseOutbound answers the 400 of refused URLs; false when there is
// none.
func (s *server) refuseOutbound(w http.ResponseWriter, r *http.Request, fes []pools.FieldError) bool {
	if len(fes) == 0 {
		return false
	}
	s.writeError(w, r, badRequest(fmt.Sprintf("%d field(s) at fault; nothing was stored", len(fes)), fes...))
	return true
}
