package main

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// groupConfig: pool local is checked by a group of an open TCP port and a
// closed one, the closed one monitoring only.
const groupConfig = `monitors:
  - {id: open, type: tcp, port: %d, interval: 1, timeout: 1, retries: 0}
  - {id: closed, type: tcp, port: %d, interval: 1, timeout: 1, retries: 0}
pools:
  - id: local
    name: local
    monitors:
      - {monitor: open, must_be_healthy: true}
      - {monitor: closed, monitoring_only: true}
    origins:
      - {name: lo, address: 127.0.0.1}
`

// TestMonitorGroupFile: a file's monitor group applies, a second diff
// finds nothing, get and health show the group and each monitor's view,
// and a group naming a monitor the file lacks is refused at its line.
func TestMonitorGroupFile(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	file := writeFile(t, "glb.yaml", fmt.Sprintf(groupConfig, checkedPort(t), closed))
	n.mustCtl(exitOK, "apply", "-f", file)
	n.mustCtl(exitOK, "diff", "-f", file)
	if out := n.mustCtl(exitOK, "get", "pools"); !strings.Contains(out, "open(must),closed(only)") {
		t.Errorf("get pools does not name the group:\n%s", out)
	}
	eventually(t, 10*time.Second, "each monitor's view", func() (bool, string) {
		_, out, errOut := n.ctl("health", "local")
		return strings.Contains(out, "pool local (local): healthy") && strings.Contains(out, "monitors open(must),closed(only)") &&
			strings.Contains(out, "lo      open     must be healthy  up    1         0") &&
			strings.Contains(out, "lo      closed   monitoring only  down  0         1           connection refused"), out + errOut
	})

	bad := writeFile(t, "bad.yaml", "pools:\n  - id: p\n    name: p\n    monitors:\n      - {monitor: nope}\n    origins: [{name: a, address: 192.0.2.1}]\n")
	if code, _, errOut := n.ctl("diff", "-f", bad); code != exitUsage || !strings.Contains(errOut, `bad.yaml:5: pools[0].monitors[0].monitor: no monitor with id "nope"`) {
		t.Errorf("a group naming a missing monitor: exit %d: %s", code, errOut)
	}
}
