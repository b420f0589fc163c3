package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/glb-dns/glb/pools"
)

// lastGoodFile is where a node keeps the last configuration it compiled,
// so that it can answer DNS after a restart while the store is down
// (static stability, SPEC §5).
const lastGoodFile = "last-good-config.json"

// saveLastGood writes cfg atomically: a crash mid-write must never leave a
// torn file that the next start would refuse. enc keeps the encoding of
// the objects it has written before (nil encodes everything).
func saveLastGood(dir string, cfg *pools.Config, enc *configEncoder) error {
	tmp, err := os.CreateTemp(dir, lastGoodFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 256<<10)
	if enc == nil {
		enc = &configEncoder{}
	}
	err = enc.encode(w, cfg)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, lastGoodFile))
}

// configEncoder writes a configuration as json.Marshal would, keeping the
// encoding of each pool and load balancer by (id, revision, modified):
// they are nearly all of a large estate, and one change touches few, so
// that a write after a change costs a copy of the file rather than
// encoding a hundred thousand origins again (which took the CPU the next
// change needs).
type configEncoder struct {
	pools, lbs map[string]encoded
}

type encoded struct {
	rev      int64
	modified time.Time
	doc      []byte
}

func (e *configEncoder) encode(w io.Writer, cfg *pools.Config) error {
	// The fields of pools.Config in order, as json.Marshal writes them.
	out := &errWriter{w: w}
	out.raw(`{"revision":`)
	out.json(cfg.Revision)
	out.raw(`,"zones":`)
	out.json(cfg.Zones)
	out.raw(`,"monitors":`)
	out.json(cfg.Monitors)
	out.raw(`,"pools":`)
	e.pools = encodeList(out, cfg.Pools, e.pools, func(p *pools.Pool) *pools.Meta { return &p.Meta })
	out.raw(`,"load_balancers":`)
	e.lbs = encodeList(out, cfg.LoadBalancers, e.lbs, func(l *pools.LoadBalancer) *pools.Meta { return &l.Meta })
	out.raw(`,"networks":`)
	out.json(cfg.Networks)
	if len(cfg.DNSSECKeys) > 0 {
		out.raw(`,"dnssec_keys":`)
		out.json(cfg.DNSSECKeys)
	}
	if len(cfg.Shifts) > 0 {
		out.raw(`,"shifts":`)
		out.json(cfg.Shifts)
	}
	out.raw("}")
	return out.err
}

// encodeList writes list as a JSON array (null when nil, as json.Marshal
// does), reusing the kept encodings of unchanged objects; it returns what
// to keep for the next write: the encodings of this list only.
func encodeList[T any](out *errWriter, list []T, kept map[string]encoded, meta func(*T) *pools.Meta) map[string]encoded {
	if list == nil {
		out.raw("null")
		return nil
	}
	next := make(map[string]encoded, len(list))
	out.raw("[")
	for i := range list {
		if i > 0 {
			out.raw(",")
		}
		m := meta(&list[i])
		e, ok := kept[m.ID]
		if !ok || e.rev != m.Revision || !e.modified.Equal(m.ModifiedOn) {
			doc, err := json.Marshal(&list[i])
			if err != nil {
				out.fail(err)
				return nil
			}
			e = encoded{rev: m.Revision, modified: m.ModifiedOn, doc: doc}
		}
		next[m.ID] = e
		out.bytes(e.doc)
	}
	out.raw("]")
	return next
}

// errWriter keeps the first error, so that encode checks once.
type errWriter struct {
	w   io.Writer
	err error
}

func (w *errWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *errWriter) bytes(b []byte) {
	if w.err == nil {
		_, w.err = w.w.Write(b)
	}
}

func (w *errWriter) raw(s string) { w.bytes([]byte(s)) }

func (w *errWriter) json(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.fail(err)
		return
	}
	w.bytes(b)
}

// loadLastGood reads the last good configuration; os.ErrNotExist when a
// node never had one.
func loadLastGood(dir string) (*pools.Config, error) {
	b, err := os.ReadFile(filepath.Join(dir, lastGoodFile))
	if err != nil {
		return nil, err
	}
	var cfg pools.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", lastGoodFile, err)
	}
	return &cfg, nil
}
