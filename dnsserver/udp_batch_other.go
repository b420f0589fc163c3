//go:build !linux

package dnsserver

import "net"

// serveUDPBatched reports that this system has no batched UDP path.
func (s *Server) serveUDPBatched(*net.UDPConn, int) bool { return false }

// sendTwins: other systems send through the reading sockets.
func sendTwins([]*net.UDPConn) []int { return nil }

func closeFDs([]int) {}
