package xdp

import (
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// queue answers the frames of one receive queue's AF_XDP socket on one
// goroutine. A frame goes round: fill ring, RX ring, answered in place
// and into the TX ring, completion ring, free list, fill ring again; a
// frame not answered goes straight back to the free list.
type queue struct {
	sock    *socket
	targets []target
	resps   []Responder // one per target, this goroutine's own
	free    []uint64    // chunk addresses no ring holds
	out     []byte      // the handler's reply buffer
	counts  [verdicts]uint64
	m       *queueMetrics
}

func newQueue(sock *socket, targets []target, m *queueMetrics) *queue {
	q := &queue{sock: sock, targets: targets, m: m, out: make([]byte, 0, 65535), free: make([]uint64, 0, numFrames)}
	for _, t := range targets {
		q.resps = append(q.resps, t.newResponder())
	}
	for i := ringSize; i < numFrames; i++ {
		q.free = append(q.free, uint64(i)*frameSize)
	}
	return q
}

// yieldEvery bounds how long a queue goes without passing through the
// scheduler. A goroutine that only ever blocks in poll never does, and the
// runtime's monitor, finding the same goroutine on its P for 10 ms, takes
// the P away in the middle of a poll; each time it does, it goes back to
// checking every 20 µs. Measured at 100,000 queries a second, that monitor
// woke about 2,000 times a second and cost a tenth of the path's CPU;
// yielding twice as often as its limit keeps it at its 10 ms rest.
const yieldEvery = 5 * time.Millisecond

// run serves the socket until stop (an eventfd) becomes readable.
func (q *queue) run(stop int) {
	pfd := []unix.PollFd{{Fd: int32(q.sock.fd), Events: unix.POLLIN}, {Fd: int32(stop), Events: unix.POLLIN}}
	yielded := time.Now()
	for {
		q.complete()
		q.refill()
		if q.receive() > 0 {
			continue
		}
		// Nothing to read: sleep in poll until frames arrive (which also
		// wakes a driver that asked for it) or the path stops.
		if q.sock.pending() {
			q.sock.kick()
		}
		if t := time.Now(); t.Sub(yielded) > yieldEvery {
			runtime.Gosched()
			yielded = t
		}
		pfd[0].Revents, pfd[1].Revents = 0, 0
		if _, err := unix.Poll(pfd, -1); err != nil && err != unix.EINTR {
			return
		}
		if pfd[1].Revents != 0 {
			return
		}
	}
}

// complete takes back the frames whose replies the kernel has sent.
func (q *queue) complete() {
	c := &q.sock.comp
	cons := atomic.LoadUint32(c.consumer)
	prod := atomic.LoadUint32(c.producer)
	for i := cons; i != prod; i++ {
		q.free = append(q.free, *c.addr(i)&^(frameSize-1))
	}
	atomic.StoreUint32(c.consumer, prod)
}

// refill hands free frames to the kernel for receiving.
func (q *queue) refill() {
	f := &q.sock.fill
	prod := atomic.LoadUint32(f.producer)
	room := ringSize - (prod - atomic.LoadUint32(f.consumer))
	k := min(int(room), len(q.free))
	if k == 0 {
		return
	}
	for i := range k {
		*f.addr(prod + uint32(i)) = q.free[len(q.free)-1-i]
	}
	q.free = q.free[:len(q.free)-k]
	atomic.StoreUint32(f.producer, prod+uint32(k))
	if f.needWakeup() {
		_, _, _ = unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(q.sock.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	}
}

// receive answers up to a batch of frames from the RX ring and queues
// the replies in the TX ring, with one index update on each ring and
// one system call to send them. It returns how many frames it took.
func (q *queue) receive() int {
	rx, tx := &q.sock.rx, &q.sock.tx
	cons := atomic.LoadUint32(rx.consumer)
	n := min(atomic.LoadUint32(rx.producer)-cons, batch)
	if n == 0 {
		return 0
	}
	txProd := atomic.LoadUint32(tx.producer)
	txFree := ringSize - (txProd - atomic.LoadUint32(tx.consumer))
	sent := uint32(0)
	now := time.Now()
	for i := range n {
		d := rx.desc(cons + i)
		addr, ln := d.Addr, d.Len
		base := addr &^ (frameSize - 1)
		room := q.sock.umem[addr : base+frameSize]
		v, flen := q.answer(room, int(ln), now)
		if v == answered && sent == txFree {
			v = txFull
		}
		if v == answered {
			*tx.desc(txProd + sent) = unix.XDPDesc{Addr: addr, Len: uint32(flen)}
			sent++
		} else {
			q.free = append(q.free, base)
		}
		q.counts[v]++
	}
	atomic.StoreUint32(rx.consumer, cons+n)
	if sent > 0 {
		atomic.StoreUint32(tx.producer, txProd+sent)
		if !q.sock.zeroCopy || tx.needWakeup() {
			q.sock.kick()
		}
	}
	q.m.add(&q.counts)
	return int(n)
}

// answer answers the frame of length n at the start of room in place
// and returns the reply frame's length.
func (q *queue) answer(room []byte, n int, now time.Time) (verdict, int) {
	var p packet
	if n > len(room) {
		return malformed, 0
	}
	if v := parse(room[:n], &p); v != answered {
		return v, 0
	}
	i := q.match(&p)
	if i < 0 {
		return malformed, 0
	}
	src := p.src
	if !p.v6 && q.targets[i].mapped {
		// A dual-stack socket reports an IPv4 client IPv4-mapped.
		src = netip.AddrFrom16(src.As16())
	}
	r := q.resps[i].Respond(room[p.payload:p.payload+p.length], src, now, q.out[:0])
	if r == nil {
		return noReply, 0
	}
	if p.payload+len(r) > len(room) {
		return tooBig, 0
	}
	copy(room[p.payload:], r)
	return answered, reply(room, &p, len(r))
}

// match returns the target serving p's destination, -1 for none.
func (q *queue) match(p *packet) int {
	for i := range q.targets {
		if q.targets[i].serves(p.dst) {
			return i
		}
	}
	return -1
}
