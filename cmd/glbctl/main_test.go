package main

import (
	"bytes"
	"context"
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
