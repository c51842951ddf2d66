package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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

// groupOnly annotates the commands that only group others (ledger,
// corrections, the root): run bare they print their help and exit 2.
const groupOnly = "group-only"

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
			g.reads = readsLedger(cmd)
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
		newBreaksCommand(g),
		newReturnsCommand(g),
		newQuarantineCommand(g),
		newConfigCommand(g),
		newGenerateCommand(g),
		newManCommand(g),
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
	registerCompletions(g, root)
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

// readingCommands are the commands, by their first word, that show what a
// tenant holds; on a tenant that holds nothing they warn, naming those that
// do, since a mistyped --tenant otherwise shows an empty ledger.
var readingCommands = []string{"lookup", "balance", "runs", "report", "breaks", "returns", "quarantine", "ledger", "corrections"}

func readsLedger(cmd *cobra.Command) bool {
	for c := cmd; c != nil && c.HasParent(); c = c.Parent() {
		if !c.Parent().HasParent() {
			return slices.Contains(readingCommands, c.Name())
		}
	}
	return false
}
