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

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/report"
	"github.com/clearing-dev/clearing/internal/tenant"
)

// rendersReport annotates the commands that print a reconciliation report,
// the only ones that also take -o html. Every other command refuses html
// before it does any work.
const rendersReport = "renders-report"

// hashesAccounts annotates the commands that write keyed hashes of account
// numbers and PANs (ingest, statement import): against a configured
// database they refuse to run without CLEARING_PII_KEY.
const hashesAccounts = "hashes-accounts"

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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	g := &globalOptions{stdout: os.Stdout, stderr: os.Stderr}
	err := newRootCommand(g).ExecuteContext(ctx)
	stop()
	code := exitCode(g, err)
	switch code {
	case exitUsage:
		fmt.Fprintf(os.Stderr, "clearing: %v\nRun 'clearing --help' for usage.\n", err)
	case exitError:
		fmt.Fprintf(os.Stderr, "clearing: %v\n", err)
	}
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
	started        bool // a command's RunE began
}

const rootLong = `clearing ingests clearing files (NACHA ACH, ISO 8583, CSV settlement exports)
into an append-only double-entry ledger in PostgreSQL, reconciles the ledger
against the other side's statements, and posts corrections once an operator
approves them. Every record is posted once, however often, however late and
through whatever channel it arrives again.

Database: --database-url, else CLEARING_DATABASE_URL, else DATABASE_URL, else a
private PostgreSQL cluster under $CLEARING_HOME (default ~/.local/share/clearing)
that clearing starts for each command and stops afterwards.

Tenant: --tenant (default "default") names the ledger to use: 1 to 63
characters of a-z, 0-9, '.', '_' and '-', beginning with a letter or digit.
Anything else is refused (exit 2) by every command.

Against a configured database, ingest and statement import need
CLEARING_PII_KEY, the secret for account and PAN hashes (make one with
'openssl rand -hex 32'); without it they refuse to run (exit 2).

Exit codes:
  0  done, nothing needs a person
  1  error; the message explains, and nothing was half-applied
  2  usage: an unknown command or flag, wrong arguments, an invalid --tenant,
     or a missing CLEARING_PII_KEY; nothing was done
  3  done, but something needs a person: conflicts, quarantined records,
     unexplained breaks, a ledger that fails verification`

func newRootCommand(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:           "clearing",
		Short:         "Post clearing files to a ledger exactly once, and reconcile it",
		Long:          rootLong,
		SilenceErrors: true,
		SilenceUsage:  true,
		Example: `  clearing ingest /in/2026-11-29/*.ach
  clearing lookup ach:1234567890:2026-11-29:091000010000001
  clearing balance --account 'settlement:*'`,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			check := output.Check
			if cmd.Annotations[rendersReport] != "" {
				check = report.Check
			}
			if err := check(g.output); err != nil {
				return usageError{err}
			}
			if err := g.setupLogging(); err != nil {
				return err
			}
			// One rule for every command, so that "", "Default" and
			// "default " never become ledgers of their own.
			if err := tenant.Validate(g.tenant); err != nil {
				return usageError{err}
			}
			if cmd.Annotations[hashesAccounts] != "" {
				return g.checkPIIKey()
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	f := root.PersistentFlags()
	f.StringVar(&g.databaseURL, "database-url", "", "PostgreSQL URL (else CLEARING_DATABASE_URL, DATABASE_URL, or the embedded cluster)")
	f.StringVar(&g.tenant, "tenant", tenant.Default, "tenant whose ledger to use: "+tenant.Pattern)
	f.StringVarP(&g.output, "output", "o", "table", "output format: table, json or csv (reconcile and report also take html)")
	f.StringVar(&g.logFormat, "log-format", "text", "log format on stderr: text or json")
	root.AddCommand(
		newMigrateCommand(g),
		newIngestCommand(g),
		newRunsCommand(g),
		newLookupCommand(g),
		newBalanceCommand(g),
		newLedgerCommand(g),
		newStatementCommand(g),
		newReconcileCommand(g),
		newReportCommand(g),
		newCorrectionsCommand(g),
		newConfigCommand(g),
		newGenerateCommand(g),
	)
	for _, path := range [][]string{{"ingest"}, {"statement", "import"}} {
		if c, _, err := root.Find(path); err == nil && c != root {
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[hashesAccounts] = "true"
		}
	}
	return root
}

func (g *globalOptions) setupLogging() error {
	var level slog.Level
	if v := os.Getenv("CLEARING_LOG_LEVEL"); v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return usagef("CLEARING_LOG_LEVEL %q: use debug, info, warn or error", v)
		}
	}
	opts := &slog.HandlerOptions{Level: level}
	switch g.logFormat {
	case "text":
		g.log = slog.New(slog.NewTextHandler(g.stderr, opts))
	case "json":
		g.log = slog.New(slog.NewJSONHandler(g.stderr, opts))
	default:
		return usagef("--log-format %q: use text or json", g.logFormat)
	}
	return nil
}

// run wraps a command's work so that main can tell its errors from cobra's.
func (g *globalOptions) run(fn func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		g.started = true
		return fn(cmd.Context(), args)
	}
}
