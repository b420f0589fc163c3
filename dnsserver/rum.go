package dnsserver

import (
	"net/netip"
	"time"
)

// RUMTokens records the beacon names resolvers ask for (rum.Tokens): the
// answer path hands each one over without a lock or an allocation.
type RUMTokens interface {
	See(token []byte, resolver netip.Addr, now int64)
}

// rumName answers a name in the rum subtree of zone z that no record
// claims: rum.<zone> and below exist, empty, so that a resolver
// minimising its query names (RFC 9156) does not stop at an NXDOMAIN for
// rum.<zone>. The beacon's own name, <token>.rum.<zone>, asked without an
// ECS subnet, is recorded with the resolver that asked: glbd learns from
// it which client networks sit behind that resolver. A resolver that
// sends ECS is steered by its ECS subnet and needs no map.
func (s *Server) rumName(z *zone, name []byte, b *builder, src netip.Addr) bool {
	if s.cfg.RUMTokens == nil {
		return false
	}
	apex := z.apex
	end := len(name) - len(apex) - 4 // where "\x03rum" starts
	if end < 0 || string(name[end:end+4]) != "\x03rum" || string(name[end+4:]) != string(apex) {
		return false
	}
	off := 0
	for off < end {
		off += 1 + int(name[off])
	}
	if off != end {
		return false // "rum" is not a label of its own
	}
	if end > 0 && 1+int(name[0]) == end {
		if ecs := b.r.ecsPrefix(); !ecs.IsValid() || ecs.Bits() == 0 {
			s.cfg.RUMTokens.See(name[1:end], src, time.Now().UnixNano())
		}
	}
	b.negative(z, name, nil)
	return true
}
