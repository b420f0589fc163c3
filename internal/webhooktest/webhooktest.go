// Package webhooktest is the receiver's side of Standard Webhooks for
// tests: it checks a delivery's signature with its own code, not the
// sender's (notify.Sign), so that a fault in the signing shows.
package webhooktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

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
