package externaldns

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/external-dns/pkg/apis/externaldns"
	"sigs.k8s.io/external-dns/pkg/apis/externaldns/validation"
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

// The flags a sync gives the ExternalDNS binary parse and validate as the
// pinned version's own main does, so that the in-process run, which reads
// the same flags' meaning, cannot drift from what the binary would run.
func TestExternalDNSFlags(t *testing.T) {
	c := &cluster{source: "127.0.0.1:7000", webhook: "http://127.0.0.1:7001"}
	cfg := externaldns.NewConfig()
	if err := cfg.ParseFlags(c.externalDNSArgs()); err != nil {
		t.Fatalf("ExternalDNS %s: %v", strings.Join(c.externalDNSArgs(), " "), err)
	}
	if err := validation.ValidateConfig(cfg); err != nil {
		t.Fatalf("ExternalDNS %s: %v", strings.Join(c.externalDNSArgs(), " "), err)
	}
	if !cfg.Once || !slices.Equal(cfg.Sources, []string{"connector"}) || cfg.ConnectorSourceServer != c.source ||
		cfg.Provider != "webhook" || cfg.WebhookProviderURL != c.webhook || cfg.Registry != "noop" || cfg.Policy != "sync" ||
		!slices.Equal(cfg.ManagedDNSRecordTypes, []string{"A", "AAAA", "CNAME"}) {
		t.Errorf("ExternalDNS's configuration is not the one the in-process sync plays: %s", cfg)
	}
}
