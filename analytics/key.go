package analytics

import (
	"github.com/glb-dns/glb/pools"
)

// A count's cell is packed into one 64-bit key, so that finding it is one
// compare per probe and claiming it one compare-and-swap:
//
//	bit 63     always set (0 is an empty cell)
//	bits 51-62 epoch: the snapshot the load balancer, pool and origin
//	           indices belong to (Register)
//	bits 31-50 load balancer index in the snapshot
//	bits 23-30 pool slot in the load balancer's pools (NoPool: none)
//	bits 16-22 origin position in the pool (NoOrigin: none)
//	bits 12-15 region (0: unknown, else pools.Regions[i-1])
//	bits 4-11  country (0: unknown, else Countries[i-1])
//	bits 0-3   response code
const (
	keySet      = 1 << 63
	epochShift  = 51
	lbShift     = 31
	poolShift   = 23
	originShift = 16
	regionShift = 12
	countryShft = 4

	// Epochs is how many snapshots a key can tell apart; a snapshot's
	// epoch is reused after this many publications.
	Epochs = 1 << 12
	// MaxLB is the most load balancers a snapshot can count separately;
	// those beyond it are counted under their region only (see Add).
	MaxLB = 1<<20 - 1
	// NoPool is the pool slot of an answer no pool gave (the all_down
	// policy answered); pools beyond the 254th of a load balancer count
	// here too.
	NoPool = 0xff
	// NoOrigin is the origin of an answer without a record.
	NoOrigin = 0x7f

	placeMask = 0xffff &^ 0xf // region and country bits
)

// Cell is a key unpacked.
type Cell struct {
	Epoch   uint16
	LB      uint32
	Pool    uint8 // slot in the load balancer's Pools()
	Origin  uint8 // position in the pool
	Region  uint8
	Country uint8
	Rcode   uint8
}

// Key packs the cell of one answer without its response code, which the
// caller ORs in once the reply is finished. lb beyond MaxLB yields 0: not
// counted.
func Key(epoch uint16, lb int, pool, origin, region, country uint8) uint64 {
	if uint(lb) > MaxLB {
		return 0
	}
	return keySet | uint64(epoch&(Epochs-1))<<epochShift | uint64(lb)<<lbShift | uint64(pool)<<poolShift |
		uint64(origin&NoOrigin)<<originShift | uint64(region&0xf)<<regionShift | uint64(country)<<countryShft
}

// WithRcode adds the response code (its low four bits: the extended ones
// never reach a load balancer) to a key.
func WithRcode(key uint64, rcode int) uint64 { return key | uint64(rcode&0xf) }

// Unpack is Key's inverse.
func Unpack(k uint64) Cell {
	return Cell{
		Epoch:   uint16(k>>epochShift) & (Epochs - 1),
		LB:      uint32(k>>lbShift) & MaxLB,
		Pool:    uint8(k >> poolShift),
		Origin:  uint8(k>>originShift) & NoOrigin,
		Region:  uint8(k>>regionShift) & 0xf,
		Country: uint8(k >> countryShft),
		Rcode:   uint8(k) & 0xf,
	}
}

// RegionIndex is a region code's index for Key: 0 unknown, else its
// position in pools.Regions plus one. A scan of thirteen four-byte codes
// costs less than hashing the string for a map.
func RegionIndex(code string) uint8 {
	for i, r := range pools.Regions {
		if r == code {
			return uint8(i + 1)
		}
	}
	return 0
}

// RegionName is RegionIndex's inverse; Unknown for 0.
func RegionName(i uint8) string {
	if i == 0 || int(i) > len(pools.Regions) {
		return Unknown
	}
	return pools.Regions[i-1]
}

// Unknown names a region or country nothing located.
const Unknown = "unknown"

// countries are the accepted country codes in order; countryIndex maps a
// letter pair to its position plus one.
var (
	countries    = pools.CountryCodes()
	countryIndex = func() (t [26 * 26]uint8) {
		if len(pools.CountryCodes()) > 254 {
			panic("analytics: more countries than a key's eight bits")
		}
		for i, c := range pools.CountryCodes() {
			t[int(c[0]-'A')*26+int(c[1]-'A')] = uint8(i + 1)
		}
		return t
	}()
)

// CountryIndex is a country code's index for Key: 0 unknown.
func CountryIndex(code string) uint8 {
	if len(code) != 2 || code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' {
		return 0
	}
	return countryIndex[int(code[0]-'A')*26+int(code[1]-'A')]
}

// CountryName is CountryIndex's inverse; Unknown for 0.
func CountryName(i uint8) string {
	if i == 0 || int(i) > len(countries) {
		return Unknown
	}
	return countries[i-1]
}
