package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/internal/apiclient"
	"github.com/glb-dns/glb/pools"
)

const zoneUsage = `usage:
  glbctl zone import ZONE FILE [--replace] [--dry-run] [-o table|json]
  glbctl zone import ZONE --axfr SERVER[:PORT] [--tsig NAME:ALG:SECRET] [--replace] [--dry-run] [-o table|json]
  glbctl zone export ZONE [--out FILE]
ZONE is the zone's id or name; FILE is an RFC 1035 master file (- for standard input).`

// runZone moves zones in and out as master files: import shows the diff
// (and with --dry-run stores nothing); export writes what a secondary or
// another server loads.
func runZone(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("zone", env, stderr, "table", "json")
	replace := fs.Bool("replace", false, "import: the file's records become the zone's (default: merge them in)")
	dry := fs.Bool("dry-run", false, "import: show the diff, store nothing")
	out := fs.String("out", "", "export: write to FILE instead of standard output")
	axfr := fs.String("axfr", "", "import: transfer the zone from SERVER[:PORT] (53) instead of reading a file")
	tsig := fs.String("tsig", "", "import --axfr: sign the transfer with NAME:ALG:SECRET (ALG hmac-sha256, hmac-sha512, ...)")
	pos, cl, err := commandArgs(fs, args, c, 2, 3, zoneUsage)
	if err == nil && *tsig != "" && *axfr == "" {
		err = errors.New("--tsig signs an --axfr import")
	}
	if err != nil {
		return usageError(stderr, err)
	}
	verb := pos[0]
	id, err := cl.zoneID(ctx, pos[1])
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	switch {
	case verb == "import" && (len(pos) == 3) != (*axfr != ""):
		var body []byte
		ct := "text/dns"
		switch {
		case *axfr != "":
			src := map[string]any{"server": *axfr}
			if *tsig != "" {
				f := strings.SplitN(*tsig, ":", 3)
				if len(f) != 3 {
					return usageError(stderr, fmt.Errorf("--tsig %q: want NAME:ALG:SECRET", *tsig))
				}
				src["tsig"] = map[string]string{"name": f[0], "algorithm": f[1], "secret": f[2]}
			}
			body, _ = json.Marshal(map[string]any{"axfr": src})
			ct = "application/json"
		case pos[2] == "-":
			body, err = io.ReadAll(os.Stdin)
		default:
			body, err = os.ReadFile(pos[2])
		}
		if err != nil {
			return fail(stderr, exitFailed, err)
		}
		q := url.Values{}
		if *replace {
			q.Set("mode", "replace")
		}
		if *dry {
			q.Set("dry_run", "true")
		}
		path := apiPrefix + "/zones/" + url.PathEscape(id) + "/import"
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		a, err := cl.api.Send(ctx, apiclient.Request{Method: http.MethodPost, Path: path, Body: body, ContentType: ct})
		if err != nil {
			return fail(stderr, exitFailed, withProblem(err))
		}
		var res struct {
			Result api.ImportResult `json:"result"`
		}
		if err := json.Unmarshal(a.Body, &res); err != nil {
			return fail(stderr, exitFailed, fmt.Errorf("decoding the answer: %w", err))
		}
		if c.output == "json" {
			fmt.Fprintln(stdout, strings.TrimSpace(string(a.Body)))
			return exitOK
		}
		printImport(stdout, pos[1], res.Result)
		return exitOK
	case verb == "export" && len(pos) == 2:
		a, err := cl.api.Send(ctx, apiclient.Request{Method: http.MethodGet, Path: apiPrefix + "/zones/" + url.PathEscape(id) + "/export"})
		if err != nil {
			return fail(stderr, exitFailed, withProblem(err))
		}
		if *out == "" {
			_, err = stdout.Write(a.Body)
		} else {
			err = os.WriteFile(*out, a.Body, 0o644)
		}
		if err != nil {
			return fail(stderr, exitFailed, err)
		}
		return exitOK
	}
	return usageError(stderr, errors.New(zoneUsage))
}

// zoneID resolves a zone given by id or by name.
func (c *client) zoneID(ctx context.Context, zone string) (string, error) {
	zones, err := c.objects(ctx, pools.KindZone)
	if err != nil {
		return "", err
	}
	name := pools.CanonicalName(zone)
	for _, o := range zones {
		z := o.(*pools.Zone)
		if z.ID == zone || pools.CanonicalName(z.Name) == name {
			return z.ID, nil
		}
	}
	return "", fmt.Errorf("no zone has the id or name %q", zone)
}

// printImport shows an import's diff as a reviewer reads it.
func printImport(w io.Writer, zone string, r api.ImportResult) {
	switch {
	case r.DryRun:
		fmt.Fprintf(w, "dry run of a %s into zone %s: nothing stored\n", r.Mode, zone)
	case r.Applied:
		fmt.Fprintf(w, "%s into zone %s stored; serial %d\n", r.Mode, zone, r.Serial)
	default:
		fmt.Fprintf(w, "zone %s already has every record of the file: nothing stored\n", zone)
	}
	rec := func(p string, x pools.Record) {
		fmt.Fprintf(w, "%s %s %d %s %s\n", p, x.Name, x.TTL, x.Type, x.Content)
	}
	for _, x := range r.Added {
		rec("+", x)
	}
	for _, x := range r.Removed {
		rec("-", x)
	}
	for _, c := range r.Changed {
		fmt.Fprintf(w, "~ %s %s %s: ttl %d -> %d\n", c.After.Name, c.After.Type, c.After.Content, c.Before.TTL, c.After.TTL)
	}
	fmt.Fprintf(w, "%d added, %d removed, %d changed, %d unchanged\n", len(r.Added), len(r.Removed), len(r.Changed), r.Unchanged)
	for _, d := range r.SOA {
		fmt.Fprintf(w, "not applied: the file's SOA %s is %s, the zone's %s\n", d.Field, d.File, d.Zone)
	}
	if r.Nameservers != nil {
		fmt.Fprintf(w, "not applied: the file's apex NS are %s, the zone's nameservers %s\n",
			strings.Join(r.Nameservers.File, " "), strings.Join(r.Nameservers.Zone, " "))
	}
}
