package storetest

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// testCookieSecret: one secret per store, made on first use even when
// nodes ask at once, kept until it is older than rotateAfter, then
// replaced with the old one kept as previous.
func testCookieSecret(t *testing.T, c context.Context, s pools.Store) {
	var wg sync.WaitGroup
	got := make([]pools.CookieSecret, 4)
	errs := make([]error, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = s.CookieSecret(c, 0)
		}()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatalf("cookie secret: %v", errs[i])
		}
		if len(got[i].Current) != pools.CookieSecretLen || !bytes.Equal(got[i].Current, got[0].Current) {
			t.Fatalf("concurrent first uses made different secrets: %x and %x", got[i].Current, got[0].Current)
		}
	}
	if got[0].Previous != nil {
		t.Errorf("previous %x before any rotation", got[0].Previous)
	}
	again, err := s.CookieSecret(c, time.Hour)
	if err != nil || !bytes.Equal(again.Current, got[0].Current) {
		t.Fatalf("a fresh secret changed: %x, %v", again.Current, err)
	}
	rotated, err := s.CookieSecret(c, time.Nanosecond)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(rotated.Current, got[0].Current) || !bytes.Equal(rotated.Previous, got[0].Current) {
		t.Errorf("rotation: current %x previous %x, want a new one and %x", rotated.Current, rotated.Previous, got[0].Current)
	}
	if r, err := s.CookieSecret(c, 0); err != nil || !bytes.Equal(r.Current, rotated.Current) || !bytes.Equal(r.Previous, rotated.Previous) {
		t.Errorf("rotation not stored: %+v, %v", r, err)
	}
}
