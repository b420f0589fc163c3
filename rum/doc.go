// Package rum collects real user measurements: browsers running the
// beacon (beacon.js) time each pool's probe object and report; rum checks
// the reports (site key, size, a rate per client network, values in
// range), keeps them only as histograms per (client network, pool) with
// addresses cut to their /24 or /48 before anything is kept, and
// aggregates the histograms every node wrote to the store into the
// ranking table steering's measured_latency reads from the snapshot.
// It also learns which client networks sit behind a resolver, from the
// beacon's unique-name lookups (Tokens) joined with the reports.
//
// Nothing here runs on the DNS answer path but Tokens.See, which takes
// no lock and allocates nothing.
package rum
