package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// validateTLS: the certificate and key come together, and an API beyond
// loopback speaks HTTPS unless --api-insecure-http says otherwise.
func (c *Config) validateTLS() []error {
	var errs []error
	if (c.APITLSCert == "") != (c.APITLSKey == "") {
		errs = append(errs, errors.New("--api-tls-cert and --api-tls-key: give both or neither"))
	}
	host, _, err := net.SplitHostPort(c.APIListen)
	if err == nil && c.APITLSCert == "" && !c.APIInsecureHTTP && !isLoopback(host) {
		errs = append(errs, fmt.Errorf("--api-listen %s is not a loopback address: set --api-tls-cert and --api-tls-key so tokens do not cross the network in clear text, or --api-insecure-http to allow it", c.APIListen))
	}
	return errs
}

// envValue is the default of the flag name: its GLB_* variable read by
// parse, or def when the variable is unset. A value parse refuses is an
// error naming the variable, the value and want, what it should be.
func envValue[T any](env func(string) string, name string, def T, parse func(string) (T, error), want string) (T, error) {
	e := env(envName(name))
	if e == "" {
		return def, nil
	}
	v, err := parse(e)
	if err != nil {
		return def, fmt.Errorf("%s %q: %s", envName(name), e, want)
	}
	return v, nil
}

// durationFlag declares duration flags whose defaults come from their
// GLB_* variables (envValue); a variable that does not parse is added to
// errs, for the check after parsing to report.
func durationFlag(fs *flag.FlagSet, env func(string) string, errs *[]error) func(p *time.Duration, name string, def time.Duration, usage string) {
	return func(p *time.Duration, name string, def time.Duration, usage string) {
		v, err := envValue(env, name, def, time.ParseDuration, "not a duration such as 30s")
		if err != nil {
			*errs = append(*errs, err)
		}
		fs.DurationVar(p, name, v, usage+" (env "+envName(name)+")")
	}
}

// parseRetention reads a Go duration or a number of days ("90d").
func parseRetention(v string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, errors.New("not a number of days")
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, err
		}
	}
	if d <= 0 {
		return 0, errors.New("must be positive")
	}
	return d, nil
}

// certReloader serves the API certificate and reads it again when its
// files change (looked at, at most once a second, on a handshake) or on
// SIGHUP. A handshake takes the certificate current at that moment, so
// open connections carry on undisturbed; a pair that fails to load is
// logged and the previous one kept.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger

	cert      atomic.Pointer[tls.Certificate]
	mu        sync.Mutex // serialises reloads
	stamp     string     // size and mtime of both files when loaded
	lastCheck atomic.Int64
}

func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log.With("component", "api-tls")}
	if err := r.reload(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *certReloader) fileStamp() string {
	var b strings.Builder
	for _, f := range []string{r.certFile, r.keyFile} {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%d/%d;", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// reload reads the pair now.
func (r *certReloader) reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamp := r.fileStamp()
	c, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("api tls: %w", err)
	}
	r.cert.Store(&c)
	r.stamp = stamp
	r.log.Info("API certificate loaded", "cert", r.certFile, "not_after", c.Leaf.NotAfter)
	return nil
}

// reloadLogged reloads, keeping the current pair on failure.
func (r *certReloader) reloadLogged() {
	if err := r.reload(); err != nil {
		r.log.Error("API certificate not reloaded; serving the previous one", "err", err)
	}
}

func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	now := time.Now().UnixNano()
	if last := r.lastCheck.Load(); now-last >= int64(time.Second) && r.lastCheck.CompareAndSwap(last, now) {
		r.mu.Lock()
		changed := r.fileStamp() != r.stamp
		r.mu.Unlock()
		if changed {
			r.reloadLogged()
		}
	}
	return r.cert.Load(), nil
}

// tlsConfig is Go's defaults from TLS 1.2 up, with the reloading
// certificate.
func (r *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.getCertificate}
}
