package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/report"
)

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
	"formats", "infile", "ingest", "ipm", "iso8583", "ledger", "metrics", "migrations", "money", "mt940", "output", "pgtest", "pii", "reconcile",
	"registry", "report", "runs", "schema", "settings", "stage", "statement", "statementtest", "tenant"}

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
		slog.Int64("skipped", s.Skipped), slog.Int64("settled", s.Settled),
		slog.Int64("already_quarantined", s.AlreadyQuarantined), slog.Int64("dismissed", s.Dismissed),
		slog.Int64("released", s.Released))
}

// logImportSummary logs the summary event of one statement file; err is
// what ingest.Statement returned for it.
func (g *globalOptions) logImportSummary(s ingest.StatementSummary, began time.Time, err error) {
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
