//go:build !linux

package dnsserver

import "net"

// serveUDPBatched reports that this system has no batched UDP path.
func (s *Server) serveUDPBatched(*net.UDPConn) bool { return false }
