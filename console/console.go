// Package console is the operator's web console: plain HTML, CSS and
// JavaScript modules embedded in the binary and served under /ui/. It has
// no server-side logic of its own: the page talks only to the public REST
// API, with the same token, ETags and problem+json errors as a script.
package console

import (
	"embed"
	"io/fs"
	"net/http"
)

// Prefix is where the console is served.
const Prefix = "/ui/"

//go:embed static
var files embed.FS

// Handler serves the console's files under Prefix. No file is secret, so
// it needs no token: the API behind it does.
func Handler() http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	fsrv := http.StripPrefix(Prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The page talks to the API of the same origin only.
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		fsrv.ServeHTTP(w, r)
	})
}

// Mount serves the console at Prefix beside api, which keeps every other
// path; /ui redirects to /ui/, and so does a GET of / (a newcomer opening
// the API's address in a browser is looking for the console, and no API
// path lives at /).
func Mount(api http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(Prefix, Handler())
	mux.Handle("/ui", http.RedirectHandler(Prefix, http.StatusMovedPermanently))
	mux.Handle("GET /{$}", http.RedirectHandler(Prefix, http.StatusFound))
	mux.Handle("/", api)
	return mux
}
