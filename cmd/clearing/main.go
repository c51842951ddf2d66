// Command clearing ingests clearing files into an append-only double-entry
// ledger in PostgreSQL, reconciles it against the other side's statements,
// and posts approved corrections. Every record is posted once, however often
// it arrives.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/internal/output"
)

// Exit codes. main is the only place that chooses them.
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2
	exitAttention = 3
)

// errNeedsAttention marks a command that did its work but found something a
// person must look at: conflicts, quarantined records, unexplained breaks.
var errNeedsAttention = errors.New("needs attention")

// usageError marks a mistake in how the command was called.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitBrokenPipe is what a shell reports for a program that SIGPIPE killed
// (128 + 13): the reader of stdout went away, as 'head -1' does. clearing
// exits with it after stopping what it started, so that a pipeline under
// 'set -o pipefail' sees what it would see of any other program.
const exitBrokenPipe = 141

func main() {
	// Without this the runtime kills the process at the first write to a
	// closed stdout, and no deferred Close stops the embedded cluster. With
	// it the write fails with EPIPE and the command unwinds like any other
	// error. Notify rather than Ignore: an ignored signal is inherited by the
	// server programs that clearing starts.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stdout := &output.PipeWriter{W: os.Stdout}
	g := &globalOptions{stdout: stdout, stderr: os.Stderr}
	cmd, err := newRootCommand(g).ExecuteContextC(ctx)
	stop()
	if stdout.Broken() {
		os.Exit(exitBrokenPipe) // nobody is left to read an explanation
	}
	code := exitCode(g, err)
	g.reportExit(cmd, code, err)
	os.Exit(code)
}

func exitCode(g *globalOptions, err error) int {
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errNeedsAttention):
		return exitAttention
	case errors.As(err, &ue), !g.started:
		// An error before any command ran is cobra's: an unknown command or
		// flag, or a wrong number of arguments.
		return exitUsage
	default:
		return exitError
	}
}

// globalOptions are the flags every command takes, and what they set up.
type globalOptions struct {
	databaseURL string
	tenant      string
	output      string
	logFormat   string

	stdout, stderr io.Writer
	log            *slog.Logger
	started        bool      // a command's RunE began
	reads          bool      // the command shows what the tenant holds (readingCommands)
	began          time.Time // when it began
}

// now is the time, for the durations that summary events carry.
func (g *globalOptions) now() time.Time { return time.Now() }

// run wraps a command's work so that main can tell its errors from cobra's.
func (g *globalOptions) run(fn func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		g.started, g.began = true, g.now()
		return fn(cmd.Context(), args)
	}
}
