package healthcheck

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/glb-dns/glb/pools"
	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// icmpProber sends count echo requests and counts the replies: down when
// more than max_loss percent go unanswered, its RTT the mean of the
// replies'. It uses an unprivileged ICMP datagram socket where the
// kernel allows one (net.ipv4.ping_group_range holds the process's
// group), else a raw socket, which needs CAP_NET_RAW; the kernel then
// hands every ICMP packet to every raw socket, so replies are told apart
// by a random token in their data.
type icmpProber struct {
	address string // IP or hostname
	src     netip.Addr
	timeout time.Duration
	count   int
	maxLoss int
}

// noDatagram remembers, per family (0: IPv4, 1: IPv6), that the kernel
// refused unprivileged ICMP sockets, so that checks go straight to raw
// sockets rather than asking again each time.
var noDatagram [2]atomic.Bool

func newICMPProber(t *target, src netip.Addr) prober {
	return &icmpProber{address: t.address, src: src.Unmap(), timeout: t.timeout,
		count: cmp.Or(t.count, pools.DefaultICMPCount), maxLoss: t.maxLoss}
}

// icmpConn is an open ICMP socket and how to address and read it.
type icmpConn struct {
	*icmp.PacketConn
	v6       bool
	datagram bool
	proto    int
}

// listen opens a socket of dst's family: datagram first, raw after.
func (p *icmpProber) listen(dst netip.Addr) (*icmpConn, error) {
	v6 := dst.Is6()
	fam, local := 0, "0.0.0.0"
	udp, raw, proto := "udp4", "ip4:icmp", 1
	if v6 {
		fam, local = 1, "::"
		udp, raw, proto = "udp6", "ip6:ipv6-icmp", 58
	}
	if p.src.IsValid() && p.src.Is6() == v6 {
		local = p.src.String()
	}
	if !noDatagram[fam].Load() {
		c, err := icmp.ListenPacket(udp, local)
		if err == nil {
			return &icmpConn{PacketConn: c, v6: v6, datagram: true, proto: proto}, nil
		}
		if !errors.Is(err, syscall.EACCES) && !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EPROTONOSUPPORT) {
			return nil, err
		}
		noDatagram[fam].Store(true)
	}
	c, err := icmp.ListenPacket(raw, local)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		return nil, errors.New("ICMP not permitted: allow the group in net.ipv4.ping_group_range or grant CAP_NET_RAW")
	}
	if err != nil {
		return nil, err
	}
	return &icmpConn{PacketConn: c, v6: v6, proto: proto}, nil
}

func (p *icmpProber) attempt(ctx context.Context) result {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	dst, err := p.resolve(ctx)
	if err != nil {
		return result{reason: describe(ctx, err, p.timeout)}
	}
	c, err := p.listen(dst)
	if err != nil {
		return result{reason: describe(ctx, err, p.timeout)}
	}
	defer func() { _ = c.Close() }()
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	var to net.Addr = &net.IPAddr{IP: dst.AsSlice(), Zone: dst.Zone()}
	if c.datagram {
		to = &net.UDPAddr{IP: dst.AsSlice(), Zone: dst.Zone()}
	}
	var token [8]byte
	_, _ = rand.Read(token[:])
	id := int(token[0])<<8 | int(token[1]) // the kernel replaces it on datagram sockets
	var typ icmp.Type = ipv4.ICMPTypeEcho
	if c.v6 {
		typ = ipv6.ICMPTypeEchoRequest
	}
	sent := make([]time.Time, p.count)
	for seq := range p.count {
		msg := icmp.Message{Type: typ, Body: &icmp.Echo{ID: id, Seq: seq, Data: token[:]}}
		b, err := msg.Marshal(nil) // the kernel sums ICMPv6
		if err != nil {
			return result{reason: "ICMP: " + err.Error()}
		}
		sent[seq] = time.Now()
		if _, err := c.WriteTo(b, to); err != nil {
			return result{reason: describe(ctx, err, p.timeout)}
		}
	}

	got := make([]bool, p.count)
	var received int
	var total time.Duration
	buf := make([]byte, 1500)
	for received < p.count {
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil {
				break
			}
			return result{reason: describe(ctx, err, p.timeout)}
		}
		now := time.Now()
		m, err := icmp.ParseMessage(c.proto, buf[:n])
		if err != nil {
			continue
		}
		echo, ok := m.Body.(*icmp.Echo)
		if !ok || (m.Type != ipv4.ICMPTypeEchoReply && m.Type != ipv6.ICMPTypeEchoReply) ||
			string(echo.Data) != string(token[:]) || echo.Seq < 0 || echo.Seq >= p.count || got[echo.Seq] {
			continue // another probe's, a request, or a duplicate
		}
		got[echo.Seq] = true
		received++
		total += now.Sub(sent[echo.Seq])
	}
	lost := p.count - received
	switch {
	case received == 0:
		return result{reason: fmt.Sprintf("no echo reply in %s (%d sent)", p.timeout, p.count)}
	case lost*100 > p.maxLoss*p.count:
		return result{reason: fmt.Sprintf("%d of %d echo requests unanswered, over max_loss %d%%", lost, p.count, p.maxLoss)}
	case lost > 0:
		return result{healthy: true, rtt: total / time.Duration(received),
			reason: fmt.Sprintf("%d of %d echo requests unanswered", lost, p.count)}
	}
	return result{healthy: true, rtt: total / time.Duration(received)}
}

// resolve is the address to ping: the origin's IP, or its name's first
// address (of the source address's family when one is bound).
func (p *icmpProber) resolve(ctx context.Context) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(p.address); err == nil {
		return ip.Unmap(), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", p.address)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, ip := range ips {
		if !p.src.IsValid() || ip.Unmap().Is4() == p.src.Is4() {
			return ip.Unmap(), nil
		}
	}
	return ips[0].Unmap(), nil
}
