package xdp

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestUMEMOnHugePages: the frames start on a huge-page boundary, span
// exactly the UMEM, and where the kernel offers transparent huge pages
// their mapping may take them (a frame's first touch is a TLB miss on
// small pages).
func TestUMEMOnHugePages(t *testing.T) {
	s := &socket{fd: -1}
	if err := s.mapUMEM(); err != nil {
		t.Fatal(err)
	}
	defer s.close()
	start := uintptr(unsafe.Pointer(&s.umem[0]))
	if start%hugePage != 0 {
		t.Errorf("UMEM starts at %#x, not on a %d-byte boundary", start, hugePage)
	}
	if len(s.umem) != numFrames*frameSize {
		t.Errorf("UMEM is %d bytes, want %d", len(s.umem), numFrames*frameSize)
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("no transparent huge pages here (%q, %v)", mode, err)
	}
	if got := smapsField(t, start, "THPeligible:"); got != "1" {
		t.Errorf("the UMEM's mapping has THPeligible %q, want 1", got)
	}
}

// smapsField is a field of the mapping of this process holding addr.
func smapsField(t *testing.T, addr uintptr, field string) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, field) {
			return strings.TrimSpace(strings.TrimPrefix(line, field))
		}
	}
	t.Fatalf("no %s for %#x in /proc/self/smaps", field, addr)
	return ""
}
