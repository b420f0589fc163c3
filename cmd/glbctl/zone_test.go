package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/knottest"
)

// TestZoneImportExport: glbctl shows a dry run's diff and stores nothing,
// imports, and the node then answers the file's records; export writes
// the zone with them, and a bad file names its lines.
func TestZoneImportExport(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	code, z := n.call("POST", "/api/v1/zones", map[string]any{"name": "move.example", "nameservers": []string{"ns1.move.example"}}, "")
	if code != 201 {
		t.Fatalf("zone: %d %v", code, z)
	}
	file := writeFile(t, "move.zone", "$ORIGIN move.example.\n$TTL 600\n@ IN SOA ns1 hostmaster 5 3600 600 86400 60\nptr IN PTR web.move.example.\nloc IN LOC 52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m\n")
	before := n.mustCtl(exitOK, "zone", "export", "move.example")

	dry := n.mustCtl(exitOK, "zone", "import", "move.example", file, "--dry-run")
	for _, want := range []string{"dry run of a merge into zone move.example: nothing stored", "+ ptr.move.example 600 PTR web.move.example.",
		"+ loc.move.example 600 LOC \\# 16 ", "2 added, 0 removed, 0 changed, 0 unchanged", "not applied: the file's SOA serial is 5"} {
		if !strings.Contains(dry, want) {
			t.Errorf("dry run lacks %q:\n%s", want, dry)
		}
	}
	if after := n.mustCtl(exitOK, "zone", "export", "move.example"); after != before {
		t.Errorf("a dry run changed the export:\n%s\n---\n%s", before, after)
	}
	if out := n.mustCtl(exitOK, "zone", "import", z["id"].(string), file); !strings.Contains(out, "merge into zone "+z["id"].(string)+" stored") {
		t.Errorf("import:\n%s", out)
	}
	eventually(t, 10*time.Second, "the node answers the imported PTR", func() (bool, string) {
		got := n.dig("ptr.move.example", "PTR")
		return got == "NOERROR ptr.move.example. PTR web.move.example.", got
	})
	exp := n.mustCtl(exitOK, "zone", "export", "move.example")
	if !strings.Contains(exp, "ptr.move.example.\t600\tIN\tPTR\tweb.move.example.\n") || !strings.Contains(exp, "loc.move.example.\t600\tIN\tLOC\t\\# 16 ") {
		t.Errorf("export:\n%s", exp)
	}

	bad := writeFile(t, "bad.zone", "$ORIGIN move.example.\nok IN A 192.0.2.1\nx.other.example. IN A 192.0.2.2\n$INCLUDE more.zone\n")
	code, _, errOut := n.ctl("zone", "import", "move.example", bad)
	if code != exitFailed || !strings.Contains(errOut, "line 3: ") || !strings.Contains(errOut, "line 4: $INCLUDE") {
		t.Errorf("bad file: exit %d\n%s", code, errOut)
	}
	n.mustCtl(exitUsage, "zone", "import", "move.example")
	if code, _, errOut := n.ctl("zone", "export", "nope.example"); code != exitFailed || !strings.Contains(errOut, "nope.example") {
		t.Errorf("unknown zone: exit %d\n%s", code, errOut)
	}
}

// TestZoneImportAXFR: glbctl pulls a zone from a real Knot with TSIG,
// shows the dry run, imports, and the node answers the records.
func TestZoneImportAXFR(t *testing.T) {
	knottest.NeedTool(t, "kdig", "knot-dnsutils")
	t.Parallel()
	const secret = "c2VjcmV0IG9mIHRoZSBzZXJ2ZXIgYmVpbmcgbGVmdA=="
	file := writeFile(t, "old.zone", "$ORIGIN move.example.\n$TTL 600\n@ SOA ns1 hostmaster 7 3600 600 86400 60\n@ NS ns1\nns1 A 192.0.2.53\nptr PTR web.move.example.\n")
	knot := knottest.Start(t, func(string) string {
		return "key:\n  - id: old\n    algorithm: hmac-sha256\n    secret: " + secret + "\n\nacl:\n  - id: xfr\n    address: 127.0.0.0/8\n    key: old\n    action: transfer\n\n" +
			"zone:\n  - domain: move.example\n    file: " + file + "\n    zonefile-sync: -1\n    journal-content: none\n    acl: xfr\n"
	}, "move.example")
	n := startNode(t, "--outbound-allow", "127.0.0.0/8")
	if code, z := n.call("POST", "/api/v1/zones", map[string]any{"name": "move.example", "nameservers": []string{"ns1.move.example"}}, ""); code != 201 {
		t.Fatalf("zone: %d %v", code, z)
	}
	server := "127.0.0.1:" + strconv.Itoa(knot.Port)
	dry := n.mustCtl(exitOK, "zone", "import", "move.example", "--axfr", server, "--tsig", "old:hmac-sha256:"+secret, "--dry-run")
	if !strings.Contains(dry, "+ ptr.move.example 600 PTR web.move.example.") || !strings.Contains(dry, "nothing stored") {
		t.Errorf("dry run:\n%s", dry)
	}
	n.mustCtl(exitOK, "zone", "import", "move.example", "--axfr", server, "--tsig", "old:hmac-sha256:"+secret)
	eventually(t, 10*time.Second, "the node answers the pulled PTR", func() (bool, string) {
		got := n.dig("ptr.move.example", "PTR")
		return got == "NOERROR ptr.move.example. PTR web.move.example.", got
	})
	code, _, errOut := n.ctl("zone", "import", "move.example", "--axfr", server, "--tsig", "old:hmac-sha256:d3Jvbmc=")
	if code != exitFailed || !strings.Contains(errOut, "axfr.tsig") {
		t.Errorf("wrong key: exit %d\n%s", code, errOut)
	}
	n.mustCtl(exitUsage, "zone", "import", "move.example", "--tsig", "old:hmac-sha256:"+secret, "file.zone")
}
