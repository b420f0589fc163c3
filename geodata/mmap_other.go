//go:build !unix

package geodata

import (
	"io"
	"os"
)

// mapFile reads the database into memory where mmap is not available.
func mapFile(f *os.File, size int) ([]byte, error) {
	b := make([]byte, size)
	_, err := io.ReadFull(f, b)
	return b, err
}

func unmapFile([]byte) {}
