package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/glb-dns/glb/pools"
)

const tokensUsage = `usage:
  glbctl tokens [list] [-o table|json|yaml]
  glbctl tokens create NAME --scope read|write|integrations|admin|feed [--zone ID]... [--expires RFC3339]
  glbctl tokens delete NAME
--zone (repeatable) scopes a read or write token to those zones: their load balancers and
the pools and monitors those use, nothing else.`

// runTokens manages the API tokens (admin). create prints the secret,
// which the API shows only once.
func runTokens(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("tokens", env, stderr, "table", "json", "yaml")
	scope := fs.String("scope", "", "create: read, write, integrations or admin (scopes nest), or feed (feeding health and load in, nothing else)")
	expires := fs.String("expires", "", "create: when the token expires, RFC 3339; empty never")
	var zones []string
	fs.Func("zone", "create: a zone id the token is limited to (repeatable)", func(v string) error {
		zones = append(zones, v)
		return nil
	})
	pos, cl, err := commandArgs(fs, args, c, 0, -1, "")
	if err != nil {
		return usageError(stderr, err)
	}
	verb, pos := splitVerb(pos)
	switch {
	case verb == "list" && len(pos) == 0:
		return showAs(ctx, cl, apiPrefix+"/tokens?per_page=1000", c.output, stdout, stderr, "tokens", func(w io.Writer, ts []pools.Token) {
			t := newTable(w, "NAME", "SCOPES", "ZONES", "CREATED", "EXPIRES", "LAST USED")
			when := func(p *time.Time) string {
				if p == nil {
					return "-"
				}
				return p.Format(time.RFC3339)
			}
			for _, k := range ts {
				var ss []string
				for _, s := range k.Scopes {
					ss = append(ss, string(s))
				}
				zs := strings.Join(k.Zones, ",")
				if zs == "" {
					zs = "all"
				}
				t.row(k.Name, strings.Join(ss, ","), zs, k.CreatedOn.Format(time.RFC3339), when(k.ExpiresOn), when(k.LastUsed))
			}
			t.flush()
		})
	case verb == "create" && len(pos) == 1:
		if *scope == "" {
			return usageError(stderr, fmt.Errorf("tokens create: --scope is required\n%s", tokensUsage))
		}
		req := map[string]any{"name": pos[0], "scopes": []string{*scope}}
		if len(zones) > 0 {
			req["zones"] = zones
		}
		if *expires != "" {
			at, err := time.Parse(time.RFC3339, *expires)
			if err != nil {
				return usageError(stderr, fmt.Errorf("--expires %q: not an RFC 3339 time (2027-01-01T00:00:00Z)", *expires))
			}
			req["expires_on"] = at
		}
		var k struct {
			pools.Token
			Secret string `json:"secret"`
		}
		if err := cl.post(ctx, apiPrefix+"/tokens", req, &k); err != nil {
			return fail(stderr, exitFailed, err)
		}
		reach := "every zone"
		if len(k.Zones) > 0 {
			reach = "zone(s) " + strings.Join(k.Zones, ", ")
		}
		fmt.Fprintf(stdout, "token %s created (%s, %s). Its secret is shown this once:\n%s\n", k.Name, *scope, reach, k.Secret)
		return exitOK
	case verb == "delete" && len(pos) == 1:
		if _, _, err := cl.do(ctx, http.MethodDelete, apiPrefix+"/tokens/"+url.PathEscape(pos[0]), nil, ""); err != nil {
			return fail(stderr, exitFailed, err)
		}
		fmt.Fprintf(stdout, "token %s revoked\n", pos[0])
		return exitOK
	}
	return usageError(stderr, fmt.Errorf("%s", tokensUsage))
}
