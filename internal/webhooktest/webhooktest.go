// Package webhooktest is the receiver's side of Standard Webhooks for
// tests: a real endpoint that keeps what it is sent and checks each
// delivery's signature with its own code, not the sender's (notify.Sign),
// so that a fault in the signing shows.
package webhooktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Receiver is a webhook endpoint on a loopback port. It keeps every
// request, checks its signature (Check) with the secret set for its path,
// refuses with 401 a request to a path with a secret that does not check
// out, and answers the others with the status the test sets (200 until
// it sets one).
type Receiver struct {
	*httptest.Server
	mu      sync.Mutex
	secrets map[string]string // path → secret
	status  int
	got     []Request
}

// Request is one request the receiver was sent.
type Request struct {
	Path   string
	At     time.Time
	Header http.Header
	Body   []byte
	Status int    // what the receiver answered
	Bad    string // what Check found wrong with it, "" when nothing
}

// NewReceiver starts a receiver, closed when t ends.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{secrets: map[string]string{}, status: http.StatusOK}
	r.Server = httptest.NewServer(r)
	t.Cleanup(r.Close)
	return r
}

// NewReceiverOn starts a receiver listening on addr (127.0.0.3:0, say),
// closed when t ends.
func NewReceiverOn(t testing.TB, addr string) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := Serve(ln)
	t.Cleanup(r.Close)
	return r
}

// Serve starts a receiver on ln (one opened in a network namespace of
// the fault lab, say); Close stops it.
func Serve(ln net.Listener) *Receiver {
	r := &Receiver{secrets: map[string]string{}, status: http.StatusOK}
	r.Server = httptest.NewUnstartedServer(r)
	r.Server.Listener.Close()
	r.Server.Listener = ln
	r.Server.Start()
	return r
}

func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	secret, signed := r.secrets[req.URL.Path]
	q := Request{Path: req.URL.Path, At: time.Now(), Header: req.Header.Clone(), Body: body, Status: r.status,
		Bad: Check(secret, req.Header, body)}
	if signed && q.Bad != "" {
		q.Status = http.StatusUnauthorized
		r.got = append(r.got, q)
		http.Error(w, "bad signature: "+q.Bad, q.Status)
		return
	}
	r.got = append(r.got, q)
	w.WriteHeader(q.Status)
}

// SetSecret makes path a signed endpoint checked with secret.
func (r *Receiver) SetSecret(path, secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets[path] = secret
}

// SetStatus sets the status the receiver answers from now on.
func (r *Receiver) SetStatus(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = code
}

// Requests returns the requests sent to path ("": every path), in order.
func (r *Receiver) Requests(path string) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Request
	for _, q := range r.got {
		if path == "" || q.Path == path {
			out = append(out, q)
		}
	}
	return out
}

// Check says what is wrong with a Standard Webhooks request ("" when
// nothing): webhook-id, webhook-timestamp within 5 minutes, and a v1
// signature equal to the base64 HMAC-SHA256 of "id.timestamp.body" keyed
// with the secret's base64 part (after "whsec_").
func Check(secret string, h http.Header, body []byte) string {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return "missing webhook headers"
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return "timestamp " + ts
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return "no whsec_ secret for this path"
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		if v, b, ok := strings.Cut(s, ","); ok && v == "v1" {
			if got, err := base64.StdEncoding.DecodeString(b); err == nil && hmac.Equal(got, want) {
				return ""
			}
		}
	}
	return "signature mismatch"
}
