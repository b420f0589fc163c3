package dnsserver

import "net"

// serveUDP answers one UDP socket until it is closed: in batches, several
// datagrams per system call, where the system offers that (Linux
// recvmmsg/sendmmsg), else one datagram per call.
func (s *Server) serveUDP(c *net.UDPConn) {
	defer s.wg.Done()
	if !s.portableUDP && s.serveUDPBatched(c) {
		return
	}
	s.serveUDPPortable(c)
}
