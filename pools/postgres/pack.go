package postgres

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/glb-dns/glb/pools"
)

// A packed view (node_health_view.packed) is a node's origin states in
// one value, so that a reader without a cursor reads one row per node:
// the format byte packFormat, then, flate-compressed, a table of the
// distinct pools, reasons and monitor lists (uvarint count, then each as
// uvarint length and bytes), the number of states, and each state as its
// pool's index, its origin (length and bytes), 1 for healthy or 0, its
// reason's index, its RTT in nanoseconds and its monitors' index, all
// uvarints. Pools, reasons and monitor lists repeat across a node's
// origins; the table keeps a view of 10,000 origins to tens of kB.
const packFormat = 1

// pack encodes r's states.
func pack(r rowArrays) ([]byte, error) {
	var body bytes.Buffer
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v uint64) { body.Write(tmp[:binary.PutUvarint(tmp[:], v)]) }
	str := func(s string) { uv(uint64(len(s))); body.WriteString(s) }

	index := map[string]uint64{}
	var table []string
	at := func(s string) uint64 {
		i, ok := index[s]
		if !ok {
			i = uint64(len(table))
			index[s] = i
			table = append(table, s)
		}
		return i
	}
	n := len(r.pool)
	idx := make([]uint64, 0, 3*n)
	for i := range n {
		idx = append(idx, at(r.pool[i]), at(r.reason[i]), at(r.monitors[i]))
	}
	uv(uint64(len(table)))
	for _, s := range table {
		str(s)
	}
	uv(uint64(n))
	for i := range n {
		uv(idx[3*i])
		str(r.origin[i])
		if r.healthy[i] {
			body.WriteByte(1)
		} else {
			body.WriteByte(0)
		}
		uv(idx[3*i+1])
		uv(uint64(max(r.rtt[i], 0)))
		uv(idx[3*i+2])
	}
	var out bytes.Buffer
	out.WriteByte(packFormat)
	w, err := flate.NewWriter(&out, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(body.Bytes()); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// interner shares the strings of the views one read decodes: every node
// names the same pools and, mostly, the same origins.
type interner map[string]string

func (in interner) get(b []byte) string {
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	in[s] = s
	return s
}

var errPacked = errors.New("a packed health view is malformed")

// unpack decodes a packed view, each state confirmed at published.
func unpack(b []byte, published time.Time, in interner) ([]pools.OriginState, error) {
	if len(b) == 0 || b[0] != packFormat {
		return nil, fmt.Errorf("%w: format %v", errPacked, b[:min(len(b), 1)])
	}
	body, err := io.ReadAll(flate.NewReader(bytes.NewReader(b[1:])))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPacked, err)
	}
	bad := false
	uv := func() uint64 {
		v, k := binary.Uvarint(body)
		if k <= 0 {
			bad, body = true, nil
			return 0
		}
		body = body[k:]
		return v
	}
	bs := func() []byte {
		l := uv()
		if l > uint64(len(body)) {
			bad, body = true, nil
			return nil
		}
		s := body[:l]
		body = body[l:]
		return s
	}
	nt := uv()
	if nt > uint64(len(body)) {
		return nil, errPacked
	}
	type entry struct {
		s  string
		ms []pools.MonitorState
	}
	table := make([]entry, nt)
	for i := range table {
		table[i].s = in.get(bs())
	}
	n := uv()
	if bad || n > uint64(len(body)) {
		return nil, errPacked
	}
	// Monitor lists are decoded once each, when a state names them.
	decoded := make([]bool, nt)
	out := make([]pools.OriginState, n)
	for i := range out {
		p, o := uv(), bs()
		var healthy bool
		if len(body) > 0 {
			healthy, body = body[0] == 1, body[1:]
		} else {
			bad = true
		}
		r, rtt, m := uv(), uv(), uv()
		if bad || p >= nt || r >= nt || m >= nt {
			return nil, errPacked
		}
		if !decoded[m] {
			if table[m].ms, err = decodeMonitors([]byte(table[m].s)); err != nil {
				return nil, err
			}
			decoded[m] = true
		}
		out[i] = pools.OriginState{Pool: table[p].s, Origin: in.get(o), Healthy: healthy, Reason: table[r].s,
			RTT: time.Duration(rtt), CheckedAt: published, Monitors: table[m].ms}
	}
	return out, nil
}
