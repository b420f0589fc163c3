package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// selfSigned writes a fresh self-signed certificate for 127.0.0.1 and its
// key to certFile and keyFile (replacing them atomically, as a deploy
// tool would) and returns the certificate's PEM, its own CA.
func selfSigned(t *testing.T, certFile, keyFile, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:        true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	for f, b := range map[string][]byte{certFile: certPEM, keyFile: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})} {
		if err := os.WriteFile(f+".new", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(f+".new", f); err != nil {
			t.Fatal(err)
		}
	}
	return certPEM
}

// sameStamp replaces the pair with a new one of the same sizes and
// modification times.
func sameStamp(t *testing.T, certFile, keyFile, cn string) []byte {
	t.Helper()
	stat := func(f string) os.FileInfo {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	oldCert, oldKey := stat(certFile), stat(keyFile)
	dir := t.TempDir()
	for range 100 {
		c, k := filepath.Join(dir, "c"), filepath.Join(dir, "k")
		ca := selfSigned(t, c, k, cn)
		if stat(c).Size() != oldCert.Size() || stat(k).Size() != oldKey.Size() {
			continue
		}
		for _, mv := range []struct {
			from, to string
			old      os.FileInfo
		}{{c, certFile, oldCert}, {k, keyFile, oldKey}} {
			if err := os.Chtimes(mv.from, mv.old.ModTime(), mv.old.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(mv.from, mv.to); err != nil {
				t.Fatal(err)
			}
		}
		return ca
	}
	t.Fatal("no certificate of the same size in 100 tries")
	return nil
}

// curl runs curl and returns the status code and body.
func curl(t *testing.T, args ...string) (string, string) {
	t.Helper()
	out, err := exec.Command("curl", append([]string{"-sS", "--max-time", "5", "-w", "\n%{http_code}"}, args...)...).CombinedOutput()
	s := strings.TrimRight(string(out), "\n")
	i := strings.LastIndex(s, "\n")
	if i < 0 {
		return s, ""
	}
	if err != nil {
		return s[i+1:], s[:i] + " (" + err.Error() + ")"
	}
	return s[i+1:], s[:i]
}

func caPool(pems ...[]byte) *x509.CertPool {
	p := x509.NewCertPool()
	for _, b := range pems {
		p.AppendCertsFromPEM(b)
	}
	return p
}

// keepAlive is one HTTP/1.1 connection kept open across requests.
type keepAlive struct {
	conn *tls.Conn
	rd   *bufio.Reader
}

func (k *keepAlive) get(t *testing.T, path string) int {
	t.Helper()
	if _, err := k.conn.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
		t.Fatalf("write on the open connection: %v", err)
	}
	resp, err := http.ReadResponse(k.rd, nil)
	if err != nil {
		t.Fatalf("read on the open connection: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestAPIOverTLS: the API speaks HTTPS with a certificate made here,
// checked by curl --cacert; a new certificate is served after SIGHUP and
// after its files change, while a connection opened before keeps working.
func TestAPIOverTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "api.pem"), filepath.Join(dir, "api.key")
	caA := selfSigned(t, certFile, keyFile, "glb-a")
	caFile := filepath.Join(dir, "ca-a.pem")
	if err := os.WriteFile(caFile, caA, 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGlbd(t, "", "--api-tls-cert", certFile, "--api-tls-key", keyFile, "--api-token", "bootstrap-secret")
	if !strings.Contains(g.logs.String(), "api_scheme=https") {
		t.Fatalf("glbd does not say it serves HTTPS:\n%s", g.logs.String())
	}
	host := strings.TrimPrefix(g.api, "http://")
	base := "https://" + host
	if code, body := curl(t, "--cacert", caFile, "-H", "Authorization: Bearer bootstrap-secret", base+"/api/v1/zones"); code != "200" {
		t.Fatalf("curl --cacert GET /api/v1/zones: %s %s", code, body)
	}
	if code, _ := curl(t, "--cacert", caFile, base+"/api/v1/zones"); code != "401" {
		t.Errorf("without a token over HTTPS: %s", code)
	}
	if code, _ := curl(t, "http://"+host+"/healthz"); code == "200" {
		t.Error("plain HTTP answered on the HTTPS port")
	}

	conn, err := tls.Dial("tcp", host, &tls.Config{RootCAs: caPool(caA)})
	if err != nil {
		t.Fatalf("TLS handshake with certificate A: %v", err)
	}
	defer conn.Close()
	if v := conn.ConnectionState().Version; v < tls.VersionTLS12 {
		t.Errorf("TLS version %x", v)
	}
	open := &keepAlive{conn: conn, rd: bufio.NewReader(conn)}
	if code := open.get(t, "/healthz"); code != 200 {
		t.Fatalf("healthz: %d", code)
	}

	servedBy := func(ca []byte) func() (bool, string) {
		return func() (bool, string) {
			c, err := tls.Dial("tcp", host, &tls.Config{RootCAs: caPool(ca)})
			if err != nil {
				return false, err.Error()
			}
			c.Close()
			return true, ""
		}
	}
	// Certificate B takes A's file sizes and times, so that only the
	// signal can tell glbd to read it again.
	caB := sameStamp(t, certFile, keyFile, "glb-b")
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// Only the signal can make B served, however long it takes: the
	// deadlines are a loaded machine's (TLS handshakes of a -race build).
	took := eventually(t, 10*time.Second, "certificate B served after SIGHUP", servedBy(caB))
	t.Logf("certificate B served %v after SIGHUP", took)
	if code := open.get(t, "/healthz"); code != 200 {
		t.Errorf("the connection opened before the reload: %d", code)
	}

	caC := selfSigned(t, certFile, keyFile, "glb-c")
	took = eventually(t, 10*time.Second, "certificate C served after its files changed", servedBy(caC))
	t.Logf("certificate C served %v after its files changed, without a signal", took)
	if code := open.get(t, "/healthz"); code != 200 {
		t.Errorf("the connection opened before both reloads: %d", code)
	}
}

// TestPlainHTTPBeyondLoopbackRefusedAtStart: glbd will not serve tokens
// over plain HTTP to the network unless told so explicitly.
func TestPlainHTTPBeyondLoopbackRefusedAtStart(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(glbdBin, "serve", "--api-listen", "192.0.2.1:8443", "--api-token", "x",
		"--dns-listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "GLB_DATABASE_URL=")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errAs(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit %v, want status 2; output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "--api-tls-cert") || !strings.Contains(string(out), "--api-insecure-http") || strings.Contains(string(out), "glbd serving") {
		t.Errorf("output does not explain the refusal:\n%s", out)
	}
}

func errAs(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

// TestScopedTokensAcrossNodes: two nodes of one PostgreSQL. A read token
// made on one node can read and explain on the other but not write nor
// manage tokens; revoked on the first, the second refuses it within a
// second. The secret appears in no answer but the one that created it, in
// no log line and nowhere in the database.
func TestScopedTokensAcrossNodes(t *testing.T) {
	t.Parallel()
	url := freshDatabase(t)
	a := startGlbd(t, "", "--database-url", url, "--api-token", "bootstrap-secret", "--node", "a")
	b := startGlbd(t, "", "--database-url", url, "--api-token", "bootstrap-secret", "--node", "b", "--migrate=false")
	a.token, b.token = "bootstrap-secret", "bootstrap-secret"
	zone := zoneFor(t, a)
	pool := a.must("POST", "/api/v1/pools", map[string]any{"name": "web", "origins": []map[string]any{{"name": "a", "address": "192.0.2.1"}}})["id"].(string)
	lb := a.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "default_pools": []any{pool}, "fallback_pool": pool,
	})["id"].(string)
	created := a.must("POST", "/api/v1/tokens", map[string]any{"name": "dashboard", "scopes": []string{"read"}})
	secret := created["secret"].(string)

	b.token = secret
	eventually(t, 5*time.Second, "node b serves the load balancer", func() (bool, string) {
		var out map[string]any
		code := b.call("GET", "/api/v1/load_balancers/"+lb+"/explain?client=192.0.2.9", nil, &out)
		return code == http.StatusOK, http.StatusText(code)
	})
	for _, c := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"GET", "/api/v1/pools", nil, 200},
		{"GET", "/api/v1/pools/" + pool + "/health", nil, 200},
		{"GET", "/api/v1/audit", nil, 200},
		{"POST", "/api/v1/networks", map[string]any{"cidr": "10.0.0.0/8"}, 403},
		{"PATCH", "/api/v1/pools/" + pool, map[string]any{"minimum_origins": 1}, 403},
		{"DELETE", "/api/v1/load_balancers/" + lb, nil, 403},
		{"GET", "/api/v1/tokens", nil, 403},
		{"POST", "/api/v1/tokens", map[string]any{"name": "x", "scopes": []string{"admin"}}, 403},
		{"DELETE", "/api/v1/tokens/dashboard", nil, 403},
	} {
		var out map[string]any
		if code := b.call(c.method, c.path, c.body, &out); code != c.want {
			t.Errorf("read token on node b: %s %s = %d %v, want %d", c.method, c.path, code, out, c.want)
		} else if code == 403 && out["missing_scope"] == nil {
			t.Errorf("%s %s: 403 without missing_scope: %v", c.method, c.path, out)
		}
	}

	if code := a.call("DELETE", "/api/v1/tokens/dashboard", nil, nil); code != http.StatusNoContent {
		t.Fatalf("revoke on node a: %d", code)
	}
	took := eventually(t, time.Second, "node b refuses the revoked token", func() (bool, string) {
		code := b.call("GET", "/api/v1/zones", nil, nil)
		return code == http.StatusUnauthorized, http.StatusText(code)
	})
	t.Logf("revoked on node a → 401 on node b after %v", took)

	// Nowhere but in the answer that created it.
	for _, p := range []string{"/api/v1/tokens", "/api/v1/audit?per_page=1000"} {
		var out any
		a.call("GET", p, nil, &out)
		if bs, _ := json.Marshal(out); strings.Contains(string(bs), secret) {
			t.Errorf("GET %s shows the secret", p)
		}
	}
	for name, g := range map[string]*glbd{"a": a, "b": b} {
		if strings.Contains(g.logs.String(), secret) {
			t.Errorf("node %s logged the secret", name)
		}
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `select table_name from information_schema.tables where table_schema = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 5 {
		t.Fatalf("tables %v: %v", tables, err)
	}
	for _, tbl := range tables {
		var n int
		q := "select count(*) from " + pgx.Identifier{tbl}.Sanitize() + " t where strpos(t::text, $1) > 0 or strpos(t::text, encode(convert_to($1, 'UTF8'), 'hex')) > 0"
		if err := conn.QueryRow(context.Background(), q, secret).Scan(&n); err != nil {
			t.Fatalf("%s: %v", tbl, err)
		}
		if n > 0 {
			t.Errorf("table %s holds the secret in %d rows", tbl, n)
		}
	}
}

// TestAuditHealthTransitions: an origin stopped and restarted leaves two
// health entries in the audit log, down then up, each with its reason.
func TestAuditHealthTransitions(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.4.1")
	o := origins[0]
	g := startGlbd(t, "")
	mon := fastMonitor(t, g, o.port())
	pool := g.must("POST", "/api/v1/pools", map[string]any{"name": "web", "monitor": mon, "origins": []map[string]any{
		{"name": "a", "address": o.ip()},
	}})["id"].(string)
	eventually(t, 5*time.Second, "origin checked healthy", func() (bool, string) {
		ph := poolHealth(t, g, pool)
		a := originOf(ph, "a")
		return a.Healthy != nil && *a.Healthy, describeHealth(ph)
	})
	entries := func() []pools.AuditEntry {
		var out struct{ Result []pools.AuditEntry }
		if code := g.call("GET", "/api/v1/audit?kind=health&id="+pool+"/a", nil, &out); code != http.StatusOK {
			t.Fatalf("GET audit: %d", code)
		}
		return out.Result
	}
	if es := entries(); len(es) != 0 {
		t.Fatalf("health entries before any transition: %+v", es)
	}
	transition := func(e pools.AuditEntry) pools.HealthTransition {
		var h pools.HealthTransition
		if err := json.Unmarshal(e.After, &h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	o.stop()
	eventually(t, 10*time.Second, "a down entry", func() (bool, string) {
		es := entries()
		return len(es) == 1, describeHealth(poolHealth(t, g, pool))
	})
	o.start()
	eventually(t, 10*time.Second, "an up entry", func() (bool, string) {
		es := entries()
		return len(es) == 2, describeHealth(poolHealth(t, g, pool))
	})
	es := entries() // newest first
	down, up := transition(es[1]), transition(es[0])
	// The reason is the check's: refused, or closed when the stop cut a
	// check short.
	if down.Healthy || down.Reason == "" || down.Reason == reasonUp || down.Regions[""].Nodes != 1 || down.Node == "" {
		t.Errorf("down entry: %+v", down)
	}
	if !up.Healthy || up.Reason == "" || up.Regions[""].Healthy != 1 {
		t.Errorf("up entry: %+v", up)
	}
	for _, e := range es {
		if e.Actor != pools.ActorCluster || e.Action != pools.ActionHealth || e.Time.IsZero() {
			t.Errorf("entry %+v", e)
		}
	}
	if !es[0].Time.After(es[1].Time) {
		t.Errorf("up at %v not after down at %v", es[0].Time, es[1].Time)
	}
}
