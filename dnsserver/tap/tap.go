// Package tap sends a sample of the DNS server's queries and replies as
// dnstap messages (the dnstap protobuf schema in Frame Streams) to a Unix
// socket or a TCP address, where CoreDNS's, Knot's and BIND's readers
// and the dnstap command take them.
//
// It is lossy by design: the answer path copies one exchange in Sample
// into a fixed ring without a lock or an allocation, or drops it and
// counts the drop when the ring is full; one goroutine encodes and
// writes. A reader that is slow or never reads costs answers nothing.
package tap

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	dnstap "github.com/dnstap/golang-dnstap"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"
)

// Config says where and how much to tap.
type Config struct {
	// Address is "unix:/path/to/socket" or "tcp:host:port".
	Address string
	// Sample keeps one exchange in Sample (1: every one).
	Sample int
	// Slots bounds the exchanges waiting to be written (default 1024;
	// each takes 4 KiB).
	Slots int
	// Identity and Version fill the dnstap message's fields of the same
	// names: the node and glb's version.
	Identity, Version string
	Logger            *slog.Logger
	Registerer        prometheus.Registerer
}

// DefaultSlots is the ring's size when Config.Slots is zero: 4 MiB.
const DefaultSlots = 1024

// Tap is a running dnstap output. The zero value is not usable; a nil
// *Tap taps nothing.
type Tap struct {
	sample   uint32
	ring     *ring
	out      *output
	identity []byte
	version  []byte
	log      *slog.Logger

	sent, dropped, oversize prometheus.Counter

	stop      chan struct{}
	closeOnce sync.Once
	done      sync.WaitGroup
}

// ParseAddress checks an Address ("unix:PATH" or "tcp:HOST:PORT").
func ParseAddress(s string) (net.Addr, error) {
	kind, rest, ok := strings.Cut(s, ":")
	switch {
	case ok && kind == "unix" && rest != "":
		return &net.UnixAddr{Name: rest, Net: "unix"}, nil
	case ok && kind == "tcp":
		ap, err := netip.ParseAddrPort(rest)
		if err != nil {
			return nil, fmt.Errorf("dnstap address %q: tcp:HOST:PORT with an IP address and a port (%v)", s, err)
		}
		return net.TCPAddrFromAddrPort(ap), nil
	}
	return nil, fmt.Errorf("dnstap address %q: want unix:/path/to/socket or tcp:HOST:PORT", s)
}

// New starts tapping to cfg.Address; the connection is made (and made
// again after a failure) in the background.
func New(cfg Config) (*Tap, error) {
	addr, err := ParseAddress(cfg.Address)
	if err != nil {
		return nil, err
	}
	if cfg.Sample < 1 {
		return nil, fmt.Errorf("dnstap sample %d: must be 1 (every exchange) or more", cfg.Sample)
	}
	if cfg.Slots <= 0 {
		cfg.Slots = DefaultSlots
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	msgs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "glb", Subsystem: "dns", Name: "dnstap_messages_total",
		Help: "Sampled exchanges by what became of them: sent to the dnstap writer, dropped (its queue was full) or oversize (query and reply over 4096 bytes).",
	}, []string{"result"})
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(msgs); err != nil {
			return nil, err
		}
	}
	t := &Tap{
		sample: uint32(cfg.Sample), ring: newRing(cfg.Slots),
		identity: []byte(cfg.Identity), version: []byte(cfg.Version), log: cfg.Logger,
		sent: msgs.WithLabelValues("sent"), dropped: msgs.WithLabelValues("dropped"), oversize: msgs.WithLabelValues("oversize"),
		stop: make(chan struct{}),
	}
	t.out = newOutput(addr, cfg.Logger, t.stop)
	t.done.Add(2)
	go func() { defer t.done.Done(); t.out.run() }()
	go func() { defer t.done.Done(); t.write() }()
	return t, nil
}

// Offer taps the exchange when it is the one in Sample that count (the
// caller's, one per answering goroutine) says; qt is when the query
// arrived. It is on the answer path: no lock, no allocation, no I/O.
func (t *Tap) Offer(count *uint32, query, reply []byte, src netip.Addr, tcp bool, qt time.Time) {
	*count++
	if *count < t.sample {
		return
	}
	*count = 0
	switch {
	case len(query)+len(reply) > maxExchange:
		t.oversize.Inc()
	case !t.ring.put(query, reply, src, tcp, qt):
		t.dropped.Inc()
	}
}

// write encodes what the ring holds and hands it to the Frame Streams
// writer, which may block on a slow reader: the ring then fills and the
// answer path drops.
func (t *Tap) write() {
	defer close(t.out.frames)
	idle := time.NewTicker(5 * time.Millisecond)
	defer idle.Stop()
	for {
		c := t.ring.get()
		if c == nil {
			select {
			case <-t.stop:
				return
			case <-idle.C:
				continue
			}
		}
		b, err := proto.Marshal(t.message(c))
		t.ring.done(c)
		if err != nil {
			t.log.Warn("dnstap: encoding a message", "error", err)
			continue
		}
		select {
		case t.out.frames <- b:
			t.sent.Inc()
		case <-t.stop:
			return
		}
	}
}

// message is the dnstap AUTH_RESPONSE of a cell: the query and the
// reply, with the client's address and both times.
func (t *Tap) message(c *cell) *dnstap.Dnstap {
	family, sp := dnstap.SocketFamily_INET, dnstap.SocketProtocol_UDP
	if c.src.Is6() && !c.src.Is4In6() {
		family = dnstap.SocketFamily_INET6
	}
	if c.tcp {
		sp = dnstap.SocketProtocol_TCP
	}
	mt := dnstap.Message_AUTH_RESPONSE
	qs, qn := uint64(c.qt.Unix()), uint32(c.qt.Nanosecond())
	rs, rn := uint64(c.rt.Unix()), uint32(c.rt.Nanosecond())
	m := &dnstap.Message{
		Type: &mt, SocketFamily: &family, SocketProtocol: &sp,
		QueryAddress: c.src.Unmap().AsSlice(),
		QueryTimeSec: &qs, QueryTimeNsec: &qn,
		QueryMessage:    append([]byte(nil), c.query()...),
		ResponseTimeSec: &rs, ResponseTimeNsec: &rn,
		ResponseMessage: append([]byte(nil), c.reply()...),
	}
	dt := dnstap.Dnstap_MESSAGE
	return &dnstap.Dnstap{Type: &dt, Identity: t.identity, Version: t.version, Message: m}
}

// Close stops tapping: what is queued is dropped, what the writer holds
// is flushed within ctx.
func (t *Tap) Close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.closeOnce.Do(func() { close(t.stop) })
	done := make(chan struct{})
	go func() { t.done.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("dnstap: the reader did not take the last messages: %w", ctx.Err())
	}
}
