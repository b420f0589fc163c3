package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/glb-dns/glb/pools"
)

const notificationsUsage = `usage:
  glbctl notifications [list] [-o table|json|yaml]
  glbctl notifications apply -f FILE [--prune] [--dry-run]
  glbctl notifications deliveries NAME|ID [-o table|json|yaml]
  glbctl notifications test NAME|ID
FILE lists subscriptions under "notifications:", matched by name. Secrets are never in it:
a pagerduty routing key comes from the environment variable named by routing_key_env, and a
URL that is itself a credential (Slack's) may come from the one named by url_env. The signing
secret of a new standard subscription is printed once.`

// notificationSpec is one subscription as a file writes it.
type notificationSpec struct {
	Name          string   `json:"name"`
	URL           string   `json:"url,omitempty"`
	URLEnv        string   `json:"url_env,omitempty"`
	Events        []string `json:"events"`
	Format        string   `json:"format,omitempty"`
	LoadBalancers []string `json:"load_balancers,omitempty"`
	Pools         []string `json:"pools,omitempty"`
	RoutingKeyEnv string   `json:"routing_key_env,omitempty"`
}

// runNotifications manages notification subscriptions.
func runNotifications(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("notifications", env, stderr, "table", "json", "yaml")
	file := fs.String("f", "", "apply: the file of subscriptions (- is standard input)")
	prune := fs.Bool("prune", false, "apply: delete the subscriptions the file does not name")
	dryRun := fs.Bool("dry-run", false, "apply: say what would change, change nothing")
	pos, cl, err := commandArgs(fs, args, c, 0, -1, "")
	if err != nil {
		return usageError(stderr, err)
	}
	verb, pos := splitVerb(pos)
	switch {
	case verb == "list" && len(pos) == 0:
		return showAs(ctx, cl, apiPrefix+"/notifications?per_page=1000", c.output, stdout, stderr, "subscriptions", func(w io.Writer, subs []pools.Subscription) {
			t := newTable(w, "ID", "NAME", "FORMAT", "EVENTS", "URL")
			for _, s := range subs {
				t.row(s.ID, s.Name, s.Format, strings.Join(s.Events, ","), redactURL(s.URL))
			}
			t.flush()
		})
	case verb == "apply" && len(pos) == 0 && *file != "":
		specs, err := readNotificationFile(*file, os.Stdin, env)
		if err != nil {
			return fail(stderr, exitFailed, err)
		}
		return applyNotifications(ctx, cl, specs, env, *prune, *dryRun, stdout, stderr)
	case verb == "deliveries" && len(pos) == 1:
		id, err := subscriptionID(ctx, cl, pos[0])
		if err != nil {
			return fail(stderr, exitFailed, err)
		}
		return showAs(ctx, cl, apiPrefix+"/notifications/"+url.PathEscape(id)+"/deliveries?per_page=100", c.output, stdout, stderr, "deliveries", func(w io.Writer, ds []pools.Delivery) {
			t := newTable(w, "SEQ", "TIME", "TYPE", "STATUS", "ATTEMPTS", "LAST CODE", "NEXT", "SUMMARY / LAST ERROR")
			for _, d := range ds {
				next, what := "", d.Event.Data.Summary
				if d.NextAttempt != nil {
					next = d.NextAttempt.Format(time.RFC3339)
				}
				if d.LastError != "" {
					what += " / " + d.LastError
				}
				t.row(itoa(d.Seq), d.Event.Time.Format(time.RFC3339), d.Event.Type, d.Status, itoa(d.Attempts), itoa(d.LastStatus), next, what)
			}
			t.flush()
		})
	case verb == "test" && len(pos) == 1:
		id, err := subscriptionID(ctx, cl, pos[0])
		if err != nil {
			return fail(stderr, exitFailed, err)
		}
		if _, _, err := cl.do(ctx, http.MethodPost, apiPrefix+"/notifications/"+url.PathEscape(id)+"/test", nil, ""); err != nil {
			return fail(stderr, exitFailed, err)
		}
		fmt.Fprintf(stdout, "test event queued for %s; glbctl notifications deliveries %s shows how it went\n", pos[0], pos[0])
		return exitOK
	}
	return usageError(stderr, fmt.Errorf("%s", notificationsUsage))
}

// redactURL keeps a URL's scheme and host: the rest may be a credential
// (a Slack webhook's path).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(hidden)"
	}
	if u.Path == "" || u.Path == "/" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// readNotificationFile reads the subscriptions of a file, refusing
// secrets written in it.
func readNotificationFile(name string, stdin io.Reader, env func(string) string) ([]notificationSpec, error) {
	data, err := readInput(name, stdin)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var top struct {
		Notifications []json.RawMessage `json:"notifications"`
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("%s: want a mapping with the key notifications: %w", name, err)
	}
	var problems []string
	var out []notificationSpec
	seen := map[string]bool{}
	for i, raw := range top.Notifications {
		path := fmt.Sprintf("notifications[%d]", i)
		var s notificationSpec
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&s); err != nil {
			msg := err.Error()
			if strings.Contains(msg, `"routing_key"`) || strings.Contains(msg, `"secret"`) {
				msg = "a secret does not go in a file: name an environment variable in routing_key_env"
			}
			problems = append(problems, path+": "+msg)
			continue
		}
		switch {
		case s.Name == "":
			problems = append(problems, path+".name: required: apply finds a subscription by its name")
		case seen[s.Name]:
			problems = append(problems, fmt.Sprintf("%s.name: %q is listed twice", path, s.Name))
		}
		seen[s.Name] = true
		if (s.URL == "") == (s.URLEnv == "") {
			problems = append(problems, path+": give url or url_env (the name of an environment variable holding it)")
		} else if s.URLEnv != "" && env(s.URLEnv) == "" {
			problems = append(problems, fmt.Sprintf("%s.url_env: %s is not set", path, s.URLEnv))
		}
		if s.RoutingKeyEnv != "" && env(s.RoutingKeyEnv) == "" {
			problems = append(problems, fmt.Sprintf("%s.routing_key_env: %s is not set", path, s.RoutingKeyEnv))
		}
		if s.Format == "" {
			s.Format = pools.FormatStandard
		}
		out = append(out, s)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: %d problem(s)\n  %s", name, len(problems), strings.Join(problems, "\n  "))
	}
	return out, nil
}

// body is what the API takes for s, its secrets read from env.
func (s *notificationSpec) body(env func(string) string) map[string]any {
	u := s.URL
	if s.URLEnv != "" {
		u = env(s.URLEnv)
	}
	b := map[string]any{"name": s.Name, "url": u, "events": s.Events, "format": s.Format,
		"load_balancers": orEmpty(s.LoadBalancers), "pools": orEmpty(s.Pools)}
	if s.RoutingKeyEnv != "" {
		b["routing_key"] = env(s.RoutingKeyEnv)
	}
	return b
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// same reports whether a stored subscription is what the spec asks for
// (a routing key, unreadable, is sent again on any change).
func (s *notificationSpec) same(cur pools.Subscription, env func(string) string) bool {
	b := s.body(env)
	return cur.URL == b["url"] && cur.Format == s.Format && slices.Equal(cur.Events, s.Events) &&
		slices.Equal(cur.LoadBalancers, orEmpty(s.LoadBalancers)) && slices.Equal(cur.Pools, orEmpty(s.Pools))
}

func applyNotifications(ctx context.Context, cl *client, specs []notificationSpec, env func(string) string, prune, dryRun bool, stdout, stderr io.Writer) int {
	var cur []pools.Subscription
	if err := cl.result(ctx, apiPrefix+"/notifications?per_page=1000", &cur); err != nil {
		return fail(stderr, exitFailed, err)
	}
	byName := map[string]pools.Subscription{}
	for _, s := range cur {
		byName[s.Name] = s
	}
	failed := false
	// step says what is done to the subscription named name and, unless
	// this is a dry run, does it; ok is false when it was not done.
	step := func(action, name, method, path string, body []byte) (answer []byte, ok bool) {
		if dryRun {
			action = "would " + action
		}
		fmt.Fprintf(stdout, "%s notification %s\n", action, name)
		if dryRun {
			return nil, false
		}
		b, _, err := cl.do(ctx, method, path, body, "")
		if err != nil {
			fmt.Fprintf(stderr, "glbctl: notification %s: %v\n", name, err)
			failed = true
			return nil, false
		}
		return b, true
	}
	for _, s := range specs {
		body, _ := json.Marshal(s.body(env))
		old, exists := byName[s.Name]
		delete(byName, s.Name) // what is left, --prune deletes
		switch {
		case !exists:
			b, ok := step("create", s.Name, http.MethodPost, apiPrefix+"/notifications", body)
			if !ok {
				continue
			}
			var out struct {
				Result struct {
					Secret string `json:"secret"`
				} `json:"result"`
			}
			if json.Unmarshal(b, &out) == nil && out.Result.Secret != "" {
				fmt.Fprintf(stdout, "  signing secret of %s, shown this once (give it to the receiver): %s\n", s.Name, out.Result.Secret)
			}
		case !s.same(old, env):
			step("update", s.Name, http.MethodPut, apiPrefix+"/notifications/"+url.PathEscape(old.ID), body)
		}
	}
	if prune {
		for _, old := range cur {
			if _, left := byName[old.Name]; !left {
				continue
			}
			step("delete", old.Name, http.MethodDelete, apiPrefix+"/notifications/"+url.PathEscape(old.ID), nil)
		}
	}
	if failed {
		return exitFailed
	}
	return exitOK
}

// subscriptionID finds a subscription by id or name.
func subscriptionID(ctx context.Context, cl *client, ref string) (string, error) {
	var subs []pools.Subscription
	if err := cl.result(ctx, apiPrefix+"/notifications?per_page=1000", &subs); err != nil {
		return "", err
	}
	for _, s := range subs {
		if s.ID == ref || s.Name == ref {
			return s.ID, nil
		}
	}
	return "", fmt.Errorf("no notification subscription named or with id %q", ref)
}
