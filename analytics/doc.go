// Package analytics counts what the DNS servers answer, by load balancer,
// pool, origin, client region and country and response code, in fixed
// 10-second buckets, and keeps a sample of recent queries: the two things
// the analytics API and the real-traffic preview read.
//
// Both are written on the answer path, so both take no lock and allocate
// nothing there: a count is one atomic add into a fixed open-addressing
// table (claiming an empty cell with one compare-and-swap), and a sampled
// query is copied into a fixed slot. Their memory is fixed when they are
// made, which is their bound. Reading them (Drain, Recent) happens off the
// answer path, on the node's flush loop and the API.
package analytics
