package main

import (
	"context"
	"errors"
	"fmt"
	"io"
)

func runDiff(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	var c common
	fs := newFlags("diff", env, stderr, &c)
	file := fs.String("f", "", "configuration file, YAML or JSON (- for standard input)")
	prune := fs.Bool("prune", false, "also show the objects apply --prune would delete")
	planFile := fs.String("plan", "", "write the revisions this diff saw here, for apply --plan")
	if _, err := parseFlags(fs, args, &c); err != nil {
		if code := usageError(stderr, err); code != exitOK {
			return exitTrouble
		}
		return exitOK
	}
	if *file == "" {
		usageError(stderr, errors.New("diff: -f FILE is required"))
		return exitTrouble
	}
	cl, err := newClient(c)
	if err != nil {
		usageError(stderr, err)
		return exitTrouble
	}
	f, p, err := load(ctx, cl, *file, *prune)
	if err != nil {
		fmt.Fprintln(stderr, "glbctl:", err)
		return exitTrouble
	}
	if *planFile != "" {
		if err := writeSavedPlan(*planFile, cl.base, f, p); err != nil {
			fmt.Fprintln(stderr, "glbctl:", err)
			return exitTrouble
		}
	}
	printPlan(stdout, p)
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
}
