package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestUsage: bad usage exits 2 (for diff too, whose 1 means differences),
// and help never prints the token taken from the environment.
func TestUsage(t *testing.T) {
	t.Parallel()
	env := func(k string) string {
		if k == "GLB_API_TOKEN" {
			return "s3cret-from-env"
		}
		return ""
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{nil, exitUsage},
		{[]string{"frob"}, exitUsage},
		{[]string{"diff"}, exitTrouble},
		{[]string{"apply"}, exitUsage},
		{[]string{"apply", "-f", "x.yaml", "extra"}, exitUsage},
		{[]string{"get"}, exitUsage},
		{[]string{"get", "pools", "-o", "xml"}, exitUsage},
		{[]string{"explain", "www"}, exitUsage},
		{[]string{"apply", "-f", "x.yaml", "--server", "127.0.0.1:8080"}, exitUsage},
		{[]string{"get", "-h"}, exitOK},
		{[]string{"versions"}, exitUsage},
		{[]string{"rollback", "www"}, exitUsage},
		{[]string{"rollback", "www", "--version", "x"}, exitUsage},
		{[]string{"diff", "www", "--version", "0"}, exitTrouble},
		{[]string{"diff", "--version=2"}, exitTrouble},
		{[]string{"help"}, exitOK},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), c.args, env, &out, &errOut); code != c.code {
			t.Errorf("glbctl %q: exit %d, want %d\n%s", c.args, code, c.code, errOut.String())
		}
		if strings.Contains(out.String()+errOut.String(), "s3cret") {
			t.Errorf("glbctl %q printed the token", c.args)
		}
	}
}

// TestVersionLikeGlbd: "glbctl version" prints the line "glbd version"
// prints, with its own name.
func TestVersionLikeGlbd(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"version"}, func(string) string { return "" }, &out, &errOut); code != exitOK {
		t.Fatalf("glbctl version: exit %d: %s", code, errOut.String())
	}
	b, err := exec.Command(glbdBin, "version").Output()
	if err != nil {
		t.Fatalf("glbd version: %v", err)
	}
	ctl, d := strings.Fields(out.String()), strings.Fields(string(b))
	if len(ctl) != 4 || len(d) != 4 || ctl[0] != "glbctl" || d[0] != "glbd" || !slices.Equal(ctl[2:], d[2:]) {
		t.Errorf("glbctl version %q and glbd version %q are not alike", out.String(), b)
	}
}

// TestFlagErrorPrintedOnce: a bad flag is named once, without the page
// of flags that -h prints.
func TestFlagErrorPrintedOnce(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"get", "pools", "--bogus"}, func(string) string { return "" }, &out, &errOut); code != exitUsage {
		t.Fatalf("exit %d", code)
	}
	if n := strings.Count(errOut.String(), "-bogus"); n != 1 || strings.Contains(errOut.String(), "Usage of") {
		t.Errorf("stderr names -bogus %d times (want once, no usage):\n%s", n, errOut.String())
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"get", "-h"}, func(string) string { return "" }, &out, &errOut); code != exitOK || !strings.Contains(errOut.String(), "-o string") {
		t.Errorf("get -h: exit %d, flags not listed:\n%s", code, errOut.String())
	}
}

// TestEveryCommandListed: the one usage text and docs/glbctl.md name
// every command glbctl has, so that a new command cannot be left out of
// either.
func TestEveryCommandListed(t *testing.T) {
	t.Parallel()
	docs, err := os.ReadFile("../../docs/glbctl.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range commands {
		if !strings.Contains(usage, "\n  glbctl "+name+" ") && !strings.Contains(usage, "\n  glbctl "+name+"\n") {
			t.Errorf("the usage text does not list glbctl %s", name)
		}
		if !strings.Contains(string(docs), "glbctl "+name+" ") {
			t.Errorf("docs/glbctl.md does not mention glbctl %s", name)
		}
	}
}
