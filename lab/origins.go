package main

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// delays[o][c] is how long an origin of region o takes to answer a
// health check from a node of region c: the distance the lab makes in
// user space, since this kernel has no netem.
type delays [3][3]time.Duration

// geography is the lab's normal distances: each region's checks find
// its own origins nearest (0), the next region's at 200 ms and the one
// after at 300 ms (WEU → ENAM → NEAS → WEU). The order is the same turn
// for every region, so that while rotated is being learnt only the old
// and the new nearest can come first, never the third. The gaps are
// wide so that a check slowed by a busy machine (a few hundred
// milliseconds of scheduling, smoothed) does not reorder them.
var geography = func() delays {
	var d delays
	for c := range 3 {
		d[c][c], d[(c+1)%3][c], d[(c+2)%3][c] = 0, 200*time.Millisecond, 300*time.Millisecond
	}
	return d
}()

// farDelay is rotated's distance to every origin but the nearest.
const farDelay = 600 * time.Millisecond

// rotated makes every region's next region the nearest (0) and the rest
// far (farDelay). One check with it reorders the smoothed RTTs (α = 0.3:
// 0.3 × 600 ms > 0.7 × 200 ms), so the drill measures glb's propagation
// rather than the smoothing; the way back needs four checks (600 × 0.7^k
// must fall below 200 × (1 - 0.7^k)), which the drill reports unbounded.
var rotated = func() delays {
	var d delays
	for c := range 3 {
		for o := range 3 {
			d[o][c] = farDelay
		}
		d[(c+1)%3][c] = 0
	}
	return d
}()

// origins serves every origin's health endpoint, from sockets opened in
// the regions' namespaces.
type origins struct {
	table   atomic.Pointer[delays]
	failing [3]atomic.Bool // a region's origins answer 503
	servers []*http.Server
	wg      sync.WaitGroup
}

func startOrigins(l *lab) (*origins, error) {
	o := &origins{}
	t := geography
	o.table.Store(&t)
	for i := range regions {
		for j := range originsPerRegion {
			addr := originAddr(i, j)
			var ln net.Listener
			if err := inNS(l.regionNS(i), func() error {
				var err error
				ln, err = net.Listen("tcp", netip.AddrPortFrom(addr, 80).String())
				return err
			}); err != nil {
				o.close()
				return nil, err
			}
			srv := &http.Server{Handler: o.handler(i), ReadHeaderTimeout: 5 * time.Second}
			o.servers = append(o.servers, srv)
			o.wg.Add(1)
			go func() { defer o.wg.Done(); _ = srv.Serve(ln) }()
		}
	}
	return o, nil
}

func (o *origins) handler(region int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.failing[region].Load() {
			http.Error(w, "failing (lab drill)", http.StatusServiceUnavailable)
			return
		}
		src, err := netip.ParseAddrPort(r.RemoteAddr)
		if c := regionOf(src.Addr()); err == nil && c >= 0 {
			select {
			case <-time.After(o.table.Load()[region][c]):
			case <-r.Context().Done():
				return
			}
		}
		w.Write([]byte("ok\n"))
	})
}

func (o *origins) setTable(d delays) { o.table.Store(&d) }

func (o *origins) close() {
	for _, s := range o.servers {
		s.Close()
	}
	o.wg.Wait()
}
