// Command pgtestcluster runs a command, typically `go test ./...`, with
// CLEARING_TEST_DATABASE_URL pointing at a PostgreSQL server, so that one
// server serves every test binary of the run:
//
//	go run ./cmd/pgtestcluster -- go test ./...
//
// When CLEARING_TEST_DATABASE_URL is already set, the command runs with it
// untouched. Otherwise pgtestcluster starts a throw-away cluster (it needs
// only the PostgreSQL server package), exports its connection string to
// the command, and stops and deletes the cluster when the command ends,
// fails, or pgtestcluster is interrupted. It exits with the command's code.
//
// With -citus it starts a throw-away Citus cluster instead, a coordinator
// and two workers on free ports of 127.0.0.1, whatever
// CLEARING_TEST_DATABASE_URL says, and points the command at the
// coordinator; every test database is then distributed by tenant
// (package pgtest):
//
//	go run ./cmd/pgtestcluster -citus -- go test ./...
//
// Where the Citus extension is not installed it says so and exits 0
// without running the command, unless CI=true, where that is a failure.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/clearing-dev/clearing/internal/pgtest"
)

// Exit codes of pgtestcluster itself, apart from the command's own.
const (
	exitError    = 1   // the cluster could not be started or stopped
	exitUsage    = 2   // no command given
	exitNotFound = 127 // the command could not be started, as in the shell
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run does the work of main and returns the exit code.
func run(args []string, stderr io.Writer) (code int) {
	citus := false
	if len(args) > 0 && (args[0] == "-citus" || args[0] == "--citus") {
		citus, args = true, args[1:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: pgtestcluster [-citus] -- COMMAND [ARG...]")
		return exitUsage
	}
	// Signals are caught from the start, so that one arriving while the
	// cluster starts cannot kill pgtestcluster and leave a server behind.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	env := os.Environ()
	if os.Getenv(pgtest.EnvURL) == "" || citus {
		ctx := context.Background()
		start := pgtest.StartCluster
		if citus {
			start = pgtest.StartCitusCluster
		}
		c, err := start(ctx)
		if errors.Is(err, pgtest.ErrNoCitus) && os.Getenv("CI") != "true" {
			fmt.Fprintf(stderr, "pgtestcluster: skipping %s: %v\n", strings.Join(args, " "), err)
			return 0
		}
		if err != nil {
			fmt.Fprintf(stderr, "pgtestcluster: %v\n", err)
			return exitError
		}
		defer func() {
			if err := c.Stop(ctx); err != nil {
				fmt.Fprintf(stderr, "pgtestcluster: %v\n", err)
				if code == 0 {
					code = exitError
				}
			}
		}()
		env = append(env, pgtest.EnvURL+"="+c.URL())
		if citus {
			fmt.Fprintf(stderr, "pgtestcluster: Citus coordinator at %s\n", c.URL())
		}
	}
	select {
	case sig := <-sigs:
		fmt.Fprintf(stderr, "pgtestcluster: %v before the command started\n", sig)
		return signalCode(sig)
	default:
	}
	return runCommand(args, env, sigs, stderr)
}

// runCommand runs the command to its end and returns its exit code. A
// signal that pgtestcluster receives is passed on, since one sent to
// pgtestcluster alone (a CI timeout) would otherwise leave the command
// running; a second one kills the command.
func runCommand(args, env []string, sigs <-chan os.Signal, stderr io.Writer) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "pgtestcluster: %v\n", err)
		return exitNotFound
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	received := 0
	for {
		select {
		case sig := <-sigs:
			received++
			if received == 1 {
				cmd.Process.Signal(sig)
			} else {
				cmd.Process.Kill()
			}
		case err := <-done:
			return exitCode(err)
		}
	}
}

// exitCode turns the command's end into an exit code the way a shell does:
// its own code, or 128 plus the signal that killed it.
func exitCode(err error) int {
	var exit *exec.ExitError
	if err == nil {
		return 0
	}
	if !errors.As(err, &exit) {
		return exitError
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return signalCode(ws.Signal())
	}
	return exit.ExitCode()
}

// signalCode is the shell's exit code for death by sig.
func signalCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitError
}
