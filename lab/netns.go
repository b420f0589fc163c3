package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// netnsDir is where iproute2 keeps named network namespaces.
const netnsDir = "/run/netns"

// sh runs a short command (ip, nft) and returns its error with its output.
func sh(stdin string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// shOut runs a command and returns its standard output.
func shOut(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}

// inNS runs fn on an OS thread moved into the named namespace. Sockets
// fn opens belong to that namespace for life, whichever thread later
// uses them, so the lab's origins, its client and its API calls live in
// the namespaces while the lab itself stays in the machine's. The thread
// goes back to the machine's namespace before the runtime may use it
// again; if it cannot, it stays locked and ends with the goroutine, so
// no other goroutine ever runs in the wrong namespace.
func inNS(name string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		errc <- within(name, fn)
	}()
	return <-errc
}

// within runs fn in the named namespace on the current, locked thread,
// and returns the thread to where it was. The way back matters even
// though the goroutine ends: a locked goroutine that ends on the
// process's main thread does not end the thread, and the main thread's
// namespace is the process's as /proc shows it.
func within(name string, fn func() error) error {
	home, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return err
	}
	defer home.Close()
	if err := enterNS(name); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	err = fn()
	if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
		runtime.UnlockOSThread()
	}
	return err
}

func enterNS(name string) error {
	f, err := os.Open(filepath.Join(netnsDir, name))
	if err != nil {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter namespace %s: %w", name, err)
	}
	return nil
}

// stopGracefully sends sig to cmd, started by startIn with done, and
// waits for it to exit; after grace it kills it.
func stopGracefully(cmd *exec.Cmd, done <-chan error, sig os.Signal, grace time.Duration) {
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}

// startIn starts cmd inside the named namespace (the child inherits the
// namespace of the thread that forks it) and returns a channel that
// yields its exit. The forking thread waits for the child and stays
// locked to it as long as it runs: the child's parent-death signal
// (SIGKILL) fires when that thread ends, which is when the lab dies
// however it dies, so no glbd or PostgreSQL outlives a killed lab.
func startIn(name string, cmd *exec.Cmd) (<-chan error, error) {
	started := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var exit error
		err := within(name, func() error {
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
			if err := cmd.Start(); err != nil {
				return err
			}
			started <- nil
			exit = cmd.Wait()
			return nil
		})
		if err != nil {
			started <- err
			return
		}
		done <- exit
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s in %s: %w", cmd.Path, name, err)
	}
	return done, nil
}

// nsInode identifies a namespace: a process whose /proc/PID/ns/net has
// this inode is inside it, even after its name is gone.
func nsInode(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// nft loads a ruleset into a namespace's nftables.
func nft(ns, rules string) error {
	return sh(rules, "ip", "netns", "exec", ns, "nft", "-f", "-")
}
