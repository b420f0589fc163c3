//go:build unix

package geodata

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps a database read-only and shared: the page cache holds it
// once however many readers (and processes) use it.
func mapFile(f *os.File, size int) ([]byte, error) {
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return b, nil
}

func unmapFile(b []byte) { _ = unix.Munmap(b) }
