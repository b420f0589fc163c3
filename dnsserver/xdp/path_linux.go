package xdp

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
)

// program is redirect.c compiled by `make xdp-object`.
//
//go:embed redirect_bpfel.o
var program []byte

// Path is the XDP path attached to one interface.
type Path struct {
	iface    string
	log      *slog.Logger
	coll     *ebpf.Collection
	link     link.Link
	socks    []*socket
	stop     int // eventfd that ends the queues' loops
	wg       sync.WaitGroup
	mode     string
	zeroCopy bool
	passed   prometheus.Collector
	reg      prometheus.Registerer
}

// Attach loads the XDP program, opens an AF_XDP socket per receive queue
// of cfg.Interface and starts answering. The program is attached through
// a BPF link owned by this process, so that it goes when the process
// does, even killed; Close detaches it at once.
func Attach(cfg Config) (*Path, error) {
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	targets, port, err := cfg.targets()
	if err != nil {
		return nil, fmt.Errorf("xdp %s: %w", cfg.Interface, err)
	}
	ifc, err := net.InterfaceByName(cfg.Interface)
	if err != nil {
		return nil, fmt.Errorf("xdp: interface %q: %w", cfg.Interface, err)
	}
	p := &Path{iface: cfg.Interface, log: cfg.Logger.With("component", "xdp", "interface", cfg.Interface), stop: -1, reg: cfg.Registerer}
	if err := p.attach(ifc.Index, targets, port); err != nil {
		p.release()
		return nil, fmt.Errorf("xdp %s: %w", cfg.Interface, err)
	}
	m, err := newMetrics(cfg.Registerer)
	if err == nil {
		p.passed = newPassedCollector(cfg.Interface, p.coll.Maps["passed"])
		err = cfg.Registerer.Register(p.passed)
	}
	if err != nil {
		p.release()
		return nil, fmt.Errorf("xdp %s: metrics: %w", cfg.Interface, err)
	}
	for i, s := range p.socks {
		q := newQueue(s, targets, m.queue(cfg.Interface, i))
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			q.run(p.stop)
		}()
	}
	copyNote := "zero-copy"
	if !p.zeroCopy {
		copyNote = "copy mode: the driver offers no zero-copy AF_XDP, each frame is copied once each way"
	}
	p.log.Info("xdp attached", "mode", p.mode, "queues", len(p.socks), "port", port, "frames", copyNote)
	return p, nil
}

func (p *Path) attach(ifindex int, targets []target, port uint16) error {
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(program))
	if err != nil {
		return fmt.Errorf("load program: %w", err)
	}
	var any4, any6 uint8
	for _, t := range targets {
		if t.any4 {
			any4 = 1
		}
		if t.any6 {
			any6 = 1
		}
	}
	for name, v := range map[string]any{"dns_port": port, "any4": any4, "any6": any6} {
		if err := spec.Variables[name].Set(v); err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	if p.coll, err = ebpf.NewCollection(spec); err != nil {
		return fmt.Errorf("load program: %w", explain(err))
	}
	for _, t := range targets {
		if !t.addr.IsUnspecified() {
			if err := p.coll.Maps["addrs"].Put(t.addr.As16(), uint8(1)); err != nil {
				return fmt.Errorf("address map: %w", err)
			}
		}
	}
	n, err := rxQueues(p.iface)
	if err != nil {
		return err
	}
	p.zeroCopy = true
	for q := range n {
		s, err := openSocket(ifindex, q)
		if err != nil {
			return explain(err)
		}
		p.socks = append(p.socks, s)
		p.zeroCopy = p.zeroCopy && s.zeroCopy
		if err := p.coll.Maps["xsks"].Put(uint32(q), uint32(s.fd)); err != nil {
			return fmt.Errorf("socket map, queue %d: %w", q, err)
		}
	}
	if p.stop, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	prog := p.coll.Programs["glb_dns"]
	p.link, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: link.XDPDriverMode})
	p.mode = "native"
	if err != nil {
		// A driver without XDP support still runs the program on the
		// kernel's generic hook, after the socket buffer is built.
		var gerr error
		p.link, gerr = link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: link.XDPGenericMode})
		if gerr != nil {
			return fmt.Errorf("attach: native: %w; generic: %w", explain(err), explain(gerr))
		}
		p.mode = "generic"
		p.log.Warn("xdp: the driver refused native mode, running the program in generic mode (slower)", "err", err)
	}
	return nil
}

// explain adds what an operator can do about the usual refusals.
func explain(err error) error {
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w (needs CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW, or root)", err)
	case errors.Is(err, unix.EBUSY):
		return fmt.Errorf("%w (another XDP program or AF_XDP socket holds the interface or queue)", err)
	case errors.Is(err, unix.EAFNOSUPPORT):
		return fmt.Errorf("%w (the kernel has no AF_XDP: CONFIG_XDP_SOCKETS)", err)
	}
	return err
}

// rxQueues is the number of receive queues of iface, as ethtool's
// channels tell it (Knot does the same), 1 where the driver does not
// say. Not from /sys: that shows the namespace it was mounted in.
func rxQueues(iface string) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("receive queues: %w", err)
	}
	defer unix.Close(fd)
	var ch struct {
		cmd                                 uint32
		maxRx, maxTx, maxOther, maxCombined uint32
		rx, tx, other, combined             uint32
	}
	ch.cmd = 0x3c // ETHTOOL_GCHANNELS
	var ifr struct {
		name [unix.IFNAMSIZ]byte
		data unsafe.Pointer
		_    [16]byte
	}
	copy(ifr.name[:unix.IFNAMSIZ-1], iface)
	ifr.data = unsafe.Pointer(&ch)
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		if e == unix.EOPNOTSUPP {
			return 1, nil
		}
		return 0, fmt.Errorf("receive queues of %s: %w", iface, e)
	}
	return max(1, int(ch.rx+ch.combined)), nil
}

// Mode is "native" (the driver runs the program) or "generic".
func (p *Path) Mode() string { return p.mode }

// ZeroCopy tells whether every queue's socket is in zero-copy mode.
func (p *Path) ZeroCopy() bool { return p.zeroCopy }

// Close detaches the program, so that the kernel answers on its sockets
// again, then stops the queues and frees their sockets.
func (p *Path) Close() error {
	var err error
	if p.link != nil {
		err = p.link.Close()
		p.link = nil
	}
	if p.stop >= 0 {
		var one = [8]byte{1}
		_, _ = unix.Write(p.stop, one[:])
	}
	p.wg.Wait()
	if p.passed != nil {
		p.reg.Unregister(p.passed)
		p.passed = nil
	}
	p.release()
	p.log.Info("xdp detached")
	return err
}

// release frees what attach made, in any state.
func (p *Path) release() {
	if p.link != nil {
		_ = p.link.Close()
		p.link = nil
	}
	for _, s := range p.socks {
		s.close()
	}
	p.socks = nil
	if p.coll != nil {
		p.coll.Close()
		p.coll = nil
	}
	if p.stop >= 0 {
		_ = unix.Close(p.stop)
		p.stop = -1
	}
}
