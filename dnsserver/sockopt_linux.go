package dnsserver

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// reusePort lets several sockets share one address so that the kernel
// spreads UDP queries over them (one reader per core).
func reusePort(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}); err != nil {
		return err
	}
	return serr
}

// setReadBuffer asks for a receive buffer of n bytes: SO_RCVBUFFORCE
// passes net.core.rmem_max when the process may (CAP_NET_ADMIN), else
// SO_RCVBUF gets what the kernel allows. Either way the server runs.
func setReadBuffer(c *net.UDPConn, n int) {
	_ = control(c, func(fd int) error {
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n) != nil {
			return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, n)
		}
		return nil
	})
}
