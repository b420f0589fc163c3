package pgtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// clusterChildEnv makes the test binary a child that starts a cluster,
// prints where it is, and waits to be killed.
const clusterChildEnv = "GLB_PGTEST_CLUSTER_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(clusterChildEnv) != "" {
		c, err := startCluster()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(c.url, c.dir)
		select {}
	}
	os.Exit(m.Run())
}

// A throwaway cluster serves while its test binary runs and is gone, its
// processes and its directory, once the binary dies, here by SIGKILL, the
// one end that runs no code of the binary's own.
func TestThrowawayClusterGoneWhenProcessKilled(t *testing.T) {
	t.Parallel()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), clusterChildEnv+"=1")
	var stderr bytes.Buffer
	child.Stderr = &stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	url, dir, ok := strings.Cut(strings.TrimSpace(line), " ")
	if err != nil || !ok {
		child.Process.Kill()
		child.Wait()
		t.Fatalf("child started no cluster (%v):\n%s", err, stderr.String())
	}
	if err := ping(url); err != nil {
		t.Errorf("cluster at %s does not answer: %v", url, err)
	}
	if _, err := os.Stat(dir + "/data/PG_VERSION"); err != nil {
		t.Errorf("cluster directory: %v", err)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, statErr := os.Stat(dir)
		pingErr := pingQuick(url)
		if errors.Is(statErr, os.ErrNotExist) && pingErr != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30s after the test binary was killed: directory %s: %v; server at %s: %v", dir, statErr, url, pingErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out, _ := exec.Command("pgrep", "-f", dir).Output(); len(out) > 0 {
		t.Errorf("processes of the cluster still running:\n%s", out)
	}
}

func pingQuick(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return pingCtx(ctx, url)
}
