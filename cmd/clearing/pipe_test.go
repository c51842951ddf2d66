package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A reader that goes away ('clearing runs | head -1') used to kill clearing
// with SIGPIPE at its first write, before the deferred Close that stops the
// embedded cluster, and the server ran on until the next command. A closed
// stdout now fails the write, the command unwinds, the cluster stops, and
// clearing exits 141 as a program killed by SIGPIPE would.
func TestAClosedPipeStopsTheEmbeddedCluster(t *testing.T) {
	home := embeddedHome(t)
	for _, args := range [][]string{{"runs"}, {"-o", "json", "runs"}, {"ledger", "verify"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // the reader is gone before clearing writes a byte
		cmd := exec.Command(clearingBin, args...)
		cmd.Env = append(os.Environ(), "CLEARING_HOME="+home, "CLEARING_DATABASE_URL=", "DATABASE_URL=")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &stderr
		err = cmd.Run()
		w.Close()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() || cmd.ProcessState.ExitCode() != exitBrokenPipe {
			t.Errorf("clearing %s with stdout closed: %v (signaled %v), want exit %d\nstderr:\n%s",
				strings.Join(args, " "), cmd.ProcessState, ws.Signaled(), exitBrokenPipe, &stderr)
		}
		if pids := clusterProcesses(home); len(pids) > 0 {
			t.Fatalf("clearing %s with stdout closed left the embedded server running: processes %v", strings.Join(args, " "), pids)
		}
		if _, err := os.Stat(filepath.Join(home, "pg", "data", "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("clearing %s with stdout closed left postmaster.pid behind: %v", strings.Join(args, " "), err)
		}
	}
}

// embeddedHome is a CLEARING_HOME for one test, short enough for the
// server's unix socket and, under root, passable by the server's user. A
// server that a failing test leaves running there is shut down.
func embeddedHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cl")
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chmod(dir, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(dir, "home")
	t.Cleanup(func() {
		for _, pid := range clusterProcesses(home) {
			syscall.Kill(pid, syscall.SIGQUIT)
		}
		for i := 0; i < 200 && len(clusterProcesses(home)) > 0; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		os.RemoveAll(dir)
	})
	return home
}

// clusterProcesses lists the live processes whose command line names the
// data folder of home's cluster: its postmaster ("postgres -D DIR").
func clusterProcesses(home string) []int {
	data := filepath.Join(home, "pg", "data")
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		for i, a := range args {
			if a == "-D" && i+1 < len(args) && args[i+1] == data {
				if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}
