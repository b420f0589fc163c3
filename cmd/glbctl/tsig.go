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

const tsigUsage = `usage:
  glbctl tsig-keys [list] [-o table|json|yaml]
  glbctl tsig-keys create NAME --grant ZONE:NAME:MATCH:TYPE[,TYPE...] [--grant ...] [--algorithm hmac-sha256|hmac-sha512]
  glbctl tsig-keys delete NAME
MATCH is exact, subtree or acme-challenge.`

// runTSIGKeys manages the TSIG keys with which DNS UPDATEs are signed
// (admin). create prints the secret, which the API shows only once.
func runTSIGKeys(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("tsig-keys", env, stderr, "table", "json", "yaml")
	alg := fs.String("algorithm", pools.TSIGHMACSHA256, "create: hmac-sha256 or hmac-sha512")
	var grants []pools.TSIGGrant
	fs.Func("grant", "create: ZONE:NAME:MATCH:TYPES (repeatable), e.g. z1:www.glb.example.com:acme-challenge:TXT", func(v string) error {
		f := strings.Split(v, ":")
		if len(f) != 4 {
			return fmt.Errorf("want ZONE:NAME:MATCH:TYPES, got %q", v)
		}
		grants = append(grants, pools.TSIGGrant{Zone: f[0], Name: f[1], Match: f[2], Types: strings.Split(f[3], ",")})
		return nil
	})
	pos, cl, err := commandArgs(fs, args, c, 0, -1, "")
	if err != nil {
		return usageError(stderr, err)
	}
	verb, pos := splitVerb(pos)
	switch {
	case verb == "list" && len(pos) == 0:
		return showAs(ctx, cl, apiPrefix+"/tsig_keys?per_page=1000", c.output, stdout, stderr, "keys", func(w io.Writer, ks []pools.TSIGKey) {
			t := newTable(w, "NAME", "ALGORITHM", "CREATED", "GRANTS")
			for _, k := range ks {
				var gs []string
				for _, g := range k.Grants {
					gs = append(gs, g.Zone+":"+g.Name+":"+g.Match+":"+strings.Join(g.Types, ","))
				}
				t.row(k.Name, k.Algorithm, k.CreatedOn.Format(time.RFC3339), strings.Join(gs, " "))
			}
			t.flush()
		})
	case verb == "create" && len(pos) == 1:
		var k struct {
			pools.TSIGKey
			Secret string `json:"secret"`
		}
		if err := cl.post(ctx, apiPrefix+"/tsig_keys", map[string]any{"name": pos[0], "algorithm": *alg, "grants": grants}, &k); err != nil {
			return fail(stderr, exitFailed, err)
		}
		fmt.Fprintf(stdout, "TSIG key %s created. Its secret is shown this once:\n%s\nnsupdate -y %s:%s:%s\n", k.Name, k.Secret, k.Algorithm, k.Name, k.Secret)
		return exitOK
	case verb == "delete" && len(pos) == 1:
		if _, _, err := cl.do(ctx, http.MethodDelete, apiPrefix+"/tsig_keys/"+url.PathEscape(pos[0]), nil, ""); err != nil {
			return fail(stderr, exitFailed, err)
		}
		fmt.Fprintf(stdout, "TSIG key %s deleted\n", pos[0])
		return exitOK
	}
	return usageError(stderr, fmt.Errorf("%s", tsigUsage))
}
