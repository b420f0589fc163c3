package bgp

import (
	"context"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/glb-dns/glb/internal/birdtest"
)

// TestAnnounceToBirdWithPassword peers with a BIRD 2 whose session asks a
// password (TCP MD5, RFC 2385, which both sides set on their sockets): a
// speaker with a wrong password gets no session, and one with the right
// password gets one and announces through it. The kernel must allow
// TCP_MD5SIG (Linux with CONFIG_TCP_MD5SIG; some systems ask for
// privileges): the test skips, saying so, where it does not.
func TestAnnounceToBirdWithPassword(t *testing.T) {
	// Not parallel: GoBGP's start writes package variables (one speaker
	// per process).
	if err := md5Available(); err != nil {
		t.Skipf("TCP MD5 signatures are not available here (setsockopt TCP_MD5SIG: %v); run as root on a kernel with CONFIG_TCP_MD5SIG", err)
	}
	bird := birdtest.Start(t, birdtest.Config{Local: "127.0.0.2", ASN: 65000, HoldTime: 3,
		Neighbors: []birdtest.Neighbor{{Name: "glbmd5", Addr: "127.0.0.1", ASN: 65001, Password: "s3cret-53"}}})
	start := func(password string) *Speaker {
		s, err := Start(context.Background(), Config{
			ASN: 65001, RouterID: netip.MustParseAddr("192.0.2.1"), HoldTime: 3 * time.Second,
			Peers:    []Peer{{Addr: netip.MustParseAddr("127.0.0.2"), Port: uint16(bird.Port), ASN: 65000, Password: password}},
			Prefixes: []netip.Prefix{netip.MustParsePrefix("192.0.2.53/32")},
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// A wrong password: BIRD's kernel drops every segment unsigned with
	// its key, so the session never opens (GoBGP retries every second).
	wrong := start("not-the-secret")
	if err := wrong.Announce(true); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if bird.Established("glbmd5") || wrong.Sessions()[0].State == "established" {
			t.Fatal("a session opened with the wrong password")
		}
	}
	wrong.Stop()

	right := start("s3cret-53")
	defer right.Stop()
	waitSession(t, right, bird, "glbmd5")
	if err := right.Announce(true); err != nil {
		t.Fatal(err)
	}
	bird.WaitRoute(t, "192.0.2.53/32", true, 5*time.Second)
}

// md5Available tries what both speakers do: a TCP MD5 key on a socket.
func md5Available() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	sig := unix.TCPMD5Sig{Keylen: 1}
	sig.Key[0] = 'k'
	sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&sig.Addr))
	sa.Family, sa.Addr = unix.AF_INET, [4]byte{127, 0, 0, 1}
	return unix.SetsockoptTCPMD5Sig(fd, unix.IPPROTO_TCP, unix.TCP_MD5SIG, &sig)
}
