package dnsserver

import (
	"errors"
	"net"
)

// serveUDPPortable reads and answers one datagram per system call each
// way, on any system Go supports.
func (s *Server) serveUDPPortable(c *net.UDPConn) {
	in := make([]byte, 65535)
	w := newWorker()
	w.udp = c
	for {
		n, from, err := c.ReadFromUDPAddrPort(in)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		w.peer = from
		if reply := w.handle(s, in[:n], from.Addr(), false); reply != nil {
			_, _ = c.WriteToUDPAddrPort(reply, from)
		}
	}
}
