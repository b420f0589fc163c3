package dnsserver

import "net"

// serveUDP answers one UDP socket until it is closed: in batches, several
// datagrams per system call, where the system offers that (Linux
// recvmmsg/sendmmsg), else one datagram per call. sendFD is c's
// send-only twin, or -1; the loop owns it and closes it when it returns.
func (s *Server) serveUDP(c *net.UDPConn, sendFD int) {
	defer s.wg.Done()
	if sendFD >= 0 {
		defer closeFDs([]int{sendFD})
	}
	if s.cfg.UDPPath != UDPPortable && s.serveUDPBatched(c, sendFD) {
		return
	}
	s.serveUDPPortable(c)
}
