// Package bgp announces and withdraws a node's anycast prefixes to its
// routers over BGP, with GoBGP as a library. It decides nothing: the node
// says whether it may be announced (Announce), and the speaker keeps its
// peers told.
package bgp

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/osrg/gobgp/v4/api"
	"github.com/osrg/gobgp/v4/pkg/apiutil"
	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"
	"github.com/osrg/gobgp/v4/pkg/server"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/internal/promset"
)

// Peer is one router the node peers with.
type Peer struct {
	Addr netip.Addr
	// Port is the router's BGP port. Default 179.
	Port uint16
	ASN  uint32
	// Password, when set, signs the session with TCP MD5 (RFC 2385).
	Password string
}

// Config is a speaker's configuration.
type Config struct {
	ASN      uint32
	RouterID netip.Addr
	// ListenPort is where the speaker accepts sessions; 0 does not listen
	// at all (the node connects to its peers, which is all anycast needs).
	ListenPort uint16
	Peers      []Peer
	// Prefixes are announced to every peer of their address family: IPv4
	// prefixes over IPv4 sessions, IPv6 over IPv6.
	Prefixes []netip.Prefix
	// Communities (ASN<<16 | value) are attached to every announcement.
	Communities []uint32
	// MED is attached when set.
	MED *uint32
	// HoldTime is the hold time offered to peers (keepalives at a third of
	// it). Default 90s.
	HoldTime time.Duration
	Logger   *slog.Logger
	// Registerer takes the speaker's metrics (nil: none).
	Registerer prometheus.Registerer
}

// Session is the state of one peer's session.
type Session struct {
	Peer  netip.Addr
	ASN   uint32
	State string // idle, connect, active, opensent, openconfirm, established
}

// Speaker is a running BGP speaker.
type Speaker struct {
	cfg Config
	log *slog.Logger
	srv *server.BgpServer

	mu        sync.Mutex
	announced bool
	stopped   bool

	announcedG prometheus.Gauge
	changes    *prometheus.CounterVec
	sessions   *prometheus.GaugeVec
}

// Start starts a speaker with its peers configured and nothing announced.
// One speaker per process: GoBGP keeps its route selection options in
// package variables that each start writes.
func Start(ctx context.Context, cfg Config) (*Speaker, error) {
	if cfg.HoldTime == 0 {
		cfg.HoldTime = 90 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "bgp")
	// GoBGP logs each FSM step at Info; the node logs the state changes
	// itself, so GoBGP's own lines are kept for warnings.
	lvl := &slog.LevelVar{}
	lvl.Set(slog.LevelWarn)
	srv := server.NewBgpServer(server.LoggerOption(log, lvl))
	go srv.Serve()
	listen := int32(-1)
	if cfg.ListenPort != 0 {
		listen = int32(cfg.ListenPort)
	}
	if err := srv.StartBgp(ctx, &api.StartBgpRequest{Global: &api.Global{
		Asn: cfg.ASN, RouterId: cfg.RouterID.String(), ListenPort: listen,
	}}); err != nil {
		srv.Stop()
		return nil, fmt.Errorf("start bgp: %w", err)
	}
	s := &Speaker{cfg: cfg, log: log, srv: srv}
	set := promset.New("bgp")
	s.announcedG = set.Gauge("announced", "1 while the node's anycast prefixes are announced, else 0.")
	s.changes = set.CounterVec("route_changes_total", "Announcements and withdrawals of the node's prefixes, by action (announce, withdraw).", "action")
	s.sessions = set.GaugeVec("session_established", "1 while the BGP session with the peer is established, else 0.", "peer")
	s.changes.WithLabelValues("announce")
	s.changes.WithLabelValues("withdraw")
	if cfg.Registerer != nil {
		if err := set.Register(cfg.Registerer); err != nil {
			srv.Stop()
			return nil, fmt.Errorf("bgp metrics: %w", err)
		}
	}
	if err := srv.WatchEvent(ctx, server.WatchEventMessageCallbacks{
		OnPeerUpdate: func(ev *apiutil.WatchEventMessage_PeerEvent, _ time.Time) {
			if ev.Type != apiutil.PEER_EVENT_STATE {
				return
			}
			st := ev.Peer.State
			up := st.SessionState == gobgp.BGP_FSM_ESTABLISHED
			s.sessions.WithLabelValues(st.NeighborAddress.String()).Set(map[bool]float64{true: 1}[up])
			log.Info("bgp session", "peer", st.NeighborAddress, "state", stateName(st.SessionState))
		},
	}, server.WatchPeer()); err != nil {
		srv.Stop()
		return nil, fmt.Errorf("watch bgp peers: %w", err)
	}
	for _, p := range cfg.Peers {
		if err := srv.AddPeer(ctx, &api.AddPeerRequest{Peer: apiPeer(p, cfg)}); err != nil {
			srv.Stop()
			return nil, fmt.Errorf("bgp peer %s: %w", p.Addr, err)
		}
		s.sessions.WithLabelValues(p.Addr.String()).Set(0)
	}
	return s, nil
}

func apiPeer(p Peer, cfg Config) *api.Peer {
	fam := &api.Family{Afi: api.Family_AFI_IP, Safi: api.Family_SAFI_UNICAST}
	if p.Addr.Is6() {
		fam = &api.Family{Afi: api.Family_AFI_IP6, Safi: api.Family_SAFI_UNICAST}
	}
	hold := uint64(cfg.HoldTime / time.Second)
	port := uint32(p.Port)
	if port == 0 {
		port = 179
	}
	return &api.Peer{
		Conf: &api.PeerConf{NeighborAddress: p.Addr.String(), PeerAsn: p.ASN, AuthPassword: p.Password},
		Timers: &api.Timers{Config: &api.TimersConfig{
			HoldTime: hold, KeepaliveInterval: max(hold/3, 1),
			// A lost session is retried soon: while it is down the node's
			// prefixes are not announced through that router.
			ConnectRetry: 1,
			// Updates go out at once: a withdrawal waits for nothing.
			MinimumAdvertisementInterval: 0, IdleHoldTimeAfterReset: 1,
		}},
		Transport: &api.Transport{RemotePort: port},
		AfiSafis:  []*api.AfiSafi{{Config: &api.AfiSafiConfig{Family: fam, Enabled: true}}},
	}
}

// Announce announces the node's prefixes (true) or withdraws them
// (false). Asking for what already holds does nothing.
func (s *Speaker) Announce(on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.announced == on {
		return nil
	}
	paths, err := s.paths()
	if err != nil {
		return err
	}
	if on {
		_, err = s.srv.AddPath(apiutil.AddPathRequest{Paths: paths})
	} else {
		err = s.srv.DeletePath(apiutil.DeletePathRequest{Paths: paths})
	}
	if err != nil {
		return fmt.Errorf("bgp %s: %w", action(on), err)
	}
	s.announced = on
	s.announcedG.Set(map[bool]float64{true: 1}[on])
	s.changes.WithLabelValues(action(on)).Inc()
	s.log.Info("anycast "+action(on), "prefixes", s.cfg.Prefixes)
	return nil
}

func action(on bool) string {
	if on {
		return "announce"
	}
	return "withdraw"
}

// paths are the node's prefixes as GoBGP paths. The next hop is left
// unspecified: on an eBGP session GoBGP sends its own address on it.
func (s *Speaker) paths() ([]*apiutil.Path, error) {
	var out []*apiutil.Path
	for _, p := range s.cfg.Prefixes {
		nlri, err := gobgp.NewIPAddrPrefix(p.Masked())
		if err != nil {
			return nil, fmt.Errorf("prefix %s: %w", p, err)
		}
		attrs := []gobgp.PathAttributeInterface{gobgp.NewPathAttributeOrigin(gobgp.BGP_ORIGIN_ATTR_TYPE_IGP)}
		fam := gobgp.RF_IPv4_UC
		if p.Addr().Is4() {
			nh, _ := gobgp.NewPathAttributeNextHop(netip.IPv4Unspecified())
			attrs = append(attrs, nh)
		} else {
			fam = gobgp.RF_IPv6_UC
			mp, err := gobgp.NewPathAttributeMpReachNLRI(fam, []gobgp.PathNLRI{{NLRI: nlri}}, netip.IPv6Unspecified())
			if err != nil {
				return nil, fmt.Errorf("prefix %s: %w", p, err)
			}
			attrs = append(attrs, mp)
		}
		if s.cfg.MED != nil {
			attrs = append(attrs, gobgp.NewPathAttributeMultiExitDisc(*s.cfg.MED))
		}
		if len(s.cfg.Communities) > 0 {
			attrs = append(attrs, gobgp.NewPathAttributeCommunities(s.cfg.Communities))
		}
		out = append(out, &apiutil.Path{Family: fam, Nlri: nlri, Attrs: attrs})
	}
	return out, nil
}

// Announced reports whether the prefixes are announced.
func (s *Speaker) Announced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.announced
}

// Prefixes are the prefixes the speaker announces when told to.
func (s *Speaker) Prefixes() []netip.Prefix { return slices.Clone(s.cfg.Prefixes) }

// Sessions are the peers' sessions, in the order configured.
func (s *Speaker) Sessions() []Session {
	states := map[netip.Addr]string{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.srv.ListPeer(ctx, &api.ListPeerRequest{}, func(p *api.Peer) {
		if p.State == nil {
			return
		}
		if a, err := netip.ParseAddr(p.State.NeighborAddress); err == nil {
			states[a] = apiStateName(p.State.SessionState)
		}
	})
	out := make([]Session, len(s.cfg.Peers))
	for i, p := range s.cfg.Peers {
		st := states[p.Addr]
		if st == "" {
			st = "idle"
		}
		out[i] = Session{Peer: p.Addr, ASN: p.ASN, State: st}
	}
	return out
}

// Stop withdraws the prefixes, closes every session (a BGP Cease, so the
// routers drop the routes at once rather than after the hold time) and
// stops the speaker.
func (s *Speaker) Stop() {
	err := s.Announce(false)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.stopped = true
	if err != nil {
		s.log.Warn("withdrawing before stop", "err", err)
	}
	// Stop sends each peer a Cease and closes the sessions (StopBgp;
	// calling that first too makes GoBGP log an error for the second).
	s.srv.Stop()
}

func stateName(st gobgp.FSMState) string {
	return strings.TrimPrefix(strings.ToLower(st.String()), "bgp_fsm_")
}

func apiStateName(st api.PeerState_SessionState) string {
	return strings.TrimPrefix(strings.ToLower(st.String()), "session_state_")
}
