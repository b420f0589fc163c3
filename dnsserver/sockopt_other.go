//go:build !linux

package dnsserver

import (
	"net"
	"syscall"
)

// reusePort is a no-op where SO_REUSEPORT does not balance UDP: New
// should then be given UDPSockets 1.
func reusePort(_, _ string, _ syscall.RawConn) error { return nil }

func setReadBuffer(c *net.UDPConn, n int) { _ = c.SetReadBuffer(n) }
