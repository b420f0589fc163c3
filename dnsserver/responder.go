package dnsserver

import (
	"net/netip"
	"time"
)

// Responder answers UDP queries that reach the server by a path other
// than its own sockets (the AF_XDP path, dnsserver/xdp) exactly as its
// UDP sockets do: the same handler, so RRL, cookies, NSID, DNSSEC and ECS
// alike. It is one reading goroutine's state: not for concurrent use.
type Responder struct {
	s *Server
	w *worker
}

// NewResponder returns a Responder answering from s's snapshots.
func (s *Server) NewResponder() *Responder {
	return &Responder{s: s, w: newWorker()}
}

// Respond answers the UDP payload query from src into out's array and
// returns the reply, or nil to send nothing. arrived is when the batch
// holding the query was read (the clock is read once per batch). out
// must have a capacity of 65535 bytes for nothing to be allocated.
func (r *Responder) Respond(query []byte, src netip.Addr, arrived time.Time, out []byte) []byte {
	r.w.out = out[:0]
	r.w.arrived = arrived
	return r.w.handle(r.s, query, src, false)
}
