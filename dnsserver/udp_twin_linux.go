package dnsserver

import (
	"net"

	"golang.org/x/sys/unix"
)

// Replies leave through a second socket bound to the same address, one
// per reading socket, that the runtime's poller never watches. The poller
// registers every socket for writability, so each reply sent through a
// watched socket makes the kernel run the epoll callback when the
// datagram's buffer is freed, and wakes a thread parked in epoll_wait to
// report room nobody waits for: a profile under load showed 6 % of the
// server's time there (gdnsd, whose sockets no poller watches, 0.7 %).
//
// The twins join the reading sockets' SO_REUSEPORT group, so a classic
// BPF program steers every datagram to a reading socket: each to one
// drawn at random, which also spreads a few heavy flows evenly where the
// kernel's flow hash would put them all on one reader.

// steerToReaders attaches to the group of readers[0] a program that
// picks one of the first n sockets of the group at random.
func steerToReaders(c *net.UDPConn, n int) error {
	const skfAdRandom = 0xfffff000 + 56 // SKF_AD_OFF + SKF_AD_RANDOM
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: skfAdRandom},
		{Code: unix.BPF_ALU | unix.BPF_MOD | unix.BPF_K, K: uint32(n)},
		{Code: unix.BPF_RET | unix.BPF_A},
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return control(c, func(fd int) error {
		return unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF, &fp)
	})
}

// sendTwins binds a send-only twin for each reading socket and returns
// their descriptors, or nil, having bound none, where the system refuses
// any step: replies then go out through the reading sockets.
func sendTwins(readers []*net.UDPConn) []int {
	if steerToReaders(readers[0], len(readers)) != nil {
		return nil
	}
	var fds []int
	for _, c := range readers {
		fd, err := twin(c)
		if err != nil {
			closeFDs(fds)
			return nil
		}
		fds = append(fds, fd)
	}
	return fds
}

// twin opens a non-blocking UDP socket bound where c is.
func twin(c *net.UDPConn) (int, error) {
	var sa unix.Sockaddr
	var domain, v6only int
	err := control(c, func(fd int) error {
		var err error
		if sa, err = unix.Getsockname(fd); err != nil {
			return err
		}
		if domain, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN); err != nil {
			return err
		}
		if domain == unix.AF_INET6 {
			v6only, err = unix.GetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY)
		}
		return err
	})
	if err != nil {
		return -1, err
	}
	fd, err := unix.Socket(domain, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return -1, err
	}
	err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	if err == nil && domain == unix.AF_INET6 {
		err = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, v6only)
	}
	if err == nil {
		err = unix.Bind(fd, sa)
	}
	if err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}

// control runs f on c's descriptor.
func control(c *net.UDPConn, f func(fd int) error) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
