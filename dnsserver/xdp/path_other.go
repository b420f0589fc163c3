//go:build !linux

package xdp

import "errors"

// Path is the XDP path attached to one interface (Linux only).
type Path struct{}

// Attach fails: XDP and AF_XDP exist on Linux only.
func Attach(Config) (*Path, error) { return nil, errors.New("xdp: Linux only") }

// Mode is empty: nothing is attached.
func (p *Path) Mode() string { return "" }

// ZeroCopy is false: nothing is attached.
func (p *Path) ZeroCopy() bool { return false }

// Close does nothing.
func (p *Path) Close() error { return nil }
