package dnsserver

// UPDATEs and signed queries need the store (keys, zones) and may wait
// for it, or for the UPDATEs before them, for seconds. A UDP reader hands
// them to a goroutine of their own, which answers through the same
// socket, so that the queries behind them on that socket are answered
// meanwhile and the UPDATEs of several clients reach their zone's
// committer together (rfc2136_commit.go). TCP connections have a
// goroutine each and answer them in line.

// maxHandOffs bounds the messages answered on goroutines of their own at
// once; past it a reader answers them in line, which slows that socket's
// queries rather than dropping anything.
const maxHandOffs = 1024

// handOff answers msg, read by w's UDP reader, on a goroutine of its own
// and reports true, or reports false when too many are out already.
func (s *Server) handOff(w *worker, msg []byte) bool {
	select {
	case s.handOffs <- struct{}{}:
	default:
		return false
	}
	m := append([]byte(nil), msg...)
	c, peer := w.udp, w.peer
	go func() {
		defer func() { <-s.handOffs }()
		hw := newWorker()
		if reply := hw.handle(s, m, peer.Addr(), false); len(reply) > 0 {
			_, _ = c.WriteToUDPAddrPort(reply, peer)
		}
	}()
	return true
}
