package geodata

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/glb-dns/glb/internal/testnode"
)

// twoVersions are two databases that disagree about 1.2.3.4, so that a
// reader can tell which one answered.
var (
	versionUS = []testNet{{cidr: "1.2.0.0/16", country: "US", continent: "NA", sub: "CA", lat: 37.77, lon: -122.42, coords: true}}
	versionFR = []testNet{{cidr: "1.2.3.0/24", country: "FR", continent: "EU", lat: 48.86, lon: 2.35, coords: true}}
)

func TestReloadUnderConcurrentLookups(t *testing.T) {
	r, path := cityResolver(t, versionUS)
	us := r.ResolveAddr(addr("1.2.3.4"), nil)
	writeDB(t, path, "GeoIP2-City", versionFR)
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	fr := r.ResolveAddr(addr("1.2.3.4"), nil)
	if us.Country != "US" || fr.Country != "FR" {
		t.Fatalf("versions resolve to %q and %q, want US and FR", us.Country, fr.Country)
	}

	const readers = 3
	var (
		stop    atomic.Bool
		started sync.WaitGroup
		done    sync.WaitGroup
		lookups atomic.Int64
		bad     atomic.Value
	)
	started.Add(readers)
	done.Add(readers)
	for range readers {
		go func() {
			defer done.Done()
			started.Done()
			for !stop.Load() {
				got := r.ResolveAddr(addr("1.2.3.4"), nil)
				if got != us && got != fr {
					bad.Store(got)
				}
				lookups.Add(1)
			}
		}()
	}
	started.Wait()
	for i := range 8 {
		v := versionUS
		if i%2 == 1 {
			v = versionFR
		}
		writeDB(t, path, "GeoIP2-City", v)
		if err := r.Reload(); err != nil {
			t.Fatal(err)
		}
		runtime.GC() // lets replaced databases be unmapped while readers run
	}
	stop.Store(true)
	done.Wait()
	if b := bad.Load(); b != nil {
		t.Fatalf("a lookup during reloads saw %+v, neither version", b)
	}
	if lookups.Load() == 0 {
		t.Fatal("no lookups ran during the reloads")
	}
	if got := r.ResolveAddr(addr("1.2.3.4"), nil); got != fr {
		t.Errorf("after the last reload: %+v, want the FR version", got)
	}
}

func TestReplacedDatabaseIsUnmapped(t *testing.T) {
	// Not parallel: it counts mappings process-wide.
	r, _ := cityResolver(t, versionUS)
	runtime.GC()
	before := mappedDatabases.Load()
	for range 3 {
		if err := r.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for mappedDatabases.Load() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d mappings live after reloads, want %d: replaced databases are never unmapped", mappedDatabases.Load(), before)
		}
		runtime.GC()
		runtime.Gosched()
	}
	if got := r.ResolveAddr(addr("1.2.3.4"), nil); got.Country != "US" {
		t.Errorf("current database answers %+v", got)
	}
}

func TestBadFileRejectedOldKept(t *testing.T) {
	t.Parallel()
	r, path := newTestResolver(t)
	want := r.ResolveAddr(addr("1.2.3.4"), nil)
	info, _ := r.Info()

	valid, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		write   func(t *testing.T)
		wantErr string
	}{
		{"not a database", func(t *testing.T) { writeBytes(t, path, []byte("<html>404 not found</html>")) }, "invalid MaxMind DB file"},
		{"truncated", func(t *testing.T) { writeBytes(t, path, valid[:len(valid)/2]) }, ""},
		{"empty", func(t *testing.T) { writeBytes(t, path, nil) }, "bad size 0"},
		{"corrupt search tree", func(t *testing.T) {
			b := append([]byte(nil), valid...)
			for i := 0; i < 64; i++ {
				b[i] = 0xff
			}
			writeBytes(t, path, b)
		}, "search tree is corrupt"},
		{"corrupt records", func(t *testing.T) {
			b := append([]byte(nil), valid...)
			start := dataSectionStart(t, valid)
			for i := start; i < start+256 && i < len(b); i++ {
				b[i] = 0xff
			}
			writeBytes(t, path, b)
		}, "record of"},
		{"ASN database", func(t *testing.T) {
			writeDB(t, path, "GeoLite2-ASN", []testNet{{cidr: "1.2.0.0/16", country: "US"}})
		}, "does not support the GeoLite2-ASN database"},
		{"unknown database type", func(t *testing.T) {
			writeDB(t, path, "Something-Else", []testNet{{cidr: "1.2.0.0/16", country: "US"}})
		}, `does not support the "Something-Else" database type`},
		{"missing", func(t *testing.T) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "no such file"},
	}
	for _, c := range cases {
		c.write(t)
		err := r.Reload()
		if err == nil {
			t.Errorf("%s: Reload accepted it", c.name)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: error %q should name the file and say %q", c.name, err, c.wantErr)
		}
		if got := r.ResolveAddr(addr("1.2.3.4"), nil); got != want {
			t.Errorf("%s: after the rejected reload: %+v, want %+v", c.name, got, want)
		}
		if got, _ := r.Info(); got != info {
			t.Errorf("%s: Info changed to %+v", c.name, got)
		}
	}
	if _, err := NewResolver(Config{Path: path, Logger: discardLogger()}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("NewResolver on a missing file: %v, want an error naming it", err)
	}
}

// dataSectionStart is the offset of the first record in a database file.
func dataSectionStart(t *testing.T, file []byte) int {
	t.Helper()
	r, err := maxminddb.OpenBytes(file)
	if err != nil {
		t.Fatal(err)
	}
	return int(r.Metadata.NodeCount*r.Metadata.RecordSize/4) + 16
}

func TestVerifyOption(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "city.mmdb")
	writeDB(t, path, "GeoIP2-City", cityNets)
	r, err := NewResolver(Config{Path: path, Verify: true, PollInterval: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatalf("a good database failed full verification: %v", err)
	}
	valid, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Full verification runs before the probes and names itself.
	b := append([]byte(nil), valid...)
	b[dataSectionStart(t, valid)] = 0xff
	writeBytes(t, path, b)
	if err := r.Reload(); err == nil || !strings.Contains(err.Error(), "verify") {
		t.Errorf("Reload with Verify on a corrupt file: %v, want a verify error", err)
	}
	if got := r.ResolveAddr(addr("1.2.3.4"), nil); got.Country != "US" {
		t.Errorf("after the rejected reload: %+v", got)
	}
}

func writeBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	writeFileAtomic(t, path, func(f *os.File) error {
		_, err := f.Write(b)
		return err
	})
}

func TestPollReloadsChangedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "city.mmdb")
	writeDB(t, path, "GeoIP2-City", versionUS)
	r, err := NewResolver(Config{Path: path, PollInterval: 5 * time.Millisecond, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		r.Run(ctx)
		close(stopped)
	}()
	defer func() {
		cancel()
		<-stopped
	}()

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		testnode.Eventually(t, 5*time.Second, what, func() (bool, string) { return cond(), "not yet" })
	}
	writeDB(t, path, "GeoIP2-City", versionFR)
	waitFor("the new file to be loaded", func() bool { return r.ResolveAddr(addr("1.2.3.4"), nil).Country == "FR" })

	// A bad file is rejected once; the good one stays, and the next good
	// file is picked up.
	_, rejected := r.Loads()
	writeBytes(t, path, []byte("garbage"))
	waitFor("the bad file to be rejected", func() bool { _, n := r.Loads(); return n > rejected })
	writeDB(t, path+".next", "GeoIP2-City", versionUS)
	if got := r.ResolveAddr(addr("1.2.3.4"), nil).Country; got != "FR" {
		t.Fatalf("after a bad file: %q, want FR kept", got)
	}
	if err := os.Rename(path+".next", path); err != nil {
		t.Fatal(err)
	}
	waitFor("the next good file to be loaded", func() bool { return r.ResolveAddr(addr("1.2.3.4"), nil).Country == "US" })
}
