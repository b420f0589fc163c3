package testnode

import "testing"

// GLBD is a started glbd: where its DNS server (host:port) and its API
// (http://host:port) listen.
type GLBD struct {
	*Process
	DNS, API string
}

// StartGLBD starts the glbd at bin as one node on its own: node n1 of
// region WEU, DNS and API on ports the kernel picks, the embedded store in
// a directory of the test's, no database or token from the environment;
// args come after (--api-token, for instance).
func StartGLBD(t testing.TB, bin string, args ...string) GLBD {
	t.Helper()
	argv := append([]string{bin, "serve", "--dns-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--node", "n1", "--region", "WEU"}, args...)
	p, m := Start(t, "glbd", argv, []string{"GLB_DATABASE_URL=", "GLB_API_TOKEN="}, Serving)
	return GLBD{Process: p, DNS: m[1], API: "http://" + m[2]}
}
