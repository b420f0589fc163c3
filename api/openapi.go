package api

import (
	_ "embed"
	"net/http"
)

// openAPI describes every route of New; a test keeps the two equal.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the embedded OpenAPI 3 document.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(openAPI)
}
