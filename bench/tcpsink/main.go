// Command tcpsink accepts TCP connections on loopback addresses and
// closes them at once: the up targets of the benchmark's health checks
// (an address without a listener is down).
package main

import (
	"flag"
	"log"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	addrs := flag.String("listen", "127.0.1.1:18080,127.0.1.2:18080,127.0.1.3:18080", "comma-separated loopback host:port list")
	flag.Parse()
	for a := range strings.SplitSeq(*addrs, ",") {
		ap, err := netip.ParseAddrPort(strings.TrimSpace(a))
		if err != nil || !ap.Addr().IsLoopback() {
			log.Fatalf("tcpsink: %q is not a loopback host:port", a)
		}
		l, err := net.Listen("tcp", ap.String())
		if err != nil {
			log.Fatalf("tcpsink: %v", err)
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_ = c.Close()
			}
		}()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}
