package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// savedPlan ties an apply to the diff a person or a CI job reviewed: the
// file's bytes, the server, and the revision of every object the diff
// looked at. apply --plan refuses to write when any of them moved, so an
// edit made through the API after the review is reported, not overwritten.
type savedPlan struct {
	Version    int              `json:"version"`
	Server     string           `json:"server"`
	File       string           `json:"file"`
	FileSHA256 string           `json:"file_sha256"`
	Prune      bool             `json:"prune"`
	Revisions  map[string]int64 `json:"revisions"`
}

const savedPlanVersion = 1

func writeSavedPlan(name, server string, f *configFile, p *plan) error {
	sp := savedPlan{
		Version: savedPlanVersion, Server: server, File: f.name, FileSHA256: f.sum,
		Prune: p.prune, Revisions: p.revisions(),
	}
	b, err := json.MarshalIndent(sp, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(name, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

func readSavedPlan(name string) (*savedPlan, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	var sp savedPlan
	if err := json.Unmarshal(b, &sp); err != nil {
		return nil, fmt.Errorf("%s: not a plan written by glbctl diff --plan: %w", name, err)
	}
	if sp.Version != savedPlanVersion {
		return nil, fmt.Errorf("%s: plan version %d; this glbctl reads version %d", name, sp.Version, savedPlanVersion)
	}
	return &sp, nil
}

// check compares the saved plan with the plan made now. It returns every
// object that changed on the server since the diff, or an error when the
// plan is for another file, server or prune setting.
func (sp *savedPlan) check(server string, f *configFile, p *plan) ([]string, error) {
	if sp.Server != server {
		return nil, fmt.Errorf("the plan was made against %s, not %s", sp.Server, server)
	}
	if sp.FileSHA256 != f.sum {
		return nil, fmt.Errorf("%s changed since the plan was made; run glbctl diff again", f.name)
	}
	if sp.Prune != p.prune {
		return nil, fmt.Errorf("the plan was made with --prune=%t; apply with the same", sp.Prune)
	}
	now := p.revisions()
	keys := slices.Sorted(maps.Keys(now))
	for k := range sp.Revisions {
		if _, ok := now[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var moved []string
	for _, k := range keys {
		was, wasSeen := sp.Revisions[k]
		is, isSeen := now[k]
		switch {
		case !wasSeen:
			moved = append(moved, fmt.Sprintf("%s: created on the server (revision %d) after the diff", k, is))
		case !isSeen:
			// Only a deletion's object can vanish from the plan: the file is the same.
			moved = append(moved, fmt.Sprintf("%s: deleted on the server after the diff", k))
		case was != is && is == 0:
			moved = append(moved, fmt.Sprintf("%s: deleted on the server after the diff (it was at revision %d)", k, was))
		case was != is && was == 0:
			moved = append(moved, fmt.Sprintf("%s: created on the server (revision %d) after the diff", k, is))
		case was != is:
			moved = append(moved, fmt.Sprintf("%s: at revision %d on the server, the diff saw %d", k, is, was))
		}
	}
	return moved, nil
}

// staleError reports objects edited on the server after the reviewed diff.
type staleError struct{ moved []string }

func (e *staleError) Error() string {
	return "changed on the server since the diff; nothing was written (run glbctl diff again and review):\n  " +
		strings.Join(e.moved, "\n  ")
}
