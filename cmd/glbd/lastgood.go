package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/glb-dns/glb/pools"
)

// lastGoodFile is where a node keeps the last configuration it compiled,
// so that it can answer DNS after a restart while the store is down
// (static stability, SPEC §5).
const lastGoodFile = "last-good-config.json"

// saveLastGood writes cfg atomically: a crash mid-write must never leave a
// torn file that the next start would refuse.
func saveLastGood(dir string, cfg *pools.Config) error {
	b, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, lastGoodFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, lastGoodFile))
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
