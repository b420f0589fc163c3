package api

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// notificationRoutes adds the notification subscriptions, their delivery
// logs and the test call.
func (s *server) notificationRoutes(r chi.Router) {
	collection{list: s.listNotifications, create: s.createNotification, get: s.getNotification,
		replace: s.replaceNotification, delete: s.deleteNotification}.mount(r, Prefix+"/notifications", "id")
	r.Get(Prefix+"/notifications/{id}/deliveries", s.notificationDeliveries)
	r.Post(Prefix+"/notifications/{id}/test", s.testNotification)
}

// notificationRequest is the body of POST and PUT /notifications.
type notificationRequest struct {
	Name          string   `json:"name"`
	URL           string   `json:"url"`
	Events        []string `json:"events"`
	Format        string   `json:"format"`
	LoadBalancers []string `json:"load_balancers"`
	Pools         []string `json:"pools"`
	// RoutingKey is the PagerDuty integration key (pagerduty only).
	RoutingKey string `json:"routing_key"`
}

// NewNotification is the answer to POST /notifications: the subscription
// and, this once, its signing secret (standard format).
type NewNotification struct {
	pools.Subscription
	Secret string `json:"secret,omitempty"`
}

// subscriptionOf checks a request beyond what the subscription checks on
// its own: the URL is not this API, routing_key only for pagerduty, the
// filters name existing objects.
// On replace, a pagerduty subscription without routing_key keeps its
// stored one.
func (s *server) subscriptionOf(w http.ResponseWriter, r *http.Request, replace bool) (pools.Subscription, error) {
	var req notificationRequest
	if err := readInto(w, r, &req); err != nil {
		return pools.Subscription{}, err
	}
	if req.Format == "" {
		req.Format = pools.FormatStandard
	}
	sub := pools.Subscription{Name: req.Name, URL: req.URL, Events: req.Events, Format: req.Format,
		LoadBalancers: req.LoadBalancers, Pools: req.Pools, Secret: req.RoutingKey}
	var fes []pools.FieldError
	keep := replace && sub.Format == pools.FormatPagerDuty && sub.Secret == ""
	if keep {
		sub.Secret = "kept"
	}
	err := sub.Validate()
	if keep {
		sub.Secret = ""
	}
	if err != nil {
		if ve, ok := err.(*pools.ValidationError); ok {
			fes = append(fes, ve.Errors...)
		} else {
			return sub, err
		}
	}
	if req.RoutingKey != "" && req.Format != pools.FormatPagerDuty {
		fes = append(fes, pools.FieldError{Path: "routing_key", Message: "only a pagerduty subscription takes a routing key"})
	}
	if msg := s.selfURL(r, req.URL); msg != "" {
		fes = append(fes, pools.FieldError{Path: "url", Message: msg})
	}
	if !slices.ContainsFunc(fes, func(fe pools.FieldError) bool { return fe.Path == "url" }) {
		fes = append(fes, s.checkOutbound(r.Context(), outboundURL{"url", req.URL})...)
	}
	for kind, list := range map[pools.Kind][]string{pools.KindLoadBalancer: req.LoadBalancers, pools.KindPool: req.Pools} {
		for i, id := range list {
			if id == "" {
				continue
			}
			if _, err := s.Store.Get(r.Context(), kind, id); err != nil {
				if !errors.Is(err, pools.ErrNotFound) {
					return sub, err
				}
				fes = append(fes, pools.FieldError{Path: fmt.Sprintf("%s[%d]", kind, i), Message: fmt.Sprintf("no %s %q", strings.ReplaceAll(kind.Singular(), "_", " "), id)})
			}
		}
	}
	if len(fes) > 0 {
		return sub, badRequest(fmt.Sprintf("%d field(s) at fault; nothing was stored", len(fes)), fes...)
	}
	return sub, nil
}

// selfURL says why a receiver's URL points back at this API ("" when it
// does not): the node would post its own events to itself, with a token
// it does not have, and every failure would be one more event.
func (s *server) selfURL(r *http.Request, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	if sameHostPort(u, r.Host, r.TLS != nil) {
		return fmt.Sprintf("%s is this API (the host of this request): a receiver must be another service", u.Host)
	}
	if strings.HasPrefix(u.Path, Prefix+"/") || u.Path == Prefix || u.Path == "/metrics" || u.Path == "/healthz" {
		host := u.Hostname()
		if host == "localhost" {
			return fmt.Sprintf("%s on localhost is this API: a receiver must be another service", u.Path)
		}
		if a, err := netip.ParseAddr(host); err == nil && (a.IsLoopback() || a.IsUnspecified()) {
			return fmt.Sprintf("%s on %s is this API: a receiver must be another service", u.Path, host)
		}
	}
	return ""
}

// sameHostPort compares a URL's host and port with a request's Host,
// default ports filled in.
func sameHostPort(u *url.URL, reqHost string, tls bool) bool {
	withPort := func(host, scheme string) string {
		if _, _, err := net.SplitHostPort(host); err == nil {
			return strings.ToLower(host)
		}
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		return strings.ToLower(net.JoinHostPort(strings.Trim(host, "[]"), port))
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return reqHost != "" && withPort(u.Host, u.Scheme) == withPort(reqHost, scheme)
}

func (s *server) createNotification(w http.ResponseWriter, r *http.Request) {
	sub, err := s.subscriptionOf(w, r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	secret := ""
	if sub.Format == pools.FormatStandard {
		secret = pools.NewWebhookSecret()
		sub.Secret = secret
	}
	sub, err = s.Store.CreateSubscription(r.Context(), sub)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Neither the URL (a Slack URL is a credential) nor the secret.
	s.log.Info("notification subscription created", "id", sub.ID, "name", sub.Name, "format", sub.Format, "by", callerOf(r.Context()))
	w.Header().Set("Location", Prefix+"/notifications/"+sub.ID)
	w.Header().Set("Cache-Control", "no-store")
	sub.Secret = ""
	writeJSON(w, http.StatusCreated, item{Result: NewNotification{Subscription: sub, Secret: secret}})
}

func (s *server) listNotifications(w http.ResponseWriter, r *http.Request) {
	page, err := parsePage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	all, err := s.Store.Subscriptions(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	offset, limit := page.Bounds()
	writeJSON(w, http.StatusOK, pageOf(all[min(offset, len(all)):min(offset+limit, len(all))], page, len(all)))
}

func (s *server) getNotification(w http.ResponseWriter, r *http.Request) {
	sub, err := s.Store.Subscription(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub.Secret = ""
	writeJSON(w, http.StatusOK, item{Result: sub})
}

func (s *server) replaceNotification(w http.ResponseWriter, r *http.Request) {
	sub, err := s.subscriptionOf(w, r, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub.ID = chi.URLParam(r, "id")
	if sub.Format != pools.FormatPagerDuty {
		sub.Secret = "" // kept by the store
	}
	sub, err = s.Store.ReplaceSubscription(r.Context(), sub)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.Info("notification subscription replaced", "id", sub.ID, "name", sub.Name, "by", callerOf(r.Context()))
	sub.Secret = ""
	writeJSON(w, http.StatusOK, item{Result: sub})
}

func (s *server) deleteNotification(w http.ResponseWriter, r *http.Request) {
	s.deleteLogged(w, r, s.Store.DeleteSubscription, chi.URLParam(r, "id"), "notification subscription deleted", "id")
}

func (s *server) notificationDeliveries(w http.ResponseWriter, r *http.Request) {
	page, err := parsePage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.Store.Deliveries(r.Context(), chi.URLParam(r, "id"), page)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pageOf(res.Items, page, res.TotalCount))
}

// testNotification queues a test event for one subscription: it goes
// through the outbox like any other, so its delivery shows in the log.
func (s *server) testNotification(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	now := pools.StoreTime(s.Now())
	e := pools.Event{ID: pools.EventID(pools.EventTest, id, now.String()), Type: pools.EventTest, Time: now,
		Data: pools.EventData{Summary: "glb test event, sent by " + callerOf(r.Context()), Actor: callerOf(r.Context())}}
	if err := s.Store.AddTestEvent(r.Context(), id, e); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, item{Result: e})
}
