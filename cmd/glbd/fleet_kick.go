package main

import (
	"context"

	"github.com/glb-dns/glb/pools"
)

// ownDrain is the store the node's API writes through: a drain or an
// undrain of this node asked through its own API reaches the node at
// once rather than at its next report (up to a second later), so that
// its routes move within the second. A drain asked through another
// node's API still waits for that report.
type ownDrain struct {
	pools.Store
	node string
	kick chan<- struct{}
}

func (s ownDrain) DrainNode(ctx context.Context, name string, d *pools.NodeDrain) (pools.NodeRecord, error) {
	r, err := s.Store.DrainNode(ctx, name, d)
	if err == nil && name == s.node {
		select {
		case s.kick <- struct{}{}:
		default: // a report is due already
		}
	}
	return r, err
}
