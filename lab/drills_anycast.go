package main

import (
	"fmt"
	"os"
	"time"
)

// The anycast drills: the client asks the anycast address at 500 q/s
// through the router while a node leaves; WEU (MED 10) carries the
// traffic until it does, ENAM (MED 20) after.

const weu, enam = 0, 1

const (
	titleDrain   = "anycast: a node drained through another node's API while the client asks at 500 q/s: none lost, the route moves within 1 s"
	titleSigterm = "anycast: a node stopped with SIGTERM, as systemd does on upgrade: none lost"
	titleKill    = "anycast: a node killed with SIGKILL, its machine silent: its route gone within the BGP hold time, loss bounded by it"
	titleNoStore = "anycast: a node starts with the store unreachable and no last good file: never announced, no wrong answer"
)

// anycastBegin checks that WEU carries the anycast traffic and returns
// when the drill's counting starts, a second of traffic before the event.
func (l *lab) anycastBegin(r *result) (time.Time, bool) {
	if l.router.nextHop() != weu {
		r.err = fmt.Errorf("the router does not forward the anycast address to WEU at the start (announced by %v)", l.router.announcers())
		r.decide()
		return time.Time{}, false
	}
	from := time.Now()
	time.Sleep(time.Second)
	return from, true
}

// anycastEnd counts the client's queries from from until a second ago
// (every answer due has come) and decides the drill.
func (l *lab) anycastEnd(r *result, from time.Time) result {
	time.Sleep(time.Second)
	k := l.anycast.judge(from, time.Now().Add(-time.Second))
	r.counts = k.counts
	r.notes = append(r.notes, k.String())
	if k.lostSpan > 0 {
		r.notes = append(r.notes, fmt.Sprintf("queries lost over %v", k.lostSpan.Round(time.Millisecond)))
	}
	r.decide()
	return *r
}

// restartWEU starts WEU again after a drill stopped or killed it and
// waits for the router to forward to it again.
func (l *lab) restartWEU(r *result) {
	n := l.nodes[weu]
	if err := n.start(); err != nil {
		r.err = err
		return
	}
	if err := n.waitServing(60 * time.Second); err != nil {
		r.err = err
		return
	}
	at := time.Now()
	back := l.router.waitNextHop(at, weu, 30*time.Second)
	r.add("route back to WEU after its restart (from DNS answering)", back, 0, "self-probe every second; announced on the first answer")
	if back == 0 {
		r.err = fmt.Errorf("WEU restarted but the router does not forward to it (announced by %v)", l.router.announcers())
	}
}

func (l *lab) drillDrainAnycast() result {
	r := result{n: 7, title: titleDrain, zeroWrong: true, noneLost: true}
	from, ok := l.anycastBegin(&r)
	if !ok {
		return r
	}
	// Asked through another node's API, as an operator's tooling talking
	// to any node would: WEU hears of it from the store's change feed.
	at := time.Now()
	if err := l.api.call(l.nodes[enam], "POST", "/api/v1/nodes/weu/drain", map[string]any{"reason": "lab drill 7"}, nil); err != nil {
		r.err = err
		return l.anycastEnd(&r, from)
	}
	moved := l.router.waitNextHop(at, enam, 5*time.Second)
	r.add("route moved from WEU to ENAM after the drain was asked through ENAM's API", moved, time.Second, "WEU hears of it from the change feed")
	// The drained node answers on for its grace: whatever the router sent
	// it before the move is answered.
	time.Sleep(drainGrace + time.Second)
	at = time.Now()
	if err := l.api.call(l.nodes[enam], "DELETE", "/api/v1/nodes/weu/drain", nil, nil); err != nil {
		r.err = err
		return l.anycastEnd(&r, from)
	}
	back := l.router.waitNextHop(at, weu, 5*time.Second)
	r.add("route back to WEU after the undrain", back, 0, "")
	if back == 0 {
		r.err = fmt.Errorf("undrained WEU not announced again (announced by %v)", l.router.announcers())
	}
	return l.anycastEnd(&r, from)
}

func (l *lab) drillSigtermAnycast() result {
	r := result{n: 8, title: titleSigterm, zeroWrong: true, noneLost: true}
	from, ok := l.anycastBegin(&r)
	if !ok {
		return r
	}
	at := time.Now()
	stopped := make(chan struct{})
	go func() { l.nodes[weu].stop(); close(stopped) }() // SIGTERM, as systemd sends it
	moved := l.router.waitNextHop(at, enam, 5*time.Second)
	r.add("route moved from WEU to ENAM after SIGTERM", moved, time.Second, "withdrawn before the listeners close")
	<-stopped
	exited := time.Since(at)
	r.add("WEU exited after SIGTERM", exited, 0, fmt.Sprintf("after its drain grace (%v)", drainGrace))
	if exited < drainGrace {
		r.err = fmt.Errorf("WEU exited %v after SIGTERM, before its drain grace %v", exited, drainGrace)
	}
	l.restartWEU(&r)
	return l.anycastEnd(&r, from)
}

func (l *lab) drillKillAnycast() result {
	r := result{n: 9, title: titleKill, zeroWrong: true}
	from, ok := l.anycastBegin(&r)
	if !ok {
		return r
	}
	// The node's machine goes silent with it, as in a power cut: without
	// this the kernel closes the dead process's session at once (a FIN)
	// and the hold time never matters.
	ns := l.regionNS(weu)
	if err := l.cut(ns, "chain out { type filter hook output priority 0; tcp dport 179 drop; }\n"+
		"chain in { type filter hook input priority 0; tcp sport 179 drop; }"); err != nil {
		r.err = err
		return l.anycastEnd(&r, from)
	}
	at := time.Now()
	l.nodes[weu].kill()
	// The router drops WEU's route when the hold time runs out (the last
	// keepalive came at most a keepalive interval before the kill) and
	// writes its table: a quarter of a second more.
	bound := holdTime + 250*time.Millisecond
	gone := l.router.waitNextHop(at, enam, 10*time.Second)
	r.add("route moved from WEU to ENAM after kill -9", gone, bound, fmt.Sprintf("BGP hold time %v; its BGP packets dropped", holdTime))
	if err := l.heal(ns); err != nil {
		r.err = err
	}
	l.restartWEU(&r)
	res := l.anycastEnd(&r, from)
	k := l.anycast.judge(from, time.Now().Add(-time.Second))
	if k.lostSpan > bound {
		res.pass = false
		res.notes = append(res.notes, fmt.Sprintf("FAIL: queries lost over %v, more than the bound %v", k.lostSpan, bound))
	}
	return res
}

func (l *lab) drillStartWithoutStore() result {
	r := result{n: 10, title: titleNoStore, zeroWrong: true, noneLost: true}
	from, ok := l.anycastBegin(&r)
	if !ok {
		return r
	}
	n := l.nodes[weu]
	n.stop()
	if l.router.waitNextHop(time.Now(), enam, 5*time.Second) == 0 {
		r.err = fmt.Errorf("WEU stopped but the router still forwards to it")
		return l.anycastEnd(&r, from)
	}
	// No last good file, no store.
	if err := os.RemoveAll(n.dataDir); err != nil {
		r.err = err
		return l.anycastEnd(&r, from)
	}
	ns := l.regionNS(weu)
	if err := l.cut(ns, "chain out { type filter hook output priority 0; ip daddr "+pgAddr.String()+" drop; }\n"+
		"chain in { type filter hook input priority 0; ip saddr "+pgAddr.String()+" drop; }"); err != nil {
		r.err = err
		return l.anycastEnd(&r, from)
	}
	// Not migrating: its migrations would wait 30 s for the store before
	// the node serves, and the drill is about a node that serves.
	migrate := n.migrate
	n.migrate = false
	runs := n.count("glbd serving") // the log holds every run's lines
	err := n.start()
	n.migrate = migrate
	if err != nil {
		r.err = err
		_ = l.heal(ns)
		return l.anycastEnd(&r, from)
	}
	started := time.Now()
	announced := false
	watch := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); {
			for _, a := range l.router.announcers() {
				announced = announced || a == regions[weu]
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Up (its listeners bound, its BGP session established), then ten
	// seconds without a snapshot: never announced.
	for n.count("glbd serving") == runs && time.Since(started) < 30*time.Second {
		watch(200 * time.Millisecond)
	}
	if n.count("glbd serving") == runs {
		r.err = fmt.Errorf("WEU did not start serving within 30 s with the store unreachable: %s", n.logTail())
	}
	watch(10 * time.Second)
	if announced {
		r.err = fmt.Errorf("WEU announced the anycast address without a snapshot")
	}
	r.notes = append(r.notes, fmt.Sprintf("WEU up %v with the store unreachable and no last good file, the last 10 s serving: announced %v",
		time.Since(started).Round(100*time.Millisecond), announced))
	if err := l.heal(ns); err != nil {
		r.err = err
	}
	at := time.Now()
	back := l.router.waitNextHop(at, weu, 30*time.Second)
	r.add("route back to WEU after the store is reachable", back, 0, "first snapshot, then the self-probe")
	if back == 0 {
		r.err = fmt.Errorf("WEU reached the store but is not announced (announced by %v)", l.router.announcers())
	}
	return l.anycastEnd(&r, from)
}
