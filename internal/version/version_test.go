package version

import (
	"runtime"
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v1.2.3"
	if got, want := Line("glbctl"), "glbctl v1.2.3 "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	Version = ""
	if got := String(); !strings.HasPrefix(got, "dev") {
		t.Errorf("String without a set version = %q, want dev...", got)
	}
}
