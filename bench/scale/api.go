package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/glb-dns/glb/pools"
)

// runAPI is -api: a node on an empty embedded store, and every object
// made through its REST API, -writers requests at a time, as an operator
// or a tool would (each write compiles and publishes a snapshot). It
// reports RSS as the load balancers are made, after the writes, and after
// -more further writes: a node that keeps old snapshots grows with every
// write; one that does not stays flat.
func runAPI(bin, dir string) error {
	t0 := time.Now()
	a, err := startNode(bin, filepath.Join(dir, "a"), "a", "WEU")
	if err != nil {
		return err
	}
	defer a.stop()
	fmt.Printf("node up in %s (dns %s), RSS %s\n", time.Since(t0).Round(time.Millisecond), a.dns, mib(a.rss()))

	z := pools.DefaultZone()
	z.ID, z.Name, z.Nameservers = "scale", zoneName, []string{"ns1." + zoneName}
	if err := a.send(http.MethodPost, "zones", "", &z); err != nil {
		return err
	}
	t1 := time.Now()
	if err := parallel(*numPools, *writers, func(i int) error { return a.send(http.MethodPost, "pools", "", apiPool(i, 0)) }); err != nil {
		return err
	}
	fmt.Printf("%d pools of 64 origins made in %s (%d at a time), RSS %s\n", *numPools, time.Since(t1).Round(time.Millisecond), *writers, mib(a.rss()))

	t2 := time.Now()
	var made atomic.Int64
	step := max(*numPools/4, 1)
	if err := parallel(*numPools, *writers, func(i int) error {
		if err := a.send(http.MethodPost, "load_balancers", "", apiLB(i, 30)); err != nil {
			return err
		}
		if n := made.Add(1); n%int64(step) == 0 && n < int64(*numPools) {
			fmt.Printf("  %d load balancers: RSS %s\n", n, mib(a.rss()))
		}
		return nil
	}); err != nil {
		return err
	}
	// Every name answers: the last snapshot is built and published.
	for i := range *numPools {
		if err := waitAnswer(a.dns, lbName(i), 120*time.Second, func(ips []string) bool { return len(ips) > 0 }); err != nil {
			return fmt.Errorf("after the writes: %w", err)
		}
	}
	afterWrites := a.rss()
	fmt.Printf("%d load balancers with zonal affinity made in %s (%d at a time), every name answers\n", *numPools, time.Since(t2).Round(time.Millisecond), *writers)
	fmt.Printf("RSS after the writes: %s (peak %s)\n", mib(afterWrites), mib(a.hwm()))
	if err := a.heapProfile("heap-after-writes.out"); err != nil {
		return err
	}

	// Further writes: a pool's addresses and a load balancer's TTL by
	// turns; the last pool written must then answer its new addresses.
	t3 := time.Now()
	last := -1
	if err := parallel(*more, *writers, func(k int) error {
		i := k / 2 % *numPools
		if k%2 == 1 {
			return a.send(http.MethodPut, "load_balancers", fmt.Sprintf("lb%d", i), apiLB(i, uint32(31+k%60)))
		}
		return a.send(http.MethodPut, "pools", fmt.Sprintf("p%d", i), apiPool(i, k+1))
	}); err != nil {
		return err
	}
	for k := *more - 1; k >= 0; k-- {
		if k%2 == 0 {
			last = k
			break
		}
	}
	if last >= 0 {
		i, prefix := last/2%*numPools, apiPrefix(last/2%*numPools, last+1)
		if err := waitAnswer(a.dns, lbName(i), 60*time.Second, func(ips []string) bool {
			return len(ips) > 0 && strings.HasPrefix(ips[0], prefix)
		}); err != nil {
			return fmt.Errorf("after the further writes: %w", err)
		}
	}
	afterMore := a.rss()
	fmt.Printf("%d further writes (pools and load balancers by turns) in %s\n", *more, time.Since(t3).Round(time.Millisecond))
	fmt.Printf("RSS after the further writes: %s (%+.0f MiB), peak %s\n", mib(afterMore), float64(afterMore-afterWrites)/(1<<20), mib(a.hwm()))
	if err := a.heapProfile("heap-after-more.out"); err != nil {
		return err
	}
	if *rssLimit > 0 && max(afterWrites, afterMore) > int64(*rssLimit)<<20 {
		return fmt.Errorf("RSS %s is over -rss-limit %d MiB", mib(max(afterWrites, afterMore)), *rssLimit)
	}
	return nil
}

// apiPool is pool i in its version v: 64 origins in two zones, their
// addresses under apiPrefix(i, v).
func apiPool(i, v int) *pools.Pool {
	p := pools.DefaultPool()
	p.ID, p.Name = fmt.Sprintf("p%d", i), fmt.Sprintf("pool %d", i)
	prefix := apiPrefix(i, v)
	for j := range 64 {
		o := pools.DefaultOrigin()
		o.Name = fmt.Sprintf("o%d", j)
		o.Address = prefix + strconv.Itoa(j+1)
		o.Zone = []string{"zone-a", "zone-b"}[j%2]
		p.Origins = append(p.Origins, o)
	}
	return &p
}

// apiPrefix is the first three octets of pool i's addresses in version v:
// version 0 as the seeded estate's, each later one its own.
func apiPrefix(i, v int) string {
	if v == 0 {
		return fmt.Sprintf("10.%d.%d.", i/250, i%250)
	}
	return fmt.Sprintf("11.%d.%d.", v/250%250, v%250)
}

// apiLB is load balancer i: its pool, the next as failover and fallback,
// zonal affinity spilling across zones.
func apiLB(i int, ttl uint32) *pools.LoadBalancer {
	l := pools.DefaultLoadBalancer()
	l.ID, l.Zone, l.Name, l.TTL = fmt.Sprintf("lb%d", i), "scale", lbName(i), ttl
	l.DefaultPools = []string{fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", (i+1)%*numPools)}
	l.FallbackPool = l.DefaultPools[1]
	l.ZonalAffinity = pools.ZonalAffinity{Spillover: pools.AffinitySpillCrossZone, SpilloverRatio: 0.2}
	return &l
}

// parallel runs do(0..n-1) on workers goroutines and returns the first
// error; after one, the rest are not started.
func parallel(n, workers int, do func(int) error) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
		failed  atomic.Bool
	)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					errOnce.Do(func() { first = err })
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// send writes o with method to the collection kind (id: its item).
func (n *node) send(method, kind, id string, o any) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	url := n.api + "/api/v1/" + kind
	if id != "" {
		url += "/" + id
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, body)
	}
	return nil
}

// heapProfile saves node n's heap profile after a collection (?gc=1) as
// file in -profile; nothing without -profile.
func (n *node) heapProfile(file string) error {
	if *profile == "" {
		return nil
	}
	n.mu.Lock()
	base := n.pprof
	n.mu.Unlock()
	return fetch(base+"/debug/pprof/heap?gc=1", filepath.Join(*profile, file))
}
