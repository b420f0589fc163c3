// Package healthcheck watches the origins of every pool that has a monitor
// and turns what it sees into the health view that steering compiles.
//
// A Checker runs on every node. It probes each (origin, monitor) pair on
// the monitor's interval (http, https, tcp), at a fixed phase of the
// interval with the phases spread evenly and a bounded number of checks in
// flight (schedule.go), applies the consecutive_up and
// consecutive_down hysteresis, smooths each origin's round trip, and
// publishes on a fixed cadence and soon after a state change a heartbeat
// with what changed since its last publication (pools.HealthUpdate; see
// Follower). A Tally folds every node's updates into the agreed
// pools.Health: a majority of nodes within a region, then a majority of
// the pool's check regions, recombining only what changed (votes.go states
// the rules).
//
// Wiring, in outline:
//
//	c := healthcheck.New(healthcheck.Options{
//		Node: node, Region: region, SourceAddr: checkSource,
//		Publisher: store, Logger: log, Registerer: reg,
//	})
//	c.Update(cfg)       // and again on every configuration change
//	go c.Run(ctx)
//	tally, own := healthcheck.NewTally(), c.Follow()
//	tally.Configure(cfg) // and again on every configuration change
//	// on <-c.Changes(), a store health notification, or a timer:
//	u, commit := own.Next(time.Now())
//	tally.Apply(u)
//	commit()
//	ups, _ := store.HealthSince(ctx, cursors) // skip our own; keep each u.Cursor
//	for _, u := range ups {
//		tally.Apply(u)
//	}
//	health := tally.Health(time.Now())
//
// Taking this node's own updates from the checker rather than the store
// makes its own changes count before its next publication lands.
package healthcheck
