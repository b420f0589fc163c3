package main

import (
	"context"
	"fmt"
	"io"
	"strings"
)

func runDiff(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	if isVersionDiff(args) {
		return runVersionDiff(ctx, args, env, stdout, stderr) // versions.go
	}
	a, cl, err := parseFileArgs("diff", args, env, stderr,
		"also show the objects apply --prune would delete",
		"write the revisions this diff saw here, for apply --plan", nil)
	if err != nil {
		if usageError(stderr, err) == exitOK {
			return exitOK
		}
		return exitTrouble
	}
	f, p, err := load(ctx, cl, a.file, a.prune)
	if err != nil {
		fmt.Fprintln(stderr, "glbctl:", err)
		return exitTrouble
	}
	if a.plan != "" {
		if err := writeSavedPlan(a.plan, cl.base, f, p); err != nil {
			fmt.Fprintln(stderr, "glbctl:", err)
			return exitTrouble
		}
	}
	printPlan(stdout, p)
	if err := printImpact(ctx, stdout, cl, p); err != nil {
		fmt.Fprintln(stderr, "glbctl: the real-traffic preview:", err)
		return exitTrouble
	}
	if p.changes() > 0 {
		return exitDiffers
	}
	return exitOK
}

// printPlan prints each step that writes, with its fields, then a summary.
func printPlan(w io.Writer, p *plan) {
	var create, update, del, same int
	for _, s := range p.steps {
		switch s.act {
		case actUnchanged:
			same++
			continue
		case actCreate:
			create++
		case actUpdate:
			update++
		case actDelete:
			del++
		}
		fmt.Fprintln(w, describe(s))
		for _, d := range s.fields {
			fmt.Fprintln(w, "    "+d.String())
		}
	}
	fmt.Fprintf(w, "%d to create, %d to update, %d to delete, %d unchanged\n", create, update, del, same)
	if len(p.kept) > 0 {
		fmt.Fprintf(w, "%d on the server but not in the file, kept (--prune deletes them): %s\n", len(p.kept), strings.Join(p.kept, ", "))
	}
}
