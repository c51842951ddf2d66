package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/clearing-dev/clearing/internal/db/embedded"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/report"
	"github.com/clearing-dev/clearing/internal/tenant"
)

// completionTimeout bounds the database work behind one press of TAB: a
// shell that waits longer than this for a list is worse than no list.
const completionTimeout = 3 * time.Second

// completionLimit is the most values one query offers.
const completionLimit = 200

// correctionStatuses are the statuses of the corrections table's CHECK
// (migrations/00002_reconcile.sql), which 'corrections list --status' takes.
var correctionStatuses = []string{"proposed", "approved", "rejected", "posted"}

// A completionQuery lists values from the database: $1 is the tenant, $2 a
// LIKE pattern of what has been typed so far. Each row is the value, a short
// description, and an amount in minor units with its currency (NULL when
// there is none), which zsh and fish show beside the value.
type completionQuery string

// The values that flags and arguments name in the database, newest first
// where they have an order, so that the one meant is at the top of a list
// that the limit may cut.
const (
	sourcesQuery completionQuery = `
SELECT source, string_agg(DISTINCT kind, ', ' ORDER BY kind), NULL::bigint, NULL FROM runs
 WHERE tenant_id = $1 AND source LIKE $2 GROUP BY source ORDER BY source`
	// Every tenant, whichever --tenant says.
	tenantsQuery completionQuery = `
SELECT tenant_id, '', NULL::bigint, NULL FROM (SELECT DISTINCT tenant_id FROM runs) t
 WHERE tenant_id LIKE $2 AND $1::text IS NOT NULL ORDER BY tenant_id`
	runsQuery completionQuery = `
SELECT id::text, kind || ' ' || source || CASE WHEN file_name <> '' THEN ' ' || file_name ELSE '' END, NULL::bigint, NULL FROM runs
 WHERE tenant_id = $1 AND id::text LIKE $2 ORDER BY id DESC`
	reconciliationsQuery completionQuery = `
SELECT id::text, source || ' ' || period_from || ' to ' || period_to, NULL::bigint, NULL FROM reconciliations
 WHERE tenant_id = $1 AND id::text LIKE $2 ORDER BY id DESC`
	correctionsQuery completionQuery = `
SELECT id::text, status || ' ' || class, amount_minor, currency FROM corrections
 WHERE tenant_id = $1 AND id::text LIKE $2 ORDER BY id DESC`
	proposedCorrectionsQuery completionQuery = `
SELECT id::text, class, amount_minor, currency FROM corrections
 WHERE tenant_id = $1 AND id::text LIKE $2 AND status = 'proposed' ORDER BY id DESC`
	// A key's newest break describes it.
	breakKeysQuery completionQuery = `
SELECT item_key, status || ' ' || class, amount::bigint, currency FROM (
  SELECT DISTINCT ON (item_key) * FROM breaks WHERE tenant_id = $1 AND item_key LIKE $2 ORDER BY item_key, id DESC) b
 ORDER BY id DESC`
	openBreakKeysQuery completionQuery = `
SELECT item_key, class, amount::bigint, currency FROM (
  SELECT DISTINCT ON (item_key) * FROM breaks WHERE tenant_id = $1 AND item_key LIKE $2 AND status = 'open' ORDER BY item_key, id DESC) b
 ORDER BY id DESC`
	heldKeysQuery completionQuery = `
SELECT record_key, coalesce(decision, 'open') || ' ' || verdict, amount_minor, currency FROM (
  SELECT DISTINCT ON (q.record_key) q.*, d.decision FROM quarantine q
    LEFT JOIN quarantine_decisions d ON d.tenant_id = q.tenant_id AND d.record_key = q.record_key AND d.digest = q.digest
   WHERE q.tenant_id = $1 AND q.record_key LIKE $2 ORDER BY q.record_key, q.created_at DESC) h
 ORDER BY created_at DESC, record_key`
	openHeldKeysQuery completionQuery = `
SELECT record_key, verdict, amount_minor, currency FROM (
  SELECT DISTINCT ON (q.record_key) q.* FROM quarantine q
   WHERE q.tenant_id = $1 AND q.record_key LIKE $2
     AND NOT EXISTS (SELECT 1 FROM quarantine_decisions d
                      WHERE d.tenant_id = q.tenant_id AND d.record_key = q.record_key AND d.digest = q.digest)
   ORDER BY q.record_key, q.created_at DESC) h
 ORDER BY created_at DESC, record_key`
	verdictsQuery completionQuery = `
SELECT DISTINCT verdict, '', NULL::bigint, NULL FROM quarantine WHERE tenant_id = $1 AND verdict LIKE $2 ORDER BY verdict`
	// The primary key (tenant_id, posting_key), in the C collation, serves
	// the prefix.
	postingKeysQuery completionQuery = `
SELECT posting_key, kind, amount_minor, currency FROM postings
 WHERE tenant_id = $1 AND posting_key LIKE $2 ORDER BY posting_key`
	settingKeysQuery completionQuery = `
SELECT key, 'set to ' || value, NULL::bigint, NULL FROM config WHERE tenant_id = $1 AND key LIKE $2
UNION
SELECT 'corrections.four_eyes_above.' || currency, 'not set', NULL::bigint, NULL
  FROM (SELECT DISTINCT currency FROM corrections WHERE tenant_id = $1) c
 WHERE 'corrections.four_eyes_above.' || currency LIKE $2
   AND NOT EXISTS (SELECT 1 FROM config WHERE tenant_id = $1 AND key = 'corrections.four_eyes_above.' || c.currency)
 ORDER BY 1`
)

// argCompletions completes the arguments of commands, by their path below
// the root: the database values they name.
func argCompletions(g *globalOptions) map[string]cobra.CompletionFunc {
	return map[string]cobra.CompletionFunc{
		"report":                g.completeFrom(reconciliationsQuery, "latest\tthe newest reconciliation"),
		"runs show":             g.completeFrom(runsQuery),
		"lookup":                g.completeFrom(postingKeysQuery),
		"corrections show":      g.completeFrom(correctionsQuery),
		"corrections approve":   g.completeFrom(proposedCorrectionsQuery),
		"corrections reject":    g.completeFrom(proposedCorrectionsQuery),
		"breaks show":           g.completeFrom(breakKeysQuery),
		"breaks ack":            g.completeFrom(openBreakKeysQuery),
		"quarantine show":       g.completeFrom(heldKeysQuery),
		"quarantine release":    g.completeFrom(openHeldKeysQuery),
		"quarantine dismiss":    g.completeFrom(openHeldKeysQuery),
		"config get":            g.completeFrom(settingKeysQuery),
		"config set":            firstArg(g.completeFrom(settingKeysQuery)),
		"generate demo":         directories,
		"statement import":      files,
		"ingest":                files,
		"completion bash":       noFiles,
		"completion zsh":        noFiles,
		"completion fish":       noFiles,
		"completion powershell": noFiles,
	}
}

// flagCompletions completes the values of flags by name, whatever command
// declares them; a flag restricted to a list of values (restrictFlag) needs
// no entry, since its list is its completion.
func flagCompletions(g *globalOptions) map[string]cobra.CompletionFunc {
	return map[string]cobra.CompletionFunc{
		"output":  completeOutput,
		"source":  g.completeFrom(sourcesQuery),
		"tenant":  g.completeFrom(tenantsQuery),
		"run":     g.completeFrom(reconciliationsQuery),
		"verdict": g.completeFrom(verdictsQuery),
		"status":  cobra.FixedCompletions(correctionStatuses, cobra.ShellCompDirectiveNoFileComp),
	}
}

// fileFlags take the path of a file or folder; every other flag with a
// value completes nothing rather than the files of the working folder.
var fileFlags = []string{"out", "metrics-file", "dir"}

// registerCompletions gives every flag and argument of the tree its
// completion: the values of a restricted flag, -o's formats, and the
// sources, runs, corrections, breaks and held records of the configured
// database. It walks the built tree, so that a command or flag added later
// is covered by its name without a line of its own.
func registerCompletions(g *globalOptions, root *cobra.Command) {
	args, flags := argCompletions(g), flagCompletions(g)
	done := map[*pflag.Flag]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
		if fn, ok := args[path]; ok {
			c.ValidArgsFunction = bounded(fn)
		} else if c.ValidArgsFunction == nil && !c.HasSubCommands() && c.Args != nil && c.Args(c, []string{"x"}) != nil {
			c.ValidArgsFunction = noFiles // a command that takes no arguments
		}
		register := func(f *pflag.Flag) {
			if done[f] || f.NoOptDefVal != "" { // a boolean takes no value to complete
				return
			}
			done[f] = true
			fn := flagCompletion(f, flags)
			if fn != nil {
				_ = c.RegisterFlagCompletionFunc(f.Name, fn)
			}
		}
		c.PersistentFlags().VisitAll(register)
		c.LocalNonPersistentFlags().VisitAll(register)
	}
	walk(root)
}

// flagCompletion is the completion of one flag, or nil for cobra's default
// (file names).
func flagCompletion(f *pflag.Flag, byName map[string]cobra.CompletionFunc) cobra.CompletionFunc {
	if e, ok := f.Value.(*enumValue); ok {
		return e.complete
	}
	if fn, ok := byName[f.Name]; ok {
		return fn
	}
	for _, name := range fileFlags {
		if f.Name == name || strings.HasSuffix(f.Name, "-"+name) {
			return nil
		}
	}
	return noFiles
}

// complete offers the flag's values: its list, its prefixed names
// (preset:NAME), and the files of the folder when it also takes a path.
func (e *enumValue) complete(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, v := range e.allowed {
		if v != "" && strings.HasPrefix(v, toComplete) {
			out = append(out, v)
		}
	}
	if e.prefix != "" {
		for _, p := range e.prefixed {
			if v := e.prefix + p; strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		// A mapping file is the other choice, unless preset: is being typed.
		if toComplete != "" && (strings.HasPrefix(toComplete, e.prefix) || strings.HasPrefix(e.prefix, toComplete)) {
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		return out, cobra.ShellCompDirectiveDefault
	}
	if e.orFile {
		return out, cobra.ShellCompDirectiveDefault
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeOutput offers the output formats the command takes: html only
// where it renders a report.
func completeOutput(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	formats := []string{output.Table, output.JSON, output.CSV}
	if cmd.Annotations[rendersReport] != "" {
		formats = append(formats, report.HTML)
	}
	var out []cobra.Completion
	for _, f := range formats {
		if strings.HasPrefix(f, toComplete) {
			out = append(out, f)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func noFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

func files(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveDefault
}

func directories(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// bounded completes nothing once the command has all the arguments its Args
// accept ('report 7 <TAB>'), and leaves out those already given
// ('corrections approve 12 <TAB>').
func bounded(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if cmd.Args != nil && cmd.Args(cmd, append(append([]string(nil), args...), toComplete)) != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		values, directive := fn(cmd, args, toComplete)
		out := values[:0]
		for _, v := range values {
			if name, _, _ := strings.Cut(v, "\t"); !contains(args, name) {
				out = append(out, v)
			}
		}
		return out, directive
	}
}

func contains(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// firstArg completes only the first argument ('config set KEY VALUE').
func firstArg(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(cmd, args, toComplete)
	}
}

// completeFrom completes from the configured database: the connection the
// command itself would use (--database-url, CLEARING_DATABASE_URL,
// DATABASE_URL, or an embedded cluster that already exists), the tenant
// of --tenant. Anything that goes wrong (no database, a refused
// connection, a schema of another version, a query the login may not run)
// completes nothing and says nothing: a shell's completion is no place for
// an error. fixed are offered first, whatever the database holds.
func (g *globalOptions) completeFrom(q completionQuery, fixed ...cobra.Completion) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, v := range fixed {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return append(out, g.queryCompletions(cmd.Context(), q, toComplete)...), cobra.ShellCompDirectiveNoFileComp
	}
}

func (g *globalOptions) queryCompletions(ctx context.Context, q completionQuery, toComplete string) []cobra.Completion {
	if ctx == nil {
		ctx = context.Background()
	}
	if tenant.Validate(g.tenant) != nil || (g.databaseURLFromEnv() == "" && !embeddedClusterExists()) {
		return nil
	}
	// Nothing may reach the terminal from here: the shell draws its list
	// over whatever is written to stderr.
	g.log = slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	d, err := g.open(ctx, false)
	if err != nil {
		return nil
	}
	defer d.Close(ctx)
	rows, err := d.pool.Query(ctx, string(q)+" LIMIT "+itoa(completionLimit), g.tenant, likePrefix(toComplete))
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []cobra.Completion
	for rows.Next() {
		var value, desc string
		var amount *int64
		var currency *string
		if rows.Scan(&value, &desc, &amount, &currency) != nil {
			return nil
		}
		if amount != nil && currency != nil {
			desc = strings.TrimSpace(desc + " " + money.FormatCode(*amount, *currency))
		}
		out = append(out, cobra.CompletionWithDesc(value, desc))
	}
	if rows.Err() != nil {
		return nil
	}
	return out
}

// likePrefix is the LIKE pattern of the values that begin with s.
func likePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s) + "%"
}

// embeddedClusterExists reports whether the embedded cluster has been
// created: completion starts one that exists, but never creates one, which
// would take a TAB press many seconds and leave a cluster behind.
func embeddedClusterExists() bool {
	home, err := embedded.DefaultHome()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(home, "pg", "data", "PG_VERSION"))
	return err == nil
}
