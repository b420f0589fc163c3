package tap

import (
	"log/slog"
	"net"
	"time"

	dnstap "github.com/dnstap/golang-dnstap"
	framestream "github.com/farsightsec/golang-framestream"
)

// output sends frames to a dnstap reader over Frame Streams (the
// bidirectional handshake of a socket), making the connection again after
// any failure. It replaces golang-dnstap's FrameStreamSockOutput, whose
// reconnect keeps a nil writer after a failed handshake and then panics
// on the next frame: a reader that accepts and never answers crashed the
// node.
type output struct {
	addr   net.Addr
	dialer net.Dialer
	// timeout bounds each dial, handshake and write: a reader that stops
	// reading loses its connection instead of holding the writer.
	timeout time.Duration
	retry   time.Duration
	log     *slog.Logger
	frames  chan []byte
	stop    <-chan struct{}
}

func newOutput(addr net.Addr, log *slog.Logger, stop <-chan struct{}) *output {
	const timeout = 5 * time.Second
	return &output{addr: addr, dialer: net.Dialer{Timeout: timeout}, timeout: timeout, retry: time.Second,
		log: log, frames: make(chan []byte, 64), stop: stop}
}

// run writes the frames until the channel is closed, flushing whenever
// none is waiting; a frame that cannot be written is tried again on a new
// connection until stop.
func (o *output) run() {
	var c net.Conn
	var w *framestream.Writer
	drop := func() {
		if c != nil {
			c.Close()
		}
		c, w = nil, nil
	}
	defer func() {
		if w != nil {
			_ = w.Flush()
			_ = c.SetDeadline(time.Now().Add(o.timeout))
			_ = w.Close()
		}
		drop()
	}()
	for b := range o.frames {
		for {
			err := o.connect(&c, &w)
			if err == nil {
				_, err = w.WriteFrame(b)
			}
			if err == nil && len(o.frames) == 0 {
				err = w.Flush()
			}
			if err == nil {
				break
			}
			o.log.Info("dnstap: writing to the reader failed; connecting again", "address", o.addr.String(), "error", err)
			drop()
			select {
			case <-o.stop:
				return
			case <-time.After(o.retry):
			}
		}
	}
}

// connect makes the connection and the handshake when there is none.
func (o *output) connect(c *net.Conn, w **framestream.Writer) error {
	if *w != nil {
		return nil
	}
	conn, err := o.dialer.Dial(o.addr.Network(), o.addr.String())
	if err != nil {
		return err
	}
	fw, err := framestream.NewWriter(conn, &framestream.WriterOptions{
		ContentTypes: [][]byte{dnstap.FSContentType}, Bidirectional: true, Timeout: o.timeout})
	if err != nil {
		conn.Close()
		return err
	}
	*c, *w = conn, fw
	return nil
}
