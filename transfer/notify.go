package transfer

import (
	"context"
	"net/netip"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// notify tells each of zs's secondaries of its current serial (RFC 1996),
// again every NotifyInterval until the secondary has transferred that
// serial from this node (its SOA check and transfer follow the NOTIFY),
// or NotifyTries have gone. A newer change ends the older loop. s.mu is
// held.
func (s *Service) notify(zs *zoneState) {
	zs.notifyGen++
	if len(zs.settings.Notify) == 0 {
		return
	}
	gen, serial, soa := zs.notifyGen, zs.cur.serial, zs.cur.soa
	var key string
	if len(zs.settings.TSIGKeys) > 0 {
		key = pools.CanonicalName(zs.settings.TSIGKeys[0])
	}
	for _, target := range zs.settings.Notify {
		ap, err := netip.ParseAddrPort(target)
		if err != nil {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.notifyLoop(zs, gen, serial, soa, key, ap)
		}()
	}
}

func (s *Service) notifyLoop(zs *zoneState, gen int, serial uint32, soa *dns.SOA, key string, to netip.AddrPort) {
	for try := 1; try <= s.cfg.NotifyTries; try++ {
		s.mu.Lock()
		current := zs.notifyGen == gen
		sec := zs.secondaries[to.Addr().Unmap()]
		done := sec != nil && sec.Serial == serial
		s.mu.Unlock()
		if !current || done {
			return
		}
		if err := s.sendNotify(soa, key, to); err != nil {
			s.log.Debug("NOTIFY not answered", "zone", zs.name, "secondary", to, "serial", serial, "try", try, "err", err)
		}
		t := time.NewTimer(s.cfg.NotifyInterval)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	s.log.Warn("secondary did not transfer the zone after NOTIFY", "zone", zs.name, "secondary", to, "serial", serial, "tries", s.cfg.NotifyTries)
}

// sendNotify sends one NOTIFY for soa's zone to a secondary and waits for
// its answer, signed with key (a TSIG key's name) when it is not empty.
func (s *Service) sendNotify(soa *dns.SOA, key string, to netip.AddrPort) error {
	m := new(dns.Msg)
	m.SetNotify(soa.Hdr.Name)
	m.Answer = []dns.RR{soa}
	c := &dns.Client{Net: "udp", Timeout: s.cfg.NotifyInterval}
	if key != "" {
		ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
		k, err := s.cfg.Keys.TSIGKey(ctx, key)
		cancel()
		if err != nil {
			return err
		}
		name := dns.Fqdn(k.Name)
		m.SetTsig(name, dns.Fqdn(k.Algorithm), tsigFudge, time.Now().Unix())
		c.TsigSecret = map[string]string{name: k.Secret}
	}
	r, _, err := c.ExchangeContext(s.ctx, m, to.String())
	if err != nil {
		return err
	}
	if r.Rcode != dns.RcodeSuccess {
		return &rcodeError{r.Rcode}
	}
	return nil
}

type rcodeError struct{ rcode int }

func (e *rcodeError) Error() string { return "answered " + dns.RcodeToString[e.rcode] }
