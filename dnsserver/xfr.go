package dnsserver

import (
	"net/netip"
	"time"
)

// Transferer serves zone transfers (AXFR, RFC 5936; IXFR, RFC 1995) off
// the answer path. The handler only recognises a transfer request over
// TCP for a served zone and hands the connection's message over.
type Transferer interface {
	// ServeTransfer answers msg, a transfer request from src, writing
	// each message of the answer with write (which frames it); false
	// closes the connection.
	ServeTransfer(msg []byte, src netip.Addr, write func([]byte) error) bool
}

// xfrWriteTimeout bounds the write of one message of a transfer: a
// secondary that reads nothing for that long is dropped.
const xfrWriteTimeout = 30 * time.Second
