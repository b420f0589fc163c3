// Command glbctl is a client of glb's REST API for configuration kept in
// files: it applies a whole file in dependency order, shows the
// differences first, and exports what a node has as a file that apply
// takes back. Its commands are listed once, in the usage text below
// ("glbctl help" prints it), and described in docs/glbctl.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/glb-dns/glb/internal/version"
)

// Exit statuses. diff follows diff(1): 1 means "there are differences",
// so its failures exit 2 to stay distinguishable in CI.
const (
	exitOK      = 0
	exitFailed  = 1
	exitDiffers = 1
	exitUsage   = 2
	exitTrouble = 2
)

const usage = `glbctl manages a glb node's configuration through its REST API.

Usage:
  glbctl apply -f FILE [--prune] [--dry-run] [--plan PLAN]
  glbctl apply -f FILE --staged [--steps 10,25,50,100] [--step-interval 5m] [--reason TEXT]
        [--webhook URL] [--query PROMQL --prometheus URL]
                                                  weight and pool order changes become rollouts
  glbctl rollouts [list [--status S]|show ID|pause ID|resume ID|abort ID [--reason TEXT]]
  glbctl diff -f FILE [--prune] [--plan PLAN]     exit 0: no differences, 1: differences, 2: trouble
  glbctl diff LB --version N                      what a rollback of LB to version N would change (exit as above)
  glbctl test -t TESTS [-f FILE]                  policy tests: offline against FILE, else the --server's configuration; exit 1: a test failed
  glbctl export [-o yaml|json]
  glbctl get KIND [ID] [-o table|json|yaml]       KIND: zones, monitors, networks, pools, load_balancers
  glbctl explain LB --client IP [--ecs CIDR] [--type A|AAAA] [-o table|json]
  glbctl health POOL [-o table|json]
  glbctl feed set POOL ORIGIN (--up|--down) [--reason TEXT] [--ttl S] [--load 0.8] [--monitor ID]   feed health and load in (feed scope)
  glbctl feed get POOL ORIGIN [-o table|json|yaml]   the words fed in for an origin
  glbctl traffic LB [--since T] [--until T] [--group-by pool,origin,region,country,rcode] [--by-step [--step S]]
                    [--pool ID] [--origin NAME] [--region R] [--country CC] [--rcode RCODE] [-o table|json|yaml]
                                                  where LB's answers went: counts from every node, merged
  glbctl regions [-o table|json|yaml]             the client regions and their countries
  glbctl rum LB [--limit N] [-o table|json|yaml]  what real users measured of LB's pools (measured_latency),
                                                  per region, country, autonomous system, client network and resolver
  glbctl audit [--kind K] [--id ID] [--actor NAME] [--since T] [--until T] [-o table|json|yaml]
  glbctl versions LB [--kind K] [--id ID] [--actor NAME] [--since T] [--until T] [-o table|json|yaml]
  glbctl rollback LB --version N                  write LB, its pools and monitors back as at version N
  glbctl tsig-keys [list|create NAME --grant ZONE:NAME:MATCH:TYPES|delete NAME]   (admin)
  glbctl tokens [list|create NAME --scope S [--zone ID]... [--expires T]|delete NAME]   (admin)
  glbctl version                                  print glbctl's version, as "glbd version" does
  glbctl nodes [list|show NAME|drain NAME --reason TEXT [--until T] [--wait]|undrain NAME]   the fleet; drain is admin
  glbctl shift start (--pool ID | --origin POOL/ORIGIN | --zone LABEL) --reason TEXT --duration 2h [--lb ID]... [--override]
  glbctl shift end ID
  glbctl shift list [--status active,scheduled,ended,expired]
  glbctl safety [now|rules|set [--max-shifted-zones N] [--max-shifted-pools N] [--min-serving-lbs-percent P]]
  glbctl notifications [list|apply -f FILE [--prune] [--dry-run]|deliveries NAME|test NAME]
  glbctl zone import ZONE FILE [--replace] [--dry-run]   a master file into the zone's records (the diff shown)
  glbctl zone import ZONE --axfr SERVER[:PORT] [--tsig NAME:ALG:SECRET] [--replace] [--dry-run]   the same, by AXFR
  glbctl zone export ZONE [--out FILE]            the zone as a master file BIND, Knot and NSD load

Every command takes --server URL (GLB_SERVER, default http://127.0.0.1:8080)
and --token TOKEN (GLB_API_TOKEN), before or after the command. LB, POOL and
ID take an id or a name; a name several objects share is refused with their
ids. A refusal by safety rules names the flag that overrides it (--override).
In a file, an origin's weight is a share in [0, 1] (0.7 and 0.3; 1 and 1 split
evenly) and its address an IP or a hostname (answered as a CNAME).
"glbctl COMMAND -h" lists its flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand: it parses its own flags and returns the exit
// status.
type command func(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int

var commands = map[string]command{
	"apply":   runApply,
	"diff":    runDiff,
	"test":    runTest,
	"export":  runExport,
	"get":     runGet,
	"explain": runExplain,
	"health":  runHealth,
	// Answer counts and the regions they are placed in (traffic.go).
	"traffic": runTraffic,
	"regions": runRegions,
	// What real users measured of a load balancer's pools (rum.go).
	"rum":      runRUM,
	"audit":    runAudit,
	"shift":    runShift,
	"rollouts": runRollouts,
	"safety":   runSafety,
	// A load balancer's versions and the rollback to one (versions.go).
	"versions": runVersions,
	"rollback": runRollback,
	// TSIG keys for DNS UPDATE (tsig.go).
	"tsig-keys": runTSIGKeys,
	// API tokens, scoped and maybe limited to zones (tokens.go).
	"tokens": runTokens,
	// Notification subscriptions, in a file of their own (notifications.go).
	"notifications": runNotifications,
	"version":       runVersion,
	// Zone files in and out (zone.go).
	"zone": runZone,
	// The fleet, and draining a node (nodes.go).
	"nodes": runNodes,
	// Health and load fed in (feed.go).
	"feed": runFeed,
}

// runVersion prints the same line as "glbd version".
func runVersion(_ context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "glbctl: version takes no arguments, got %q\n", args)
		return exitUsage
	}
	fmt.Fprintln(stdout, version.Line("glbctl"))
	return exitOK
}

func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	global, args, err := globalFlags(args)
	if err != nil {
		fmt.Fprintf(stderr, "glbctl: %v\n\n%s", err, usage)
		return exitUsage
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "glbctl: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	// Flags given before the command go after it, where it parses them
	// ("glbctl --server URL explain www ..." as "glbctl explain www ...
	// --server URL").
	return cmd(ctx, append(args[1:len(args):len(args)], global...), env, stdout, stderr)
}

// globalFlags takes the flags every command takes (--server, --token and
// -o) from before the command, and returns them and the rest.
func globalFlags(args []string) (global, rest []string, err error) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		switch name {
		case "h", "help":
			return global, args, nil
		case "server", "token", "o":
		default:
			return nil, nil, fmt.Errorf("%s before the command: only --server, --token and -o go there; put the command's own flags after it", args[0])
		}
		if hasValue {
			global, args = append(global, args[0]), args[1:]
			continue
		}
		if len(args) < 2 {
			return nil, nil, fmt.Errorf("%s needs a value", args[0])
		}
		global, args = append(global, args[0], args[1]), args[2:]
	}
	return global, args, nil
}

// common holds the flags every command takes.
type common struct {
	server string
	token  string
	output string
	// envToken is GLB_API_TOKEN, used when --token is not given; it is
	// not the flag's default so that -h never prints the secret.
	envToken string
	// stderr receives -h's list of flags.
	stderr io.Writer
	// outputs are the values -o takes, the first its default.
	outputs []string
}

// newFlags returns a flag set with --server and --token (their defaults
// from the environment) and, when outputs is not empty, -o.
func newFlags(name string, env func(string) string, stderr io.Writer, c *common, outputs ...string) *flag.FlagSet {
	fs := flag.NewFlagSet("glbctl "+name, flag.ContinueOnError)
	// Parse's errors are printed once, by usageError; only -h prints the
	// flags (see parseFlags).
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	c.stderr, c.outputs = stderr, outputs
	server := env("GLB_SERVER")
	if server == "" {
		server = "http://127.0.0.1:8080"
	}
	fs.StringVar(&c.server, "server", server, "API base URL (GLB_SERVER)")
	c.envToken = env("GLB_API_TOKEN")
	fs.StringVar(&c.token, "token", "", "bearer token (default GLB_API_TOKEN)")
	if len(outputs) > 0 {
		fs.StringVar(&c.output, "o", outputs[0], "output format: "+strings.Join(outputs, ", "))
	}
	return fs
}

// newCommand is newFlags for a command of its own: its common flags and
// the flag set the command adds its own flags to.
func newCommand(name string, env func(string) string, stderr io.Writer, outputs ...string) (*common, *flag.FlagSet) {
	c := new(common)
	return c, newFlags(name, env, stderr, c, outputs...)
}

// parseFlags parses args, allowing flags after positional arguments
// ("get pools web -o json"), and checks -o against outputs.
func parseFlags(fs *flag.FlagSet, args []string, c *common, outputs ...string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(c.stderr)
				fmt.Fprintf(c.stderr, "Usage of %s:\n", fs.Name())
				fs.PrintDefaults()
				return nil, err
			}
			return nil, fmt.Errorf("%w (%s -h lists the flags)", err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(outputs) > 0 && !slices.Contains(outputs, c.output) {
		return nil, fmt.Errorf("-o %q: want one of %s", c.output, strings.Join(outputs, ", "))
	}
	return pos, nil
}

// fileArgs are the flags of the commands that compare a file with the
// server (apply and diff).
type fileArgs struct {
	common
	file  string
	prune bool
	plan  string
}

// parseFileArgs parses -f, --prune, --plan and what extra adds, and
// returns a client for --server.
func parseFileArgs(name string, args []string, env func(string) string, stderr io.Writer,
	pruneHelp, planHelp string, extra func(*flag.FlagSet)) (*fileArgs, *client, error) {
	var a fileArgs
	fs := newFlags(name, env, stderr, &a.common)
	fs.StringVar(&a.file, "f", "", "configuration file, YAML or JSON (- for standard input)")
	fs.BoolVar(&a.prune, "prune", false, pruneHelp)
	fs.StringVar(&a.plan, "plan", "", planHelp)
	if extra != nil {
		extra(fs)
	}
	_, cl, err := commandArgs(fs, args, &a.common, 0, 0, name+" takes no arguments")
	if err != nil {
		return nil, nil, err
	}
	if a.file == "" {
		return nil, nil, fmt.Errorf("%s: -f FILE is required", name)
	}
	return &a, cl, nil
}

// commandArgs parses a command's flags (fs from newFlags with c), checks
// that it has min to max positional arguments (max -1: any; usage is the
// error otherwise) and makes the API client. Its errors are usage errors.
func commandArgs(fs *flag.FlagSet, args []string, c *common, min, max int, usage string) ([]string, *client, error) {
	pos, err := parseFlags(fs, args, c, c.outputs...)
	if err != nil {
		return nil, nil, err
	}
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		return nil, nil, errors.New(usage)
	}
	cl, err := newClient(*c)
	if err != nil {
		return nil, nil, err
	}
	return pos, cl, nil
}

// splitVerb splits a command's verb ("list" when none is given) from its
// other positional arguments.
func splitVerb(pos []string) (string, []string) {
	if len(pos) == 0 {
		return "list", nil
	}
	return pos[0], pos[1:]
}

// usageError reports bad flags or arguments with the status they deserve.
func usageError(stderr io.Writer, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return fail(stderr, exitUsage, err)
}

// fail reports err on stderr, as glbctl reports every error, and returns
// status, the exit status it deserves.
func fail(stderr io.Writer, status int, err error) int {
	fmt.Fprintln(stderr, "glbctl:", err)
	return status
}
