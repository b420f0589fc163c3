// Package xdp answers DNS queries over UDP beside the kernel's socket
// path: an XDP program hands the UDP datagrams addressed to the DNS
// server to one AF_XDP socket per receive queue, and a goroutine per
// queue answers each in place in the frame it arrived in, with the same
// handler as the sockets (a Responder), and sends the reply frame back
// out of the same queue. Everything else (ARP, ICMP, TCP, other ports,
// and the UDP the path does not parse: fragments, IPv4 options, IPv6
// extension headers) goes on to the kernel. Modelled on Knot DNS's XDP
// mode (libknot/xdp).
package xdp

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Responder answers one UDP DNS payload from src into out's array (of
// capacity 65535) and returns the reply, or nil to send nothing. Each
// queue's goroutine has its own.
type Responder interface {
	Respond(query []byte, src netip.Addr, arrived time.Time, out []byte) []byte
}

// Target is a DNS listen address the path answers for.
type Target struct {
	// Addr is the address and port; an unspecified IPv4 address serves
	// every IPv4 destination, an unspecified IPv6 one every destination
	// (a dual-stack socket's IPv4 clients are IPv4-mapped, as there).
	Addr netip.AddrPort
	// NewResponder returns a Responder for one queue.
	NewResponder func() Responder
}

// Config configures the path on one interface.
type Config struct {
	// Interface is the network interface to attach to.
	Interface string
	// Targets are the addresses answered; they share one port.
	Targets []Target
	// Registerer receives the metrics. Default: a private registry.
	Registerer prometheus.Registerer
	// Logger receives attach and detach events. Default slog.Default().
	Logger *slog.Logger
}

type target struct {
	addr         netip.Addr
	any4, any6   bool
	mapped       bool
	newResponder func() Responder
}

func (t *target) serves(dst netip.Addr) bool {
	if dst.Is4() {
		return t.any4 || t.addr == dst
	}
	return t.any6 || t.addr == dst
}

// targets checks cfg's targets and returns them with their common port.
func (cfg *Config) targets() ([]target, uint16, error) {
	if len(cfg.Targets) == 0 {
		return nil, 0, errors.New("no address to answer")
	}
	port := cfg.Targets[0].Addr.Port()
	var out []target
	for _, t := range cfg.Targets {
		if t.Addr.Port() != port {
			return nil, 0, fmt.Errorf("addresses %s and %s: the XDP path answers one port", cfg.Targets[0].Addr, t.Addr)
		}
		if t.NewResponder == nil {
			return nil, 0, fmt.Errorf("address %s: no responder", t.Addr)
		}
		a := t.Addr.Addr().Unmap()
		tt := target{addr: a, newResponder: t.NewResponder}
		if a.IsUnspecified() {
			tt.any4 = true
			if a.Is6() {
				tt.any6, tt.mapped = true, true
			}
		}
		out = append(out, tt)
	}
	return out, port, nil
}
