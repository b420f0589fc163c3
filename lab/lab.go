package main

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The lab's layout. Every namespace hangs off one bridge in the core
// namespace, on one /16 of 198.18.0.0/15 (RFC 2544 benchmarking space).
//
//	region i (WEU 1, ENAM 2, NEAS 3): namespace <prefix>-weu ...
//	    198.18.i.1     glbd: DNS :53, API :8080, checks sent from here
//	    198.18.i.11    origin, HTTP :80 /health
//	    198.18.i.12    origin
//	client:  198.18.11.1, .12.1, .13.1: the clients of WEU, ENAM, NEAS
//	         (operator networks 198.18.1i.0/24 say so)
//	pg:      198.18.4.1    PostgreSQL :5432
var regions = []string{"WEU", "ENAM", "NEAS"}

func nodeAddr(i int) netip.Addr { return netip.AddrFrom4([4]byte{198, 18, byte(i + 1), 1}) }
func originAddr(i, j int) netip.Addr {
	return netip.AddrFrom4([4]byte{198, 18, byte(i + 1), byte(11 + j)})
}
func clientAddr(i int) netip.Addr { return netip.AddrFrom4([4]byte{198, 18, byte(11 + i), 1}) }

var pgAddr = netip.MustParseAddr("198.18.4.1")

const originsPerRegion = 2

// regionOf says which region an address of the lab belongs to (its third
// octet), -1 when none.
func regionOf(a netip.Addr) int {
	b := a.As4()
	if b[0] != 198 || b[1] != 18 || b[2] < 1 || int(b[2]) > len(regions) {
		return -1
	}
	return int(b[2]) - 1
}

// lab is a running lab: namespaces, PostgreSQL, the nodes, the origins
// and the client.
type lab struct {
	out      io.Writer
	prefix   string
	dir      string // temporary; removed at the end
	glbdBin  string
	interval int // the monitor's interval, seconds
	timeout  int // the monitor's timeout, seconds

	names   []string          // every namespace, core first
	inodes  map[uint64]string // namespace inode → name
	before  snapshotOfHost
	pg      *postgres
	nodes   []*node
	origins *origins
	client  *client
	api     *apiClient
	router  *router
	anycast *anycastClient
	ids     labIDs
}

// Settings of the lab's monitor. Every bound of the drills derives from
// these.
const (
	consecutiveDown = 2
	consecutiveUp   = 2
)

func (l *lab) ns(suffix string) string { return l.prefix + "-" + suffix }
func (l *lab) regionNS(i int) string   { return l.ns(strings.ToLower(regions[i])) }

// snapshotOfHost is what the lab must leave as it found it in the
// machine's own namespace.
type snapshotOfHost struct {
	links string
	nft   string
}

func hostState() snapshotOfHost {
	var s snapshotOfHost
	if out, err := shOut("ip", "-o", "link", "show"); err == nil {
		var names []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) > 1 {
				names = append(names, strings.TrimSuffix(strings.SplitN(f[1], "@", 2)[0], ":"))
			}
		}
		slices.Sort(names)
		s.links = strings.Join(names, " ")
	}
	if out, err := shOut("nft", "list", "ruleset"); err == nil {
		s.nft = out
	}
	return s
}

// removeStale deletes the namespaces and directories of labs whose
// process is gone (one killed with SIGKILL cannot tear down; its nodes
// and PostgreSQL died with it by their parent-death signal, its
// namespaces and files did not). Both are named glblab<pid>-....
func removeStale(out func(string, ...any)) {
	gone := func(name string) bool {
		var pid int
		var rest string
		if n, _ := fmt.Sscanf(name, "glblab%d-%s", &pid, &rest); n != 2 {
			return false
		}
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return err != nil
	}
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if gone(e.Name()) && sh("", "ip", "netns", "del", e.Name()) == nil {
			out("removed namespace %s of a lab that is gone", e.Name())
		}
	}
	entries, _ = os.ReadDir(os.TempDir())
	for _, e := range entries {
		if gone(e.Name()) && os.RemoveAll(filepath.Join(os.TempDir(), e.Name())) == nil {
			out("removed directory %s of a lab that is gone", e.Name())
		}
	}
}

// setUp builds the namespaces and links. On error, what was built is
// torn down by tearDown, which the caller always runs.
func (l *lab) setUp() error {
	l.before = hostState()
	l.inodes = map[uint64]string{}
	for _, s := range append([]string{"core", "pg", "client", "rtr"}, lowerRegions()...) {
		name := l.ns(s)
		if err := sh("", "ip", "netns", "add", name); err != nil {
			return err
		}
		l.names = append(l.names, name)
		ino, err := nsInode(filepath.Join(netnsDir, name))
		if err != nil {
			return err
		}
		l.inodes[ino] = name
		if err := sh("", "ip", "-n", name, "link", "set", "lo", "up"); err != nil {
			return err
		}
	}
	core := l.ns("core")
	if err := sh("", "ip", "-n", core, "link", "add", "br0", "type", "bridge"); err != nil {
		return err
	}
	if err := sh("", "ip", "-n", core, "link", "set", "br0", "up"); err != nil {
		return err
	}
	addrs := map[string][]netip.Addr{"pg": {pgAddr}, "rtr": {routerAddr}}
	for i := range regions {
		addrs["client"] = append(addrs["client"], clientAddr(i))
		a := []netip.Addr{nodeAddr(i)}
		for j := range originsPerRegion {
			a = append(a, originAddr(i, j))
		}
		addrs[strings.ToLower(regions[i])] = a
	}
	for _, s := range append([]string{"pg", "client", "rtr"}, lowerRegions()...) {
		name, veth := l.ns(s), "v-"+s
		if err := sh("", "ip", "-n", core, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", name); err != nil {
			return err
		}
		if err := sh("", "ip", "-n", core, "link", "set", veth, "master", "br0", "up"); err != nil {
			return err
		}
		for _, a := range addrs[s] {
			if err := sh("", "ip", "-n", name, "addr", "add", a.String()+"/16", "dev", "eth0"); err != nil {
				return err
			}
		}
		if err := sh("", "ip", "-n", name, "link", "set", "eth0", "up"); err != nil {
			return err
		}
	}
	return l.setUpAnycast()
}

func lowerRegions() []string {
	var out []string
	for _, r := range regions {
		out = append(out, strings.ToLower(r))
	}
	return out
}

// tearDown stops everything the lab started and removes what it made,
// then checks that nothing is left: no namespace of the lab's, no
// interface or nftables rule added to the machine's namespace, no process
// in any of the lab's namespaces, no temporary files.
func (l *lab) tearDown() error {
	var errs []error
	if l.client != nil {
		l.client.stop()
	}
	if l.anycast != nil {
		l.anycast.close()
	}
	for _, n := range l.nodes {
		if n != nil {
			n.stop()
		}
	}
	if l.router != nil {
		l.router.stop()
	}
	if l.pg != nil {
		l.pg.stop()
	}
	if l.origins != nil {
		l.origins.close()
	}
	for i := len(l.names) - 1; i >= 0; i-- {
		if err := sh("", "ip", "netns", "del", l.names[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if l.dir != "" {
		if err := os.RemoveAll(l.dir); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, l.leftovers()...)
	return errors.Join(errs...)
}

// leftovers lists what the lab failed to remove.
func (l *lab) leftovers() []error {
	var errs []error
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), l.prefix+"-") {
			errs = append(errs, fmt.Errorf("namespace %s left behind", e.Name()))
		}
	}
	// A process can keep a namespace alive after its name is removed.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		procs, _ := filepath.Glob("/proc/[0-9]*/ns/net")
		for _, p := range procs {
			ino, err := nsInode(p)
			if err != nil {
				continue
			}
			if ns, ok := l.inodes[ino]; ok {
				pid := strings.Split(p, "/")[2]
				cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
				left = append(left, fmt.Sprintf("pid %s in %s: %s", pid, ns, strings.ReplaceAll(string(cmdline), "\x00", " ")))
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, s := range left {
				errs = append(errs, errors.New("process left behind: "+s))
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	after := hostState()
	if after.links != l.before.links {
		errs = append(errs, fmt.Errorf("interfaces of the machine's namespace changed: before %q, after %q", l.before.links, after.links))
	}
	if after.nft != l.before.nft {
		errs = append(errs, fmt.Errorf("nftables ruleset of the machine's namespace changed:\nbefore:\n%s\nafter:\n%s", l.before.nft, after.nft))
	}
	if l.dir != "" {
		if _, err := os.Stat(l.dir); err == nil {
			errs = append(errs, fmt.Errorf("directory %s left behind", l.dir))
		}
	}
	return errs
}

// logf prints a line of the lab's report.
func (l *lab) logf(format string, args ...any) {
	fmt.Fprintf(l.out, "%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
