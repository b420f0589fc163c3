// Package version names the build of glb's commands, so that glbd and
// glbctl print it alike.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is set at build time with
// -ldflags "-X github.com/glb-dns/glb/internal/version.Version=v1.2.3";
// empty means a development build, named by its VCS revision.
var Version = ""

// String is the build's version: Version, else "dev-" and the first 12
// digits of the commit (with "+dirty" for uncommitted changes), else "dev".
func String() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) < 12 {
		return "dev"
	}
	v := "dev-" + rev[:12]
	if dirty {
		v += "+dirty"
	}
	return v
}

// Line is what "COMMAND version" prints: the command, its version, the Go
// release and the platform, e.g. "glbd v1.2.3 go1.26.0 linux/amd64".
func Line(command string) string {
	return command + " " + String() + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// Commit is the VCS revision the build was made from ("" when unknown),
// with "+dirty" for uncommitted changes.
func Commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}
