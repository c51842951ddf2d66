package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// gnuTime is GNU time, whose -v report gives the peak resident set size of
// the process it runs as the kernel accounts it.
const gnuTime = "/usr/bin/time"

// benchPIIKey is the account hashing key of every clearing run and of the
// baselines, so that both hash accounts, and so digest records, alike.
const benchPIIKey = "clearing-bench-not-a-secret"

// errTimedOut means a clearing command ran past the bench's limit and was
// stopped.
var errTimedOut = errors.New("did not finish in time")

// ran is one finished clearing command.
type ran struct {
	args    []string
	wall    time.Duration
	rssKiB  int64  // peak resident set size
	rssFrom string // "/usr/bin/time -v" or "wait4 rusage"
	exit    int
	stdout  []byte // empty when stdout went to a file
	stderr  []byte // the last 64 KiB
}

func (r ran) rssMiB() float64 { return float64(r.rssKiB) / 1024 }

// clearing runs the clearing binary with args against the bench's server
// and returns its wall time and peak memory. An exit code outside accept
// is an error carrying the command's stderr. With stdoutPath set, stdout
// goes to that file instead of memory. A command that runs longer than the
// bench's limit is stopped and reported as errTimedOut, with the limit as
// its wall time.
func (b *bench) clearing(ctx context.Context, accept []int, stdoutPath string, args ...string) (ran, error) {
	r := ran{args: args}
	ctx, cancel := context.WithTimeout(ctx, b.cmdTimeout)
	defer cancel()
	rssFile := filepath.Join(b.work, "time-v.txt")
	os.Remove(rssFile)
	name, argv := b.bin, args
	useTime := fileExists(gnuTime)
	if useTime {
		name, argv = gnuTime, append([]string{"-v", "-o", rssFile, b.bin}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	stopGroup(cmd)
	cmd.Env = append(os.Environ(), "CLEARING_DATABASE_URL="+b.srv.url, "CLEARING_PII_KEY="+benchPIIKey)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if stdoutPath != "" {
		f, err := os.Create(stdoutPath)
		if err != nil {
			return r, err
		}
		defer f.Close()
		cmd.Stdout = f
	}
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	began := time.Now()
	err := cmd.Run()
	r.wall = time.Since(began)
	r.stdout, r.stderr = stdout.Bytes(), stderr.Bytes()
	if ctx.Err() == context.DeadlineExceeded {
		b.endTimedOut(context.WithoutCancel(ctx), cmd)
		r.wall = b.cmdTimeout
		return r, fmt.Errorf("clearing %s: %w (%s)", strings.Join(args, " "), errTimedOut, b.cmdTimeout)
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && exitErr.Exited():
		r.exit = exitErr.ExitCode()
	default:
		return r, fmt.Errorf("clearing %s: %w\n%s", strings.Join(args, " "), err, r.stderr)
	}
	if !slices.Contains(accept, r.exit) {
		return r, fmt.Errorf("clearing %s exited %d, expected %v; its stderr:\n%s",
			strings.Join(args, " "), r.exit, accept, r.stderr)
	}
	if useTime {
		r.rssKiB, err = readMaxRSS(rssFile)
		r.rssFrom = gnuTime + " -v"
	} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rssKiB, r.rssFrom = ru.Maxrss, "wait4 rusage" // KiB on Linux
	}
	return r, err
}

// stopGroup makes cmd its own process group and has a cancelled cmd
// interrupted as a whole: clearing as well as the time process that runs it.
// clearing cancels its query on SIGTERM; whatever is left after a grace
// period is killed.
func stopGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
}

// endTimedOut makes sure a stopped command leaves nothing behind: its
// process group is killed, and any statement it left running on the server
// is ended, so that it does not slow down the measurements that follow.
func (b *bench) endTimedOut(ctx context.Context, cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	_, err := b.srv.pool.Exec(ctx, `
SELECT pg_terminate_backend(pid)
  FROM pg_stat_activity
 WHERE datname = current_database() AND application_name = 'clearing' AND pid <> pg_backend_pid()`)
	if err != nil {
		b.warn("could not end the server sessions of a stopped clearing command: %v", err)
	}
}

// readMaxRSS reads "Maximum resident set size (kbytes): N" from a GNU time
// -v report.
func readMaxRSS(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read %s's report: %w", gnuTime, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		label, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), ": ")
		if ok && label == "Maximum resident set size (kbytes)" {
			return strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s's report %s has no maximum resident set size", gnuTime, path)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// tailBuffer keeps the last max bytes written to it: enough of a failing
// command's stderr to explain it, without holding a chatty one whole.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte { return t.buf }
