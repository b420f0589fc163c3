package dnsserver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/dnsserver/dnssec"
	"github.com/glb-dns/glb/dnsserver/tap"
)

// Config configures a Server.
type Config struct {
	// Addr is the UDP and TCP address, host:port; port 0 picks one (tests).
	Addr string
	// UDPSockets is the number of SO_REUSEPORT UDP sockets, each read by
	// its own goroutine. Default defaultUDPSockets(GOMAXPROCS).
	UDPSockets int
	// UDPReadBuffer is the SO_RCVBUF asked for each UDP socket: bursts
	// larger than the kernel default (about 270 queries) are otherwise
	// dropped. Default 4 MiB; the kernel may cap it (net.core.rmem_max).
	UDPReadBuffer int
	// MaxTCPConns bounds concurrent TCP connections. Default 1024.
	MaxTCPConns int
	// TCPIdleTimeout closes a TCP connection with no query for that long
	// (RFC 7766 §6.2.3: a few seconds). Default 5s.
	TCPIdleTimeout time.Duration
	// SignatureCacheSize is how many RRSIGs the signature cache keeps
	// (rounded up to a power of two): its memory bound. Default 65536.
	SignatureCacheSize int
	// Registerer receives the metrics. Default: a private registry.
	Registerer prometheus.Registerer
	// Logger receives start, stop and publication events. Default slog.Default().
	Logger *slog.Logger

	// NSID is this node's identity in NSID options (RFC 5001) and CHAOS
	// TXT id.server. / hostname.bind.; empty tells nothing.
	NSID string
	// VersionString answers CHAOS TXT version.bind.; empty: REFUSED.
	VersionString string
	// RRL is response rate limiting; the zero value is off.
	RRL RRLConfig
	// Transfers serves AXFR and IXFR over TCP (xfr.go); nil refuses them.
	Transfers Transferer
	// Updates takes RFC 2136 UPDATE messages signed with a TSIG key
	// (rfc2136.go); nil answers them NOTIMP like any opcode but QUERY.
	Updates UpdateStore
	// Tap sends a sample of the exchanges as dnstap messages; nil taps
	// nothing.
	Tap *tap.Tap
	// Counts counts the load balancers' answers for the analytics API
	// (several servers may share one); nil counts nothing.
	Counts *analytics.Counts
	// Sample keeps recent load balancer queries for the real-traffic
	// preview (several servers may share one); nil keeps none.
	Sample *analytics.Sample
	// RUMTokens records the RUM beacon names asked for without ECS, and
	// makes the rum subtree of every zone exist (rum.go); nil: neither.
	RUMTokens RUMTokens
	// UDPPath is how UDP sockets are read and answered: UDPBatched (the
	// default), UDPReader or UDPPortable.
	UDPPath string
}

// UDP paths (Config.UDPPath). Where the system has no batched calls
// (recvmmsg and sendmmsg: Linux), every path is UDPPortable.
const (
	// UDPBatched reads and answers several datagrams per system call and
	// sends through a send-only twin of each socket, so that reading and
	// sending do not queue on one socket's lock.
	UDPBatched = "batched"
	// UDPReader is UDPBatched sending through the socket that read, for a
	// kernel or sandbox that refuses the twins.
	UDPReader = "reader"
	// UDPPortable takes one datagram per system call.
	UDPPortable = "portable"
)

// Server is an authoritative DNS server answering from the snapshot last
// published. Queries are handled on the goroutine that read them, each
// UDP socket and each TCP connection in turn: the handler never blocks.
type Server struct {
	cfg        Config
	log        *slog.Logger
	metrics    *metrics
	edge       *edge
	live       atomic.Pointer[live]
	sigs       *dnssec.Cache
	sigMetrics *signingMetrics
	// replays holds the answers to recent signed UPDATEs by their MACs
	// (tsig_replay.go); commits queues the UPDATEs of each zone
	// (rfc2136_commit.go).
	replays replayCache
	commits committers
	// keys caches TSIG keys per snapshot revision (tsig_keys.go).
	keys atomic.Pointer[keyCache]
	// handOffs counts the messages answered on goroutines of their own
	// (handoff.go).
	handOffs chan struct{}

	pubMu sync.Mutex

	udp []*net.UDPConn
	// udpSend holds, until Start hands each to its reader, the send-only
	// twins of the UDP sockets (udp_twin_linux.go); nil where there are none.
	udpSend []int
	tcp     net.Listener
	addr    netip.AddrPort

	mu    sync.Mutex
	conns map[net.Conn]*tcpConn
	// tcpOpen counts open connections for the idle timeout (tcp_pressure.go).
	tcpOpen atomic.Int64
	closed  bool
	wg      sync.WaitGroup
}

// live is a published snapshot with its metric children bound.
type live struct {
	snap *Snapshot
	lbm  []*lbMetrics
	// counted: answers are counted (Config.Counts), under epoch.
	counted bool
	epoch   uint16
}

// defaultUDPSockets is two sockets per CPU the runtime uses, or one where
// it uses one. Measured rather than derived: beside a busy client on the
// same two CPUs, four readers answered about 5 % more queries than two
// over four runs against dnsperf (-1 % to +9 % per query set and run): a
// reader's CPU has another socket to answer while it waits for its own.
// On one CPU a second reader cost 4 %.
func defaultUDPSockets(procs int) int {
	if procs <= 1 {
		return 1
	}
	return 2 * procs
}

// New validates cfg and registers the metrics. Nothing listens until Start.
func New(cfg Config) (*Server, error) {
	switch cfg.UDPPath {
	case "":
		cfg.UDPPath = UDPBatched
	case UDPBatched, UDPReader, UDPPortable:
	default:
		return nil, fmt.Errorf("dnsserver: UDP path %q: want %s, %s or %s", cfg.UDPPath, UDPBatched, UDPReader, UDPPortable)
	}
	if cfg.UDPSockets <= 0 {
		cfg.UDPSockets = defaultUDPSockets(runtime.GOMAXPROCS(0))
	}
	if cfg.UDPReadBuffer <= 0 {
		cfg.UDPReadBuffer = 4 << 20
	}
	if cfg.MaxTCPConns <= 0 {
		cfg.MaxTCPConns = 1024
	}
	if cfg.TCPIdleTimeout <= 0 {
		cfg.TCPIdleTimeout = 5 * time.Second
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("dnsserver: metrics: %w", err)
	}
	sm, err := newSigningMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("dnsserver: metrics: %w", err)
	}
	e, err := newEdge(&cfg, cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("dnsserver: %w", err)
	}
	return &Server{
		cfg: cfg, log: cfg.Logger.With("component", "dns"), metrics: m, edge: e,
		sigs: dnssec.NewCache(cfg.SignatureCacheSize, dnssec.Policy{}, sm.counters()), sigMetrics: sm,
		conns: map[net.Conn]*tcpConn{}, handOffs: make(chan struct{}, maxHandOffs),
	}, nil
}

// Publish makes snap the one every following query reads.
func (s *Server) Publish(snap *Snapshot) {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	prev := s.live.Load()
	lv, kept, bound := s.metrics.bind(prev, snap)
	if s.cfg.Counts != nil {
		lv.counted, lv.epoch = true, s.cfg.Counts.Register(snap.names, time.Now())
	}
	s.live.Store(lv)
	s.metrics.unbind(prev, kept, bound)
	s.metrics.snapshots.Inc()
	s.log.Info("dns snapshot published", "revision", snap.steer.Revision(), "zones", len(snap.zones), "load_balancers", len(snap.lbs))
}

// Addr is the bound address (UDP and TCP), valid after Start.
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Start binds the UDP sockets and the TCP listener on one address and
// starts serving. It returns once every socket is bound, so a query sent
// after it returns is received.
func (s *Server) Start(ctx context.Context) error {
	ap, err := netip.ParseAddrPort(s.cfg.Addr)
	if err != nil {
		host, port, serr := net.SplitHostPort(s.cfg.Addr)
		if serr != nil {
			return fmt.Errorf("dnsserver: listen address %q: %w", s.cfg.Addr, err)
		}
		a, err := net.ResolveUDPAddr("udp", net.JoinHostPort(host, port))
		if err != nil {
			return fmt.Errorf("dnsserver: listen address %q: %w", s.cfg.Addr, err)
		}
		ap = a.AddrPort()
	}
	// With port 0 the first socket picks the port and the others join it;
	// if another process holds that TCP port, try another.
	var lastErr error
	for range 8 {
		if lastErr = s.bind(ctx, ap); lastErr == nil {
			break
		}
		s.closeListeners()
		if ap.Port() != 0 {
			break
		}
	}
	if lastErr != nil {
		return lastErr
	}
	send := s.udpSend
	s.udpSend = nil
	for i, c := range s.udp {
		sendFD := -1
		if send != nil {
			sendFD = send[i]
		}
		s.wg.Add(1)
		go s.serveUDP(c, sendFD)
	}
	s.wg.Add(1)
	go s.serveTCP(s.tcp)
	s.log.Info("dns listening", "addr", s.addr.String(), "udp_sockets", len(s.udp), "max_tcp_conns", s.cfg.MaxTCPConns)
	return nil
}

func (s *Server) bind(ctx context.Context, ap netip.AddrPort) error {
	if ap.Port() != 0 {
		if err := portFree(ctx, ap); err != nil {
			return err
		}
	}
	lc := net.ListenConfig{Control: reusePort}
	s.udp = nil
	for i := range s.cfg.UDPSockets {
		addr := ap
		if i > 0 {
			addr = s.addr
		}
		pc, err := lc.ListenPacket(ctx, "udp", addr.String())
		if err != nil {
			return err // names "listen udp" and the address
		}
		c := pc.(*net.UDPConn)
		setReadBuffer(c, s.cfg.UDPReadBuffer)
		s.udp = append(s.udp, c)
		if i == 0 {
			s.addr = c.LocalAddr().(*net.UDPAddr).AddrPort()
		}
	}
	if s.cfg.UDPPath == UDPBatched {
		s.udpSend = sendTwins(s.udp)
	}
	l, err := lc.Listen(ctx, "tcp", s.addr.String())
	if err != nil {
		return err // names "listen tcp" and the address
	}
	s.tcp = l
	return nil
}

// portFree refuses an address another process serves. Its sockets would
// share the port with ours through SO_REUSEPORT, of the same user, and
// take queries: from a stale node silently, or, with the readers' steering
// program (udp_twin_linux.go), queries could be handed to a twin once that
// process exits. A socket without SO_REUSEPORT binds only a free port.
func portFree(ctx context.Context, ap netip.AddrPort) error {
	var lc net.ListenConfig
	inUse := func(err error) error {
		// err is a *net.OpError that already names the network and address.
		return fmt.Errorf("%w (is another DNS server running there?)", err)
	}
	pc, err := lc.ListenPacket(ctx, "udp", ap.String())
	if err != nil {
		return inUse(err)
	}
	_ = pc.Close()
	l, err := lc.Listen(ctx, "tcp", ap.String())
	if err != nil {
		return inUse(err)
	}
	return l.Close()
}

func (s *Server) closeListeners() {
	closeFDs(s.udpSend)
	s.udpSend = nil
	for _, c := range s.udp {
		_ = c.Close()
	}
	if s.tcp != nil {
		_ = s.tcp.Close()
	}
}

func (s *Server) serveTCP(l net.Listener) {
	defer s.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond) // EMFILE and the like: do not spin
			continue
		}
		s.mu.Lock()
		if s.closed || !s.admitLocked() {
			s.mu.Unlock()
			_ = c.Close()
			continue
		}
		tc := &tcpConn{c: c}
		tc.idleSince.Store(time.Now().UnixNano())
		s.conns[c] = tc
		s.mu.Unlock()
		s.tcpOpen.Add(1)
		s.metrics.tcpConns.Inc()
		s.wg.Add(1)
		go s.serveConn(tc)
	}
}

// serveConn answers the queries of one TCP connection in order (RFC 7766
// §6.2.1.1 allows that; pipelined queries are read as they come).
func (s *Server) serveConn(tc *tcpConn) {
	c := tc.c
	defer func() {
		_ = c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.tcpOpen.Add(-1)
		s.metrics.tcpConns.Dec()
		s.wg.Done()
	}()
	src := netip.Addr{}
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		src = a.AddrPort().Addr()
	}
	in := make([]byte, 65535)
	out := make([]byte, 2, 65535+2)
	w := &worker{out: out[2:2]}
	var lenBuf [2]byte
	for {
		tc.busy.Store(false)
		if err := c.SetReadDeadline(time.Now().Add(s.tcpIdleTimeout())); err != nil {
			return
		}
		if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
			return
		}
		tc.busy.Store(true)
		n := int(binary.BigEndian.Uint16(lenBuf[:]))
		if _, err := io.ReadFull(c, in[:n]); err != nil {
			return
		}
		reply := w.handle(s, in[:n], src, true)
		tc.idleSince.Store(time.Now().UnixNano())
		if w.xfr {
			w.xfr = false
			if !s.cfg.Transfers.ServeTransfer(in[:n], src, func(m []byte) error {
				_ = c.SetWriteDeadline(time.Now().Add(xfrWriteTimeout))
				msg := append(out[:2], m...)
				binary.BigEndian.PutUint16(msg, uint16(len(m)))
				_, err := c.Write(msg)
				return err
			}) {
				return
			}
			tc.idleSince.Store(time.Now().UnixNano())
			continue
		}
		if reply == nil {
			continue
		}
		// One write for length and message. The reply was built in place
		// after two reserved bytes, so the append copies it onto itself.
		msg := append(out[:2], reply...)
		binary.BigEndian.PutUint16(msg, uint16(len(reply)))
		_ = c.SetWriteDeadline(time.Now().Add(s.cfg.TCPIdleTimeout))
		if _, err := c.Write(msg); err != nil {
			return
		}
	}
}

// Shutdown stops listening, lets each TCP connection finish the query it
// is answering, and waits for every goroutine or ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.closeListeners()
	for c := range s.conns {
		// Unblock the read; a reply being written still goes out.
		_ = c.SetReadDeadline(time.Now())
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.log.Info("dns stopped")
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
