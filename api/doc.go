// Package api is glb's REST API: the five configuration resources under
// /api/v1 (zones, monitors, pools, load_balancers, networks), a pool's
// health, a load balancer's explained decision, the OpenAPI document, and
// /healthz, /readyz and /metrics beside them.
//
// Envelope. A single object is returned as {"result": {...}}; a list as
// {"result": [...], "result_info": {"page", "per_page", "count",
// "total_count", "total_pages"}}, the shape Cloudflare's API uses. Errors
// are never enveloped: they are application/problem+json (RFC 9457), built
// in one place (problem.go) from the store's sentinel errors.
//
// Read-only fields. revision, created_on, modified_on and a zone's serial
// are set by the store; values a client sends for them are ignored, so
// that a GET, edit, PUT round trip works unchanged. The id may be given on
// create; on PUT and PATCH it must be absent or equal the id in the path.
// Optimistic concurrency goes through If-Match, never through the body.
//
// Access. Named tokens carry nested scopes (read, write, integrations,
// admin), checked in auth.go from the method and path alone, except a
// rollout's guards (outbound.go), which need integrations by what the body
// asks. A token scoped to zones reaches only their objects (zone_scope.go).
// URLs the nodes will send requests to pass the outbound policy when
// written (outbound.go). The caller goes into the request's context so that
// the store audits each write, in its own transaction, with who made it.
// GET /api/v1/audit reads that history.
package api
