package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

const feedUsage = `usage:
  glbctl feed set POOL ORIGIN (--up|--down) [--reason TEXT] [--ttl SECONDS] [--load 0.8] [--monitor ID]   (feed)
  glbctl feed get POOL ORIGIN [-o table|json|yaml]
set feeds one word through the origin's pool's feed monitor (a monitor of type feed in its
monitors): down takes the origin out as a failed check would, until the word's ttl (default:
the monitor's) runs out; feed again before then to keep it. --load reports the origin's load
for load_shedding.by_load. A token with only the feed scope may set, and give POOL by id.`

// runFeed feeds health and load in, and shows what was fed (feeds.go in
// the API).
func runFeed(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("feed", env, stderr, "table", "json", "yaml")
	up := fs.Bool("up", false, "set: the origin is up")
	down := fs.Bool("down", false, "set: the origin is down")
	reason := fs.String("reason", "", "set: why, shown with the origin")
	ttl := fs.Int("ttl", 0, "set: seconds the word lasts; 0: the feed monitor's ttl")
	load := fs.Float64("load", -1, "set: the origin's load in [0, 1]; absent: none")
	monitor := fs.String("monitor", "", "set: the feed monitor, when the pool's group has several")
	pos, cl, err := commandArgs(fs, args, c, 3, 3, feedUsage)
	if err != nil {
		return usageError(stderr, err)
	}
	verb, pos := splitVerb(pos)
	pool, err := feedPool(ctx, cl, pos[0])
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	path := objectPath(pools.KindPool, pool) + "/origins/" + url.PathEscape(pos[1]) + "/feed"
	switch verb {
	case "get":
		return showAs(ctx, cl, path, c.output, stdout, stderr, "words", func(w io.Writer, ws []api.FeedView) {
			printFeeds(w, ws)
		})
	case "set":
		if *up == *down {
			return usageError(stderr, fmt.Errorf("feed set: give one of --up and --down\n%s", feedUsage))
		}
		req := map[string]any{"up": *up, "reason": *reason}
		if *ttl != 0 {
			req["ttl"] = *ttl
		}
		if *load >= 0 {
			req["load"] = *load
		}
		if *monitor != "" {
			req["monitor"] = *monitor
		}
		body, _ := json.Marshal(req)
		b, _, err := cl.do(ctx, http.MethodPut, path, body, "")
		if err != nil {
			return fail(stderr, exitFailed, err)
		}
		var out struct {
			Result api.FeedView `json:"result"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return fail(stderr, exitFailed, fmt.Errorf("decoding the word: %w", err))
		}
		fmt.Fprintf(stdout, "pool %s origin %s: fed %s through monitor %s until %s\n", out.Result.Pool, out.Result.Origin,
			feedSays(out.Result.FeedWord), out.Result.Monitor, out.Result.Expires.Local().Format(time.RFC3339))
		return exitOK
	}
	return usageError(stderr, errors.New(feedUsage))
}

// feedPool resolves POOL by id or name; a token that may not read pools
// (the feed scope alone) gives an id, taken as it is.
func feedPool(ctx context.Context, cl *client, ref string) (string, error) {
	id, err := cl.resolve(ctx, pools.KindPool, ref)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusForbidden {
		return ref, nil
	}
	return id, err
}

// feedSays is a word in a few words: "down (maintenance), load 0.8".
func feedSays(w pools.FeedWord) string {
	s := "down"
	if w.Up {
		s = "up"
	}
	if w.Reason != "" {
		s += " (" + w.Reason + ")"
	}
	if w.Load != nil {
		s += ", load " + num(*w.Load)
	}
	return s
}

// printFeeds shows words fed in, one row each.
func printFeeds(w io.Writer, ws []api.FeedView) {
	t := newTable(w, "ORIGIN", "MONITOR", "SOURCE", "SAYS", "LOAD", "RECEIVED", "EXPIRES", "LIVE", "REASON")
	for _, f := range ws {
		says, load := "down", "-"
		if f.Up {
			says = "up"
		}
		if f.Load != nil {
			load = num(*f.Load)
		}
		t.row(f.Origin, f.Monitor, f.Source, says, load, f.At.Local().Format(time.RFC3339), f.Expires.Local().Format(time.RFC3339),
			yesNo(f.Live), strings.ReplaceAll(f.Reason, "\t", " "))
	}
	t.flush()
}
