package xdp

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sizes of one queue's UMEM and rings. A frame is a page, so any reply
// (at most 1232 bytes of DNS over UDP, RFC 9715) fits behind its
// headers; twice as many frames as a ring holds leave frames for the
// fill ring while replies wait in the TX and completion rings.
const (
	frameSize = 4096
	ringSize  = 2048
	numFrames = 2 * ringSize
	// hugePage is the size the UMEM is aligned to and asked to be backed
	// by, so that its frames take eight TLB entries instead of 4,096: the
	// kernel takes fill frames in order, so each query lands in a frame
	// last touched 2,048 queries before, and on small pages the first
	// read of its headers stalled on a TLB miss for longer than the rest
	// of the answer took (perf annotate: all of parse's samples on that
	// one load).
	hugePage = 2 << 20
	// batch is how many frames one pass takes from the RX ring.
	batch = 64
)

// ring is one of the four rings the kernel shares with user space: a
// producer and a consumer index, and a power-of-two array of entries.
type ring struct {
	producer *uint32
	consumer *uint32
	flags    *uint32
	descs    unsafe.Pointer
	mask     uint32
	mem      []byte
}

func (r *ring) desc(i uint32) *unix.XDPDesc {
	return (*unix.XDPDesc)(unsafe.Add(r.descs, uintptr(i&r.mask)*unsafe.Sizeof(unix.XDPDesc{})))
}

func (r *ring) addr(i uint32) *uint64 {
	return (*uint64)(unsafe.Add(r.descs, uintptr(i&r.mask)*8))
}

func (r *ring) needWakeup() bool {
	return atomic.LoadUint32(r.flags)&unix.XDP_RING_NEED_WAKEUP != 0
}

// socket is an AF_XDP socket with a UMEM of its own, bound to one queue.
type socket struct {
	fd       int
	umem     []byte // numFrames frames, aligned to hugePage inside mapped
	mapped   []byte
	rx, tx   ring
	fill     ring
	comp     ring
	zeroCopy bool
}

func (s *socket) close() {
	for _, r := range []*ring{&s.rx, &s.tx, &s.fill, &s.comp} {
		if r.mem != nil {
			_ = unix.Munmap(r.mem)
		}
	}
	if s.fd >= 0 {
		_ = unix.Close(s.fd)
	}
	if s.mapped != nil {
		_ = unix.Munmap(s.mapped)
	}
}

// openSocket creates the socket, registers its UMEM, maps its rings and
// binds it to queue of ifindex: in zero-copy mode where the driver
// offers it, else in copy mode.
func openSocket(ifindex, queue int) (*socket, error) {
	s, err := newSocket(ifindex, queue, true)
	if err == nil {
		return s, nil
	}
	return newSocket(ifindex, queue, false)
}

func newSocket(ifindex, queue int, zeroCopy bool) (*socket, error) {
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("AF_XDP socket: %w", err)
	}
	s := &socket{fd: fd, zeroCopy: zeroCopy}
	if err := s.setup(ifindex, queue); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *socket) setup(ifindex, queue int) error {
	if err := s.mapUMEM(); err != nil {
		return err
	}
	reg := unix.XDPUmemReg{Addr: uint64(uintptr(unsafe.Pointer(&s.umem[0]))), Len: uint64(len(s.umem)), Size: frameSize}
	if err := setsockopt(s.fd, unix.XDP_UMEM_REG, unsafe.Pointer(&reg), unsafe.Sizeof(reg)); err != nil {
		return fmt.Errorf("XDP_UMEM_REG: %w", err)
	}
	for _, opt := range []int{unix.XDP_UMEM_FILL_RING, unix.XDP_UMEM_COMPLETION_RING, unix.XDP_RX_RING, unix.XDP_TX_RING} {
		if err := unix.SetsockoptInt(s.fd, unix.SOL_XDP, opt, ringSize); err != nil {
			return fmt.Errorf("ring size (option %d): %w", opt, err)
		}
	}
	var off unix.XDPMmapOffsets
	l := uint32(unsafe.Sizeof(off))
	if _, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(s.fd), unix.SOL_XDP, unix.XDP_MMAP_OFFSETS, uintptr(unsafe.Pointer(&off)), uintptr(unsafe.Pointer(&l)), 0); e != 0 {
		return fmt.Errorf("XDP_MMAP_OFFSETS: %w", e)
	}
	descSize := uint64(unsafe.Sizeof(unix.XDPDesc{}))
	maps := []struct {
		r    *ring
		off  unix.XDPRingOffset
		pg   int64
		size uint64
	}{
		{&s.rx, off.Rx, unix.XDP_PGOFF_RX_RING, descSize},
		{&s.tx, off.Tx, unix.XDP_PGOFF_TX_RING, descSize},
		{&s.fill, off.Fr, unix.XDP_UMEM_PGOFF_FILL_RING, 8},
		{&s.comp, off.Cr, unix.XDP_UMEM_PGOFF_COMPLETION_RING, 8},
	}
	for _, m := range maps {
		mem, err := unix.Mmap(s.fd, m.pg, int(m.off.Desc+ringSize*m.size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return fmt.Errorf("map ring: %w", err)
		}
		base := unsafe.Pointer(&mem[0])
		*m.r = ring{
			producer: (*uint32)(unsafe.Add(base, m.off.Producer)),
			consumer: (*uint32)(unsafe.Add(base, m.off.Consumer)),
			flags:    (*uint32)(unsafe.Add(base, m.off.Flags)),
			descs:    unsafe.Add(base, m.off.Desc),
			mask:     ringSize - 1,
			mem:      mem,
		}
	}
	// The fill ring starts full; the other frames wait on the free list.
	for i := range uint32(ringSize) {
		*s.fill.addr(i) = uint64(i) * frameSize
	}
	atomic.StoreUint32(s.fill.producer, ringSize)

	// A copy-mode send takes up to this many frames per call (the
	// default is 32; an older kernel refuses the option and keeps it).
	_ = unix.SetsockoptInt(s.fd, unix.SOL_XDP, unix.XDP_MAX_TX_SKB_BUDGET, batch)
	sa := &unix.SockaddrXDP{Flags: unix.XDP_USE_NEED_WAKEUP | unix.XDP_COPY, Ifindex: uint32(ifindex), QueueID: uint32(queue)}
	if s.zeroCopy {
		sa.Flags = unix.XDP_USE_NEED_WAKEUP | unix.XDP_ZEROCOPY
	}
	if err := unix.Bind(s.fd, sa); err != nil {
		return fmt.Errorf("bind AF_XDP socket to queue %d: %w", queue, err)
	}
	return nil
}

// mapUMEM maps the frames aligned to a huge page and asks for huge pages
// (where the kernel gives transparent ones; else they stay small pages,
// which only costs speed), then touches them in so that no fault waits
// for the first query.
func (s *socket) mapUMEM() error {
	size := numFrames * frameSize
	var err error
	s.mapped, err = unix.Mmap(-1, 0, size+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return fmt.Errorf("UMEM: %w", err)
	}
	off := (hugePage - int(uintptr(unsafe.Pointer(&s.mapped[0]))%hugePage)) % hugePage
	s.umem = s.mapped[off : off+size : off+size]
	_ = unix.Madvise(s.umem, unix.MADV_HUGEPAGE)
	for i := 0; i < size; i += 4096 {
		s.umem[i] = 0
	}
	return nil
}

func setsockopt(fd, opt int, p unsafe.Pointer, n uintptr) error {
	if _, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt), uintptr(p), n, 0); e != 0 {
		return e
	}
	return nil
}

// kick makes the kernel send what the TX ring holds (copy mode, or a
// driver that asks to be woken). In copy mode one call sends a budget of
// frames and says EAGAIN when more wait: it is called again, a few times.
func (s *socket) kick() {
	for range 8 {
		_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
		if e != unix.EAGAIN && e != unix.EBUSY {
			return
		}
	}
}

// pending tells whether the TX ring holds frames the kernel has not
// taken yet.
func (s *socket) pending() bool {
	return atomic.LoadUint32(s.tx.producer) != atomic.LoadUint32(s.tx.consumer)
}
