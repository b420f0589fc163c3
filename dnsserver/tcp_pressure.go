package dnsserver

import (
	"net"
	"sync/atomic"
	"time"
)

// TCP under pressure (RFC 7766 §6.2.3). Connections are cheap to open and
// to hold idle, so a fixed limit with a fixed idle timeout lets anyone
// lock TCP out, and with it every client that UDP truncation (or RRL's
// slip) sends there. At the limit the longest-idle connection is closed
// to admit the new one, and the idle timeout shrinks as the table fills.

// tcpConn is what admission knows of an open connection.
type tcpConn struct {
	c net.Conn
	// idleSince is when the connection last finished a reply (unix ns);
	// busy while a query is being read or answered.
	idleSince atomic.Int64
	busy      atomic.Bool
}

// minTCPIdle is the idle timeout of a full table.
const minTCPIdle = 250 * time.Millisecond

// tcpIdleTimeout is the configured idle timeout while at most half the
// connections are open, shrinking linearly to minTCPIdle at the limit.
func (s *Server) tcpIdleTimeout() time.Duration {
	base, max := s.cfg.TCPIdleTimeout, s.cfg.MaxTCPConns
	open := int(s.tcpOpen.Load())
	if open*2 <= max || base <= minTCPIdle {
		return base
	}
	// fill in (0.5, 1]: base at half, minTCPIdle at full.
	frac := float64(open*2-max) / float64(max)
	return max2(minTCPIdle, base-time.Duration(frac*float64(base-minTCPIdle)))
}

func max2(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

// admitLocked makes room for one more connection, closing the
// longest-idle one at the limit; false when every connection is busy.
// s.mu is held.
func (s *Server) admitLocked() bool {
	if len(s.conns) < s.cfg.MaxTCPConns {
		return true
	}
	var victim *tcpConn
	for _, tc := range s.conns {
		if tc.busy.Load() {
			continue
		}
		if victim == nil || tc.idleSince.Load() < victim.idleSince.Load() {
			victim = tc
		}
	}
	if victim == nil {
		return false
	}
	// Its goroutine sees the read fail and ends; the slot is free now.
	delete(s.conns, victim.c)
	_ = victim.c.Close()
	s.edge.m.tcpEvicted.Inc()
	return true
}
