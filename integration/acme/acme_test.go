package acme_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-acme/lego/v5/acme"
	"github.com/go-acme/lego/v5/certcrypto"
	"github.com/go-acme/lego/v5/certificate"
	"github.com/go-acme/lego/v5/challenge/dns01"
	"github.com/go-acme/lego/v5/lego"
	"github.com/go-acme/lego/v5/providers/dns/dnsupdate"
	"github.com/go-acme/lego/v5/registration"
	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"

	"github.com/glb-dns/glb/internal/testnode"
)

var glbdBin string

func TestMain(m *testing.M) {
	os.Exit(testnode.Run(m, nil, testnode.Binary{Dir: "../..", Pkg: "./cmd/glbd", Path: &glbdBin}))
}

// node is a running glbd.
type node struct {
	t        *testing.T
	dns, api string
}

func startGlbd(t *testing.T) *node {
	t.Helper()
	_, m := testnode.Start(t, "glbd", []string{glbdBin, "serve", "--dns-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--data-dir", t.TempDir()},
		[]string{"GLB_DATABASE_URL=", "GLB_API_TOKEN="}, testnode.Serving)
	return &node{t: t, dns: m[1], api: "http://" + m[2]}
}

// must makes an API call that must succeed and returns its result.
func (n *node) must(method, path string, body any) map[string]any {
	n.t.Helper()
	status, _, raw := testnode.API{Base: n.api}.Do(n.t, method, path, body)
	var out struct {
		Result map[string]any `json:"result"`
	}
	if status/100 != 2 || json.Unmarshal(raw, &out) != nil {
		n.t.Fatalf("%s %s: %d %s", method, path, status, raw)
	}
	return out.Result
}

// query asks glbd directly.
func (n *node) query(name string, qtype uint16) *dns.Msg {
	n.t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, n.dns)
	if err != nil {
		n.t.Fatal(err)
	}
	return r
}

// user is an ACME account.
type user struct {
	key crypto.Signer
	reg *acme.ExtendedAccount
}

func (u *user) GetEmail() string                       { return "" }
func (u *user) GetRegistration() *acme.ExtendedAccount { return u.reg }
func (u *user) GetPrivateKey() crypto.Signer           { return u.key }

// startPebble runs Pebble's ACME server in process, validating DNS-01
// challenges by asking resolver (glbd) alone.
func startPebble(t *testing.T, resolver string) *httptest.Server {
	t.Helper()
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	logger := log.New(io.Discard, "", 0)
	if testing.Verbose() {
		logger = log.New(os.Stderr, "pebble ", log.LstdFlags)
	}
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	// Ports for HTTP-01 and TLS-ALPN-01 are never used: only DNS-01 is
	// offered an answer.
	validator := va.New(logger, 5002, 5001, false, resolver, store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)
	srv := httptest.NewTLSServer(front.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// checkingProvider is lego's dnsupdate provider, and between writing the
// challenge and letting Pebble look, checks that glbd serves it (and,
// in a signed zone, that delv validates it).
type checkingProvider struct {
	*dnsupdate.DNSProvider
	t      *testing.T
	n      *node
	anchor string // delv trust anchor file; "" for an unsigned zone
	seen   []string
}

func (p *checkingProvider) Present(ctx context.Context, domain, token, keyAuth string) error {
	if err := p.DNSProvider.Present(ctx, domain, token, keyAuth); err != nil {
		return err
	}
	info := dns01.GetChallengeInfo(ctx, domain, keyAuth)
	deadline := time.Now().Add(2 * time.Second)
	for {
		r := p.n.query(info.EffectiveFQDN, dns.TypeTXT)
		if len(r.Answer) == 1 && strings.Contains(r.Answer[0].String(), info.Value) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("glbd does not serve the challenge TXT: %v", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.seen = append(p.seen, info.EffectiveFQDN)
	if p.anchor != "" {
		host, port, _ := strings.Cut(p.n.dns, ":")
		out, _ := exec.Command("delv", "@"+host, "-p", port, "-a", p.anchor, "+root=glb.example.com", info.EffectiveFQDN, "TXT").CombinedOutput()
		if !strings.Contains(string(out), "; fully validated\n") || !strings.Contains(string(out), info.Value) {
			return fmt.Errorf("delv does not validate the challenge TXT:\n%s", out)
		}
	}
	return nil
}

// TestACMEDNS01 gets a certificate for a load-balanced name from Pebble
// with lego's RFC 2136 provider writing the challenge into glbd, signed
// with a key granted only _acme-challenge TXT under that name; the
// challenge record is gone afterwards. Once in an unsigned zone, once in
// a DNSSEC-signed one, where delv validates the challenge.
func TestACMEDNS01(t *testing.T) {
	for _, signed := range []bool{false, true} {
		t.Run(map[bool]string{false: "unsigned", true: "signed"}[signed], func(t *testing.T) {
			if signed {
				if _, err := exec.LookPath("delv"); err != nil {
					t.Skip("delv not installed (bind9-dnsutils)")
				}
			}
			n := startGlbd(t)
			zone := n.must("POST", "/api/v1/zones", map[string]any{
				"name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"},
				"records": []map[string]any{{"name": "ns1.glb.example.com", "type": "A", "content": "127.0.0.1"}},
				"dnssec":  map[string]any{"enabled": signed},
			})
			pool := n.must("POST", "/api/v1/pools", map[string]any{"name": "web", "origins": []map[string]any{{"name": "a", "address": "192.0.2.1"}}})
			n.must("POST", "/api/v1/load_balancers", map[string]any{
				"zone": zone["id"], "name": "www.glb.example.com", "default_pools": []any{pool["id"]}, "fallback_pool": pool["id"],
			})
			key := n.must("POST", "/api/v1/tsig_keys", map[string]any{"name": "acme", "algorithm": "hmac-sha256", "grants": []map[string]any{
				{"zone": zone["id"], "name": "www.glb.example.com", "match": "acme-challenge", "types": []string{"TXT"}},
			}})
			anchor := ""
			if signed {
				sec := n.must("GET", "/api/v1/zones/"+zone["id"].(string)+"/dnssec", nil)
				ds, _ := sec["ds"].([]any)
				if len(ds) == 0 {
					t.Fatalf("no DS: %v", sec)
				}
				anchor = writeAnchor(t, ds[0].(string))
			}

			pebble := startPebble(t, n.dns)
			k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			u := &user{key: k}
			cfg := lego.NewConfig(u)
			cfg.CADirURL = pebble.URL + "/dir"
			cfg.HTTPClient = pebble.Client()
			client, err := lego.NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			pc := dnsupdate.NewDefaultConfig()
			pc.Nameserver = n.dns
			pc.Zones = []string{"glb.example.com"}
			pc.TSIGAlgorithm = dns.HmacSHA256
			pc.TSIGKey = "acme"
			pc.TSIGSecret = key["secret"].(string)
			pc.SequenceInterval = 0
			dp, err := dnsupdate.NewDNSProviderConfig(pc)
			if err != nil {
				t.Fatal(err)
			}
			prov := &checkingProvider{DNSProvider: dp, t: t, n: n, anchor: anchor}
			// The provider checked that glbd serves the record; Pebble's
			// validation is the real test.
			if err := client.Challenge.SetDNS01Provider(prov, dns01.PropagationWait(0, true)); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if u.reg, err = client.Registration.Register(ctx, registration.RegisterOptions{TermsOfServiceAgreed: true}); err != nil {
				t.Fatal(err)
			}
			res, err := client.Certificate.Obtain(ctx, certificate.ObtainRequest{Domains: []string{"www.glb.example.com"}, Bundle: true, KeyType: certcrypto.EC256})
			if err != nil {
				t.Fatalf("obtain: %v", err)
			}
			blk, _ := pem.Decode(res.Certificate)
			if blk == nil {
				t.Fatalf("no certificate in %q", res.Certificate)
			}
			cert, err := x509.ParseCertificate(blk.Bytes)
			if err != nil || len(cert.DNSNames) != 1 || cert.DNSNames[0] != "www.glb.example.com" {
				t.Fatalf("certificate for %v: %v", cert.DNSNames, err)
			}
			if len(prov.seen) != 1 || prov.seen[0] != "_acme-challenge.www.glb.example.com." {
				t.Fatalf("challenges written: %v", prov.seen)
			}
			// The challenge is gone from what glbd serves and from the store.
			if r := n.query("_acme-challenge.www.glb.example.com", dns.TypeTXT); r.Rcode != dns.RcodeNameError {
				deadline := time.Now().Add(time.Second)
				for r.Rcode != dns.RcodeNameError && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
					r = n.query("_acme-challenge.www.glb.example.com", dns.TypeTXT)
				}
				if r.Rcode != dns.RcodeNameError {
					t.Fatalf("challenge still served: %v", r)
				}
			}
			z := n.must("GET", "/api/v1/zones/"+zone["id"].(string), nil)
			if recs, _ := json.Marshal(z["records"]); strings.Contains(string(recs), "_acme-challenge") {
				t.Fatalf("challenge left in the store: %s", recs)
			}
			t.Logf("certificate for %v issued by %s, serial %x", cert.DNSNames, cert.Issuer.CommonName, cert.SerialNumber)
		})
	}
}

// writeAnchor writes a delv trust-anchor file holding one DS.
func writeAnchor(t *testing.T, ds string) string {
	t.Helper()
	rr, err := dns.NewRR(ds)
	if err != nil {
		t.Fatal(err)
	}
	d := rr.(*dns.DS)
	body := fmt.Sprintf("trust-anchors {\n  %s static-ds %d %d %d \"%s\";\n};\n", d.Hdr.Name, d.KeyTag, d.Algorithm, d.DigestType, d.Digest)
	p := filepath.Join(t.TempDir(), "anchors.conf")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
