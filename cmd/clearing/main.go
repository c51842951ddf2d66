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
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/clearing-dev/clearing/formats/csv"
	"github.com/clearing-dev/clearing/formats/iso8583"
	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/report"
	"github.com/clearing-dev/clearing/internal/tenant"
	"github.com/clearing-dev/clearing/reconcile"
)

// rendersReport annotates the commands that print a reconciliation report,
// the only ones that also take -o html. Every other command refuses html
// before it does any work.
const rendersReport = "renders-report"

// hashesAccounts annotates the commands that write keyed hashes of account
// numbers and PANs (ingest, statement import): against a configured
// database they refuse to run without CLEARING_PII_KEY.
const hashesAccounts = "hashes-accounts"

// groupOnly annotates the commands that only group others (ledger,
// corrections, the root): run bare they print their help and exit 2.
const groupOnly = "group-only"

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
	began          time.Time // when it began
}

// now is the time, for the durations that summary events carry.
func (g *globalOptions) now() time.Time { return time.Now() }

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
  2  usage: an unknown command at any level (with a suggestion), a command
     group run without a subcommand (its help is printed), an unknown flag
     or flag value (--format nacha), wrong arguments, an invalid --tenant,
     or a missing CLEARING_PII_KEY; nothing was done
  3  done, but something needs a person: conflicts, quarantined records,
     unexplained breaks, a ledger that fails verification
  141  stdout was closed before everything was written ('clearing runs |
     head -1'), as for a program killed by SIGPIPE; the embedded cluster
     was stopped all the same

Logs: --log-format json makes every line on stderr one JSON object, errors
included. Every file ingested or imported, and every reconciliation, logs one
INFO event ("ingest summary", "statement import summary", "reconcile summary")
with its counts and its exit_code. Durations are in seconds, in attributes
named *_seconds.`

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
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	f := root.PersistentFlags()
	f.StringVar(&g.databaseURL, "database-url", "", "PostgreSQL URL (else CLEARING_DATABASE_URL, DATABASE_URL, or the embedded cluster)")
	f.StringVar(&g.tenant, "tenant", tenant.Default, "tenant whose ledger to use: "+tenant.Pattern)
	f.StringVarP(&g.output, "output", "o", "table", "output format: table, json or csv (reconcile and report also take html)")
	f.StringVar(&g.logFormat, "log-format", "text", "log format on stderr: text or json")
	restrictFlag(f, "log-format", []string{"text", "json"})
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
	// cobra adds these when it executes; added now, the walk below covers
	// them too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	requireSubcommands(root)
	// A group is runnable now, but only to refuse being run: its usage
	// shows "clearing ledger [command]", not "clearing ledger [flags]".
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(), "Usage:{{if .Runnable}}",
		`Usage:{{if and .Runnable (ne (index .Annotations "`+groupOnly+`") "yes")}}`, 1))
	return root
}

// requireSubcommands makes every command that has subcommands, at every
// level, refuse one it does not know as a usage error with cobra's
// suggestions. cobra does so only for the root: 'clearing ledger verfy'
// printed the help of ledger and exited 0. A group run bare prints its
// help and is a usage error too, since it did nothing that a cron job can
// have meant (docs/decisions/unknown-commands.md). It runs over the built
// tree, so that a command added later is covered without a line of its own.
func requireSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		requireSubcommands(c)
	}
	if cmd.Name() == "help" && cmd.HasParent() {
		run := cmd.Run
		cmd.RunE = func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil {
				return usageError{err}
			}
			if len(rest) > 0 {
				return unknownCommand(target, rest[0])
			}
			run(c, args)
			return nil
		}
		return
	}
	if !cmd.HasSubCommands() {
		return
	}
	// A word after a group, or one its own Args refuse after a command that
	// runs (runs, whose subcommand is show), is a mistyped subcommand.
	args, bare := cmd.Args, !cmd.Runnable()
	cmd.Args = func(c *cobra.Command, a []string) error {
		if len(a) > 0 && (bare || args == nil || args(c, a) != nil) {
			return unknownCommand(c, a[0])
		}
		if args == nil {
			return nil
		}
		return args(c, a)
	}
	if bare {
		if cmd.Annotations == nil {
			cmd.Annotations = map[string]string{}
		}
		cmd.Annotations[groupOnly] = "yes"
		cmd.RunE = func(c *cobra.Command, _ []string) error {
			if err := c.Help(); err != nil {
				return err
			}
			var names []string
			for _, s := range c.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			return usagef("%q needs a subcommand: %s", c.CommandPath(), orList(names))
		}
	}
}

// unknownCommand is the usage error for a subcommand that c does not have.
func unknownCommand(c *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // what cobra's own suggestions use
	}
	if s := c.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + orList(s) + "?"
	} else if c.HasAvailableSubCommands() {
		msg += fmt.Sprintf("; run '%s --help' for its commands", c.CommandPath())
	}
	return usageError{errors.New(msg)}
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// enumValue restricts a string flag to the values it lists (and its
// default), so that every mistyped value of every enumerated flag is the
// same usage error (exit 2), found while the flags are parsed, before any
// command reads a file or opens the database.
type enumValue struct {
	pflag.Value // the flag as declared
	def         string
	allowed     []string
	// orFile also accepts the path of an existing file (--iso-spec).
	orFile bool
	// prefix also accepts prefix followed by one of prefixed, and anything
	// that does not start with prefix (--map preset:NAME or a file).
	prefix   string
	prefixed []string
}

func (e *enumValue) Set(v string) error {
	switch {
	case v == e.def, slices.Contains(e.allowed, v):
	case e.prefix != "" && strings.HasPrefix(v, e.prefix):
		if name := strings.TrimPrefix(v, e.prefix); !slices.Contains(e.prefixed, name) {
			names := make([]string, len(e.prefixed))
			for i, p := range e.prefixed {
				names[i] = e.prefix + p
			}
			return fmt.Errorf("unknown %s %q: use %s", strings.TrimSuffix(e.prefix, ":"), name, orList(names))
		}
	case e.prefix != "":
	case e.orFile:
		if st, err := os.Stat(v); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("use %s, or the path of a file", orList(e.allowed))
		}
	default:
		return fmt.Errorf("use %s", orList(e.allowed))
	}
	return e.Value.Set(v)
}

// restrictFlag makes the string flag name of f take only allowed values, or
// its default.
func restrictFlag(f *pflag.FlagSet, name string, allowed []string) {
	restrict(f, name, enumValue{allowed: allowed})
}

func restrict(f *pflag.FlagSet, name string, e enumValue) {
	fl := f.Lookup(name)
	e.Value, e.def = fl.Value, fl.Value.String()
	fl.Value = &e
}

// restrictReaderFlags restricts the flags that bindReaderFlags declares.
func restrictReaderFlags(f *pflag.FlagSet) {
	restrictFlag(f, "iso-framing", iso8583.Framings())
	restrict(f, "iso-spec", enumValue{allowed: []string{iso8583.SpecName87ASCII, iso8583.SpecName87}, orFile: true})
	restrict(f, "map", enumValue{prefix: "preset:", prefixed: csv.Presets()})
}

func (g *globalOptions) setupLogging() error {
	var level slog.Level
	if v := os.Getenv("CLEARING_LOG_LEVEL"); v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return usagef("CLEARING_LOG_LEVEL %q: use debug, info, warn or error", v)
		}
	}
	log := newLogger(g.stderr, g.logFormat, level)
	if log == nil {
		return usagef("--log-format %q: use text or json", g.logFormat)
	}
	g.log = log
	return nil
}

// newLogger returns the logger for format ("text" or "json"), or nil for
// another format. Every duration, whoever logs it, is written in seconds
// under its key with "_seconds" appended (took becomes took_seconds): slog
// would write nanoseconds in JSON and "1.5s" in text, and a log reader
// should not have to guess the unit.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindDuration {
			return slog.Float64(a.Key+"_seconds", a.Value.Duration().Seconds())
		}
		return a
	}}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts))
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return nil
}

// jsonLogs reports whether stderr must carry JSON only. When the command
// line could not be parsed (an unknown flag before --log-format, say), the
// flag is looked for in the arguments themselves, so that a cron job that
// asked for JSON gets its error as JSON too.
func (g *globalOptions) jsonLogs() bool {
	if g.log != nil || g.logFormat == "json" {
		return g.logFormat == "json"
	}
	args := os.Args[1:]
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--log-format" && i+1 < len(args):
			return args[i+1] == "json"
		case strings.HasPrefix(a, "--log-format="):
			return strings.TrimPrefix(a, "--log-format=") == "json"
		}
	}
	return false
}

// errorLog is the logger for the final error: the command's, or one made
// now when the command line failed before logging was set up.
func (g *globalOptions) errorLog() *slog.Logger {
	if g.log != nil {
		return g.log
	}
	format := "text"
	if g.jsonLogs() {
		format = "json"
	}
	return newLogger(g.stderr, format, slog.LevelInfo)
}

// reportExit tells the operator why cmd (nil when none was found) failed.
// In text it is the message as it is, with its line breaks (a rejected
// file's reasons, one a line); with --log-format json it is one ERROR event.
func (g *globalOptions) reportExit(cmd *cobra.Command, code int, err error) {
	if err == nil || (code != exitUsage && code != exitError) {
		return
	}
	msg, path := userMessage(err), "clearing"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	if g.jsonLogs() {
		g.errorLog().Error("command failed", slog.String("command", path), slog.String("error", msg), slog.Int("exit_code", code))
		return
	}
	fmt.Fprintf(g.stderr, "clearing: %s\n", msg)
	if code == exitUsage {
		fmt.Fprintf(g.stderr, "Run '%s --help' for usage.\n", path)
	}
}

// reportRejected tells the operator why one file was rejected, while the
// command goes on with the next: in text as main would, in JSON as one
// ERROR event whose errors are a list.
func (g *globalOptions) reportRejected(file string, err error) {
	if !g.jsonLogs() {
		fmt.Fprintf(g.stderr, "clearing: %s\n", userMessage(err))
		return
	}
	attrs := []any{slog.String("file", file)}
	var rej *ingest.RejectedError
	if errors.As(err, &rej) {
		reasons := make([]string, len(rej.Errs))
		for i, e := range rej.Errs {
			reasons[i] = userMessage(e)
		}
		attrs = append(attrs, slog.Any("errors", reasons), slog.Bool("more_errors", rej.Truncated))
	} else {
		attrs = append(attrs, slog.String("error", userMessage(err)))
	}
	g.log.Error("file rejected", attrs...)
}

// packagePrefix matches the names of this module's packages where they
// begin an error's text or a part of it ("registry: unknown format",
// "line 4: ach: invalid field"). Sentinel errors carry them, as STYLE asks,
// for whoever reads the code; an operator reads the message without them
// (docs/decisions/error-messages-for-operators.md). TestPackagePrefixes
// keeps the list in step with the packages.
var packagePrefix = regexp.MustCompile(`(^|\n[ \t]*|: )(?:(?:` + strings.Join(modulePackages, "|") + `): )+`)

// modulePackages are the names of the module's packages.
var modulePackages = []string{"ach", "bai2", "bench", "camt", "corpus", "corrections", "csv", "db", "demo", "embedded", "failpoint",
	"formats", "infile", "ingest", "ipm", "iso8583", "ledger", "migrations", "money", "mt940", "output", "pgtest", "pii", "reconcile",
	"registry", "report", "runs", "settings", "stage", "statement", "statementtest", "tenant"}

// userMessage is err's text for an operator: without package prefixes.
func userMessage(err error) string {
	return packagePrefix.ReplaceAllString(err.Error(), "$1")
}

// logSummary logs the one INFO event that sums up a file's ingest or
// import, or a reconciliation: msg, attrs, how long it took, and the exit
// code that outcome alone gives (what main would exit with for it).
func (g *globalOptions) logSummary(msg string, began time.Time, outcome error, attrs ...slog.Attr) {
	attrs = append(attrs, slog.Duration("duration", time.Since(began)), slog.Int("exit_code", exitCode(g, outcome)))
	g.log.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
}

// run wraps a command's work so that main can tell its errors from cobra's.
func (g *globalOptions) run(fn func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		g.started, g.began = true, g.now()
		return fn(cmd.Context(), args)
	}
}

// logIngestSummary logs the summary event of one file given to ingest; err
// is what ingest.File returned for it.
func (g *globalOptions) logIngestSummary(s ingest.Summary, began time.Time, err error) {
	if err == nil && s.NeedsAttention() {
		err = errNeedsAttention
	}
	g.logSummary("ingest summary", began, err,
		slog.String("file", s.File), slog.String("format", s.Format), slog.String("source", s.Source),
		slog.Int64("run_id", s.RunID), slog.String("status", s.Status), slog.Bool("resumed", s.Resumed),
		slog.Int64("records", s.Records), slog.Int64("posted", s.Posted), slog.Int64("duplicates", s.Duplicates),
		slog.Int64("conflicts", s.Conflicts), slog.Int64("quarantined", s.Quarantined), slog.Int64("notices", s.Notices),
		slog.Int64("skipped", s.Skipped), slog.Int64("settled", s.Settled))
}

// logImportSummary logs the summary event of one statement file; err is
// what reconcile.ImportStatement returned for it.
func (g *globalOptions) logImportSummary(s reconcile.ImportSummary, began time.Time, err error) {
	if err == nil && s.Conflicts > 0 {
		err = errNeedsAttention
	}
	g.logSummary("statement import summary", began, err,
		slog.String("file", s.File), slog.String("format", s.Format), slog.String("source", s.Source),
		slog.Int64("run_id", s.RunID), slog.String("status", s.Status),
		slog.Int64("records", s.Records), slog.Int64("added", s.Added), slog.Int64("duplicates", s.Duplicates),
		slog.Int64("conflicts", s.Conflicts), slog.Int64("skipped", s.Skipped))
}

// logReconcileSummary logs the summary event of a stored reconciliation,
// timed from the command's start, and returns outcome, what writeReport
// made of it.
func (g *globalOptions) logReconcileSummary(r *report.Report, outcome error) error {
	var breaks int64
	classes := make([]any, 0, len(r.Classes))
	for _, c := range r.Classes {
		if c.Break {
			breaks += c.LedgerItems + c.StatementLines
		}
		classes = append(classes, slog.Int64(c.Class, c.LedgerItems+c.StatementLines))
	}
	g.logSummary("reconcile summary", g.began, outcome,
		slog.Int64("run_id", r.RunID), slog.String("source", r.Source), slog.String("from", r.From), slog.String("to", r.To),
		slog.String("empty_side", r.EmptySide),
		slog.Int64("ledger_items", r.LedgerItems), slog.Int64("statement_lines", r.StatementLines),
		slog.Int64("matched_ledger", r.MatchedLedger), slog.Int64("matched_statement", r.MatchedStatement),
		slog.Int64("breaks", breaks), slog.Bool("balanced", r.Balanced()), slog.Group("classes", classes...))
	return outcome
}
