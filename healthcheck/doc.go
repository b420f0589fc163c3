// Package healthcheck watches the origins of every pool that has a monitor
// and turns what it sees into the health view that steering compiles.
//
// A Checker runs on every node. It probes each (origin, monitor) pair on
// the monitor's interval (http, https, tcp), applies the consecutive_up and
// consecutive_down hysteresis, smooths each origin's round trip, and
// publishes the node's whole view (pools.NodeHealth) as one record on a
// fixed cadence and at once on a state change. Combine folds the views of
// all nodes into the agreed pools.Health: a majority of nodes within a
// region, then a majority of the pool's check regions.
//
// Wiring, in outline:
//
//	c := healthcheck.New(healthcheck.Options{
//		Node: node, Region: region, SourceAddr: checkSource,
//		Publisher: store, Logger: log, Registerer: reg,
//	})
//	c.Update(cfg)       // and again on every configuration change
//	go c.Run(ctx)
//	// on <-c.Changes(), a store health notification, or a timer:
//	views, _ := store.HealthViews(ctx)
//	health := healthcheck.Combine(cfg, append(views, c.View()), time.Now())
//
// Passing this node's own View alongside the stored views makes its own
// changes count before its next publication lands (the newer view of a
// node wins).
package healthcheck
