package externaldns

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/external-dns/pkg/apis/externaldns"
)

// The deploy example's arguments are flags the pinned ExternalDNS and
// this glb-externaldns take, so the manifest cannot drift from either.
func TestManifestFlags(t *testing.T) {
	f, err := os.Open("../../deploy/kubernetes/external-dns-glb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args := map[string][]string{}
	container := ""
	nameLine := regexp.MustCompile(`^\s+- name: (\S+)$`)
	argLine := regexp.MustCompile(`^\s+- (--\S+)$`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := nameLine.FindStringSubmatch(sc.Text()); m != nil {
			container = m[1]
		}
		if m := argLine.FindStringSubmatch(sc.Text()); m != nil {
			args[container] = append(args[container], m[1])
		}
	}
	if len(args["external-dns"]) == 0 || len(args["glb-externaldns"]) == 0 {
		t.Fatalf("found no arguments of both containers: %v", args)
	}
	// ExternalDNS's own flag parsing, of the pinned version.
	if err := externaldns.NewConfig().ParseFlags(args["external-dns"]); err != nil {
		t.Errorf("ExternalDNS %s: %v", strings.Join(args["external-dns"], " "), err)
	}
	if err := externaldns.NewConfig().ParseFlags([]string{"--no-such-flag"}); err == nil {
		t.Errorf("ExternalDNS's flag parsing took an unknown flag")
	}
	// -h after the flags: 0 once every flag before it parsed.
	if out, err := exec.Command(providerBin, append(args["glb-externaldns"], "-h")...).CombinedOutput(); err != nil {
		t.Errorf("glb-externaldns %s: %v\n%s", strings.Join(args["glb-externaldns"], " "), err, out)
	}
	if out, err := exec.Command(providerBin, "--no-such-flag", "-h").CombinedOutput(); err == nil {
		t.Errorf("glb-externaldns took an unknown flag: %s", out)
	}
}
