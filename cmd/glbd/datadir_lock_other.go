//go:build !unix

package main

// lockDataDir does nothing where flock(2) is missing; the embedded
// store's own lock still keeps a second glbd out.
func lockDataDir(string) (func(), error) { return func() {}, nil }
