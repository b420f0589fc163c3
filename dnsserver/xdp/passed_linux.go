package xdp

import (
	"github.com/cilium/ebpf"
	"github.com/prometheus/client_golang/prometheus"
)

// passedReasons name the XDP program's counters of datagrams to the DNS
// port it left to the kernel (redirect.c).
var passedReasons = [...]string{"fragment", "options", "malformed"}

// passedCollector reads the program's per-CPU counters at each scrape.
type passedCollector struct {
	desc *prometheus.Desc
	m    *ebpf.Map
}

func newPassedCollector(iface string, m *ebpf.Map) *passedCollector {
	return &passedCollector{m: m, desc: prometheus.NewDesc("glb_xdp_passed_total",
		"Datagrams the XDP program left to the kernel's socket path: UDP to the DNS port with IPv4 options (options) or inconsistent lengths (malformed), and fragments (fragment; IPv6 fragments whatever their port).",
		[]string{"reason"}, prometheus.Labels{"interface": iface})}
}

func (c *passedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *passedCollector) Collect(ch chan<- prometheus.Metric) {
	for i, r := range passedReasons {
		var per []uint64
		if err := c.m.Lookup(uint32(i), &per); err != nil {
			continue
		}
		var n uint64
		for _, v := range per {
			n += v
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), r)
	}
}
