package embedded

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// serverState is what postmaster.pid says about the cluster's server.
type serverState int

const (
	// serverNone: there is no postmaster.pid, so no server runs.
	serverNone serverState = iota
	// serverDead: postmaster.pid names a process that is gone. The server
	// itself handles this file (and checks that no orphaned child still
	// holds the cluster's shared memory), so it is left in place.
	serverDead
	// serverForeign: postmaster.pid names a live process that is not this
	// cluster's server, because the process id was reused after a crash or
	// a reboot. The server would refuse to start, so the file is removed.
	serverForeign
	// serverLive: postmaster.pid names this cluster's server, or a process
	// that cannot be told apart from it; it is never touched.
	serverLive
)

// postmasterState reads postmaster.pid and classifies the process it names.
// Whatever cannot be read is taken to be a live server: removing the lock
// file of a running server would let a second one corrupt the cluster.
func (e *Cluster) postmasterState() (serverState, int) {
	pid, err := lockFilePID(filepath.Join(e.dataDir, "postmaster.pid"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return serverNone, 0
	case err != nil:
		return serverLive, 0
	}
	return e.processState(pid), pid
}

// lockFilePID returns the process id on the first line of one of the
// server's lock files.
func lockFilePID(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		// The server writes the file after creating it, so it can be
		// empty for a moment.
		return 0, fmt.Errorf("embedded: %s is incomplete", path)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("embedded: %s names no process", path)
	}
	return pid, nil
}

// processState tells whether pid is this cluster's server. The server runs
// with the cluster's folder as its working folder, which Linux shows in
// /proc; elsewhere a live process is assumed to be the server.
func (e *Cluster) processState(pid int) serverState {
	err := syscall.Kill(pid, 0)
	switch {
	case errors.Is(err, syscall.ESRCH):
		return serverDead
	case errors.Is(err, syscall.EPERM):
		// Only root may signal another user's process, and a server of
		// this cluster would run as the caller when the caller is not root.
		return serverForeign
	}
	if zombie(pid) {
		// A server started by this process and killed stays a zombie until
		// spawn's goroutine reaps it; it is gone all the same.
		return serverDead
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return serverLive
	}
	want, err := filepath.EvalSymlinks(e.dataDir)
	if err != nil {
		want = e.dataDir
	}
	if cwd == want {
		return serverLive
	}
	return serverForeign
}

// zombie reports whether pid has exited and waits to be reaped. It says no
// where /proc does not exist.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain them.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// orphans counts the live processes working in the cluster's folder: after
// the server was killed, those are its children that have not yet noticed.
// It counts none where /proc does not exist.
func (e *Cluster) orphans() int {
	want, err := filepath.EvalSymlinks(e.dataDir)
	if err != nil {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, d := range entries {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + d.Name() + "/cwd"); err == nil && cwd == want {
			n++
		}
	}
	return n
}

// removeStaleLockFiles removes postmaster.pid, and the socket's lock file
// when it names the same process, after postmasterState found that they
// belong to a process that is not the server.
func (e *Cluster) removeStaleLockFiles(pid int) {
	e.log.Warn("removing a stale server lock file: the process it names is not this cluster's server",
		slog.String("data", e.dataDir), slog.Int("pid", pid))
	os.Remove(filepath.Join(e.dataDir, "postmaster.pid"))
	socketLock := e.socketPath() + ".lock"
	if other, err := lockFilePID(socketLock); err == nil && (other == pid || e.processState(other) == serverForeign) {
		os.Remove(socketLock)
	}
}

// serverProcess is a server started by this process.
type serverProcess struct {
	done chan struct{}
}

// exited reports whether the server has exited.
func (p *serverProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// spawn starts the server in the background. It runs postgres directly, as
// pg_ctl start would, rather than pg_ctl itself: pg_ctl checks for
// readiness only ten times a second, and ensureRunning already waits by
// connecting. The server gets its own session, so that a Ctrl-C meant for
// the command does not reach it, and writes only to its log file.
func (e *Cluster) spawn() (*serverProcess, error) {
	if err := e.writeFile(filepath.Join(e.dataDir, "clearing.conf"), e.serverConf(), false); err != nil {
		return nil, err
	}
	logPath := filepath.Join(e.pgDir, serverLogName)
	if st, err := os.Stat(logPath); err == nil && st.Size() > maxServerLog {
		os.Rename(logPath, logPath+".1")
	}
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	defer logFile.Close()
	if err := e.account.own(logPath); err != nil {
		return nil, err
	}
	cmd := exec.Command(e.bin.path("postgres"), "-D", e.dataDir)
	cmd.Dir = e.dataDir
	cmd.Env = serverEnv()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: e.account.cred}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("embedded: starting %s: %v: %w", cmd.Path, err, ErrServer)
	}
	p := &serverProcess{done: make(chan struct{})}
	go func() {
		// Reaping the server when it exits keeps it from lingering as a
		// zombie while this process lives on.
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// tailFile returns the last n lines of the file at path, or a note saying
// why there are none.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	defer f.Close()
	const window = 8 << 10
	if st, err := f.Stat(); err == nil && st.Size() > window {
		f.Seek(st.Size()-window, io.SeekStart)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return lastLines(string(b), n)
}

// lastLines returns the last n lines of s, indented so that they stand out
// inside an error message.
func lastLines(s string, n int) string {
	lines := bytes.Split(bytes.TrimRight([]byte(s), "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("    ")
		b.Write(l)
	}
	return b.String()
}
