package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/report"
	"github.com/clearing-dev/clearing/reconcile"
)

func newReconcileCommand(g *globalOptions) *cobra.Command {
	var o reconcile.Options
	var from, to, window, metricsFile string
	var csvOpts report.CSVOptions
	cmd := &cobra.Command{
		Annotations: map[string]string{rendersReport: "yes"},
		Use:         "reconcile --source NAME --from DATE --to DATE [flags]",
		Short:       "Diff the ledger against the statement lines of one source and period",
		Long: `Compare the ledger's postings of one source and period with the statement
lines of the same source and period. Items pair on their reference and currency;
a pair matches when the amounts agree (within --tolerance minor units) and the
value dates lie within --window of each other. Every posting and every line ends
in exactly one class: matched, or one discrepancy with a reason, a sentence that
explains it, and both sides' evidence. Per currency the report bridges the
ledger total to the statement total through the sum of each class; any
unexplained remainder is reported as the loudest line.

Classes: missing_in_ledger, missing_in_statement, amount_mismatch,
currency_mismatch, date_out_of_window, duplicate_in_statement, unbooked_fee,
settlement_total_mismatch (breaks); in_transit (dated after the statement's
last date: timing), returned (netted by a posted return or reversal), corrected
(resolved by an approved correction).

Corrections are proposed for missing_in_ledger, amount_mismatch and
unbooked_fee under derived keys; 'clearing corrections' approves them. The run
is stored: reconciling the same period again after nothing changed gives the
same discrepancies and proposes nothing new. Exits 3 when any break remains.

A period with nothing on either side is stored as a run that compared nothing
(exit 0). With one side empty (a statement imported under another --source, a
period that misses the ledger's dates) the run is stored and exits 3, the
report opens by naming the empty side, and no corrections are proposed. A
source that the tenant has never had a posting or a statement line of is a
usage error (exit 2) that names the tenant's sources; nothing is stored.`,
		Example: `  clearing reconcile --source bank-a --from 2026-11-01 --to 2026-11-30
  clearing reconcile --source ach --from 2026-11-29 --to 2026-11-29 --window 1d --tolerance 5
  clearing reconcile --source bank-a --from 2026-11-01 --to 2026-11-30 -o json > recon.json`,
		Args: cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			var err error
			if o.Source == "" || from == "" || to == "" {
				return usagef("--source, --from and --to are required")
			}
			if o.From, err = time.Parse(time.DateOnly, from); err != nil {
				return usagef("--from %q: use YYYY-MM-DD", from)
			}
			if o.To, err = time.Parse(time.DateOnly, to); err != nil {
				return usagef("--to %q: use YYYY-MM-DD", to)
			}
			if o.WindowDays, err = parseDays(window); err != nil {
				return usagef("--window %q: use a number of days such as 3d", window)
			}
			return runReconcile(ctx, g, o, metricsFile, csvOpts)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&o.Source, "source", "", "source to reconcile (required)")
	f.StringVar(&from, "from", "", "first value date, YYYY-MM-DD (required)")
	f.StringVar(&to, "to", "", "last value date, YYYY-MM-DD (required)")
	f.StringVar(&window, "window", fmt.Sprintf("%dd", reconcile.DefaultWindowDays), "how far apart value dates may be and still match, in days")
	f.Int64Var(&o.Tolerance, "tolerance", 0, "how far apart amounts may be and still match, in minor units")
	f.StringVar(&o.AdjustmentsAccount, "adjustments-account", "", "account for amount differences and fees (default adjustments:<source>)")
	f.StringVar(&o.SuspenseAccount, "suspense-account", "", "account for money the ledger lacks (default suspense:<source>)")
	bindMetricsFlag(f, &metricsFile)
	bindAllFlag(f, &csvOpts)
	return cmd
}

// bindAllFlag adds --all, which makes the CSV form list every item rather
// than only the breaks.
func bindAllFlag(f *pflag.FlagSet, o *report.CSVOptions) {
	f.BoolVar(&o.All, "all", false, "with -o csv, list every item, the explained ones too (default: only the breaks)")
}

// parseDays reads "3d" or "3" as three days.
func parseDays(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSuffix(s, "d"))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a number of days: %q", s)
	}
	return n, nil
}

func runReconcile(ctx context.Context, g *globalOptions, o reconcile.Options, metricsFile string, csvOpts report.CSVOptions) (err error) {
	m := newCommandMetrics(metricsFile, "reconcile")
	defer func() { err = m.finish(g, err) }()
	d, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	o.Tenant, o.Log = g.tenant, g.log
	id, err := reconcile.Run(ctx, d.pool, o)
	if errors.Is(err, reconcile.ErrPeriod) {
		return usageError{err} // checked before any work
	}
	var unknown *reconcile.UnknownSourceError
	if errors.As(err, &unknown) {
		// Nothing was stored: a typo in --source is not a quiet period.
		if len(unknown.Known) == 0 {
			return usagef("--source %q: tenant %q has no postings or statement lines of any source yet", unknown.Source, unknown.Tenant)
		}
		return usagef("--source %q: tenant %q has no postings or statement lines of it; its sources are %s",
			unknown.Source, unknown.Tenant, unknown.KnownList())
	}
	if err != nil {
		return err
	}
	return reconcile.View(ctx, d.pool, g.tenant, id, func(q ledger.Querier, r *report.Report) error {
		if err := m.reconciled(ctx, q, g.tenant, r); err != nil {
			return err
		}
		return g.logReconcileSummary(r, writeReport(g, r, csvOpts))
	})
}

func newReportCommand(g *globalOptions) *cobra.Command {
	var csvOpts report.CSVOptions
	cmd := &cobra.Command{
		Annotations: map[string]string{rendersReport: "yes"},
		Use:         "report RUN|latest",
		Short:       "Show a stored reconciliation as a table, CSV, JSON or HTML",
		Long: `Show a stored reconciliation run. -o table (the default) prints the verdict,
the summary, the bridge per currency (the auditor's form: ledger balance plus
open and acknowledged items equals statement balance, then by class) and the
breaks grouped by class; -o csv prints one row per break (--all: per
discrepancy); -o json prints the documented report document (docs/report.md);
-o html prints a self-contained page that opens with the verdict, the breaks by
class and the bridge, then a chart of breaks by class and amount, and the break
list.`,
		Example: `  clearing report 7
  clearing report latest -o html > recon-2026-11.html
  clearing report 7 -o csv > breaks.csv
  clearing report 7 -o csv --all > every-item.csv`,
		Args: cobra.ExactArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil && args[0] != "latest" {
				return usagef("run id %q is not a number (or latest)", args[0])
			}
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			if args[0] == "latest" {
				if id, err = reconcile.Latest(ctx, d.pool, g.tenant); err != nil {
					return err
				}
			}
			return reconcile.View(ctx, d.pool, g.tenant, id, func(_ ledger.Querier, r *report.Report) error {
				return writeReport(g, r, csvOpts)
			})
		}),
	}
	bindAllFlag(cmd.Flags(), &csvOpts)
	return cmd
}

// writeReport prints r and reports breaks as needing attention.
func writeReport(g *globalOptions, r *report.Report, csvOpts report.CSVOptions) error {
	if err := report.WriteWith(g.stdout, g.output, r, csvOpts); err != nil {
		return err
	}
	if r.OneSided() {
		return fmt.Errorf("%w: reconciliation run %d compared nothing on the %s side; check --source and the period (no corrections were proposed)",
			errNeedsAttention, r.RunID, r.EmptySide)
	}
	if !r.Balanced() {
		return fmt.Errorf("%w: the totals of reconciliation run %d do not bridge: part of the difference is unexplained", errNeedsAttention, r.RunID)
	}
	if r.NeedsPerson() {
		return fmt.Errorf("%w: reconciliation run %d has breaks", errNeedsAttention, r.RunID)
	}
	return nil
}
