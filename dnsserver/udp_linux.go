//go:build linux

package dnsserver

import (
	"net"
	"net/netip"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// udpBatch is how many datagrams one recvmmsg may return and one
	// sendmmsg may send. A read never waits to fill it: the batch is what
	// the socket held, so a lone query is answered as soon as it arrives.
	udpBatch = 32
	// udpDatagram is the largest datagram read, as on the portable path,
	// so that both hand the handler the same bytes.
	udpDatagram = 65535
)

// batchIO is one socket's reusable recvmmsg/sendmmsg state. It lives on
// the heap and is never moved, so the kernel may be given pointers into
// it; the pointers are Go pointers, so the buffers stay reachable.
type batchIO struct {
	rhdr  [udpBatch]unix.Mmsghdr
	riov  [udpBatch]unix.Iovec
	names [udpBatch]unix.RawSockaddrInet6 // large enough for IPv4 too
	shdr  [udpBatch]unix.Mmsghdr
	siov  [udpBatch]unix.Iovec
	in    [udpBatch][]byte
	out   [udpBatch][]byte

	n     int        // datagrams the last read returned
	rerr  unix.Errno // error of the last read
	nsend int        // replies queued in shdr
	sent  int        // replies of shdr handed to the kernel so far
	recv  func(uintptr) bool
	send  func(uintptr) bool
}

func newBatchIO() *batchIO {
	b := &batchIO{}
	in := make([]byte, udpBatch*udpDatagram)
	out := make([]byte, udpBatch*udpDatagram)
	for i := range udpBatch {
		b.in[i] = in[i*udpDatagram : (i+1)*udpDatagram : (i+1)*udpDatagram]
		b.out[i] = out[i*udpDatagram : i*udpDatagram : (i+1)*udpDatagram]
		b.riov[i].Base = &b.in[i][0]
		b.riov[i].SetLen(udpDatagram)
		h := &b.rhdr[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		h.Iov = &b.riov[i]
		h.SetIovlen(1)
	}
	// Method values made once: a closure per call would allocate.
	b.recv = b.recvmmsg
	b.send = b.sendmmsg
	return b
}

// recvmmsg reads what the socket holds, up to udpBatch datagrams. It
// returns false only when there is nothing to read, so that the runtime
// parks the goroutine until the socket is readable.
func (b *batchIO) recvmmsg(fd uintptr) bool {
	for i := range udpBatch {
		b.rhdr[i].Hdr.Namelen = unix.SizeofSockaddrInet6
		b.rhdr[i].Hdr.Flags = 0
	}
	for {
		// A raw system call: the socket is non-blocking, so the call
		// cannot block and the scheduler need not hand off the P.
		n, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.rhdr[0])), udpBatch, unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		case 0:
			b.n, b.rerr = int(n), 0
		default:
			b.n, b.rerr = 0, e
		}
		return true
	}
}

// sendmmsg sends the queued replies, returning false when the socket's
// send buffer is full so that the runtime waits until it drains. A reply
// the kernel refuses is skipped: to the client it is a lost datagram.
func (b *batchIO) sendmmsg(fd uintptr) bool {
	for b.sent < b.nsend {
		n, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.shdr[b.sent])), uintptr(b.nsend-b.sent), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			b.sent += int(n)
		case unix.EINTR:
		case unix.EAGAIN:
			return false
		default:
			b.sent++
		}
	}
	return true
}

// flush sends the queued replies through twin, the reading socket's
// send-only twin (-1: none). What the twin has no room for, or everything
// where there is none, goes through the reading socket, whose writes the
// runtime can wait on.
func (b *batchIO) flush(s *Server, rc syscall.RawConn, twin int) error {
	if twin >= 0 {
		b.sendmmsg(uintptr(twin))
	}
	if b.sent == b.nsend {
		return nil
	}
	s.metrics.readerReplies.Add(float64(b.nsend - b.sent))
	return rc.Write(b.send)
}

// source is the sender of datagram i, as the portable path reports it
// (an IPv4 sender on an IPv6 socket is IPv4-mapped) but without a zone.
func (b *batchIO) source(i int) netip.AddrPort {
	sa := &b.names[i]
	if sa.Family == unix.AF_INET {
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), netPort(sa4.Port))
	}
	return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), netPort(sa.Port))
}

// netPort reads a port as a sockaddr holds it, in network byte order.
func netPort(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}

// queue adds reply, answering datagram i, to the next sendmmsg.
func (b *batchIO) queue(i int, reply []byte) {
	k := b.nsend
	b.siov[k].Base = &reply[0]
	b.siov[k].SetLen(len(reply))
	h := &b.shdr[k].Hdr
	h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
	h.Namelen = b.rhdr[i].Hdr.Namelen
	h.Iov = &b.siov[k]
	h.SetIovlen(1)
	b.nsend++
}

// answer handles the datagrams of the last read, each into its own
// buffer, and queues the replies.
func (b *batchIO) answer(s *Server, w *worker) {
	b.nsend, b.sent = 0, 0
	for i := range b.n {
		w.out = b.out[i][:0]
		w.peer = b.source(i)
		if reply := w.handle(s, b.in[i][:b.rhdr[i].Len], w.peer.Addr(), false); len(reply) > 0 {
			b.queue(i, reply)
		}
	}
}

// serveUDPBatched answers c with recvmmsg and sendmmsg until c is closed,
// sending through sendFD where it is a twin (not -1). It returns false,
// having answered nothing, where the kernel lacks them.
func (s *Server) serveUDPBatched(c *net.UDPConn, sendFD int) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	b := newBatchIO()
	w := newWorker()
	w.udp = c
	s.metrics.udpBatched.Inc()
	defer s.metrics.udpBatched.Dec()
	for {
		if err := rc.Read(b.recv); err != nil {
			return true // closed
		}
		if b.rerr != 0 {
			if b.rerr == unix.ENOSYS {
				return false
			}
			continue
		}
		w.arrived = time.Now()
		b.answer(s, w)
		if err := b.flush(s, rc, sendFD); err != nil {
			return true
		}
	}
}
