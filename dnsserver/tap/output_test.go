package tap

import (
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	dnstap "github.com/dnstap/golang-dnstap"
	framestream "github.com/farsightsec/golang-framestream"
)

// TestOutputOutlastsAReaderThatNeverAnswers: a reader that accepts the
// connection and never answers the handshake costs the output a timeout
// and a new connection each time, never a crash (golang-dnstap's own
// output panicked on the frame after a failed handshake); once a real
// reader listens, the frame that waited and the next arrive in order, and
// after that reader goes away the next frame reaches it when it is back.
func TestOutputOutlastsAReaderThatNeverAnswers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tap.sock")
	stuck, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := stuck.Accept()
			if err != nil {
				return
			}
			accepted <- c // held, never read
		}
	}()
	stop := make(chan struct{})
	o := newOutput(&net.UnixAddr{Name: path, Net: "unix"}, slog.New(slog.DiscardHandler), stop)
	o.timeout, o.retry = 100*time.Millisecond, 10*time.Millisecond
	done := make(chan struct{})
	go func() { o.run(); close(done) }()
	o.frames <- []byte("first")
	for i := range 3 {
		select {
		case c := <-accepted:
			defer c.Close()
		case <-time.After(5 * time.Second):
			t.Fatalf("connection %d to the reader that never answers was not made", i+1)
		}
	}
	stuck.Close()
	os.Remove(path)

	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// A test that fails fails in seconds, not at the package's timeout.
	_ = ln.(*net.UnixListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := framestream.NewReader(c, &framestream.ReaderOptions{ContentTypes: [][]byte{dnstap.FSContentType}, Bidirectional: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("handshake with the real reader: %v", err)
	}
	o.frames <- []byte("second")
	buf := make([]byte, 64)
	for _, want := range []string{"first", "second"} {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := r.ReadFrame(buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("frame %q, %v; want %q", buf[:n], err, want)
		}
	}
	// A reader that goes away costs the frame after a new connection,
	// not the connection for good.
	c.Close()
	o.frames <- []byte("third")
	c2, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	r, err = framestream.NewReader(c2, &framestream.ReaderOptions{ContentTypes: [][]byte{dnstap.FSContentType}, Bidirectional: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("handshake with the reader again: %v", err)
	}
	_ = c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := r.ReadFrame(buf); err != nil || string(buf[:n]) != "third" {
		t.Fatalf("after the reader came back: frame %q, %v; want third", buf[:n], err)
	}
	close(o.frames)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the output did not stop when its frames ended")
	}
}
