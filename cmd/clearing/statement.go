package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/statement"
)

func newStatementCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "statement",
		Short: "Load the other side's statements for reconciliation",
	}
	cmd.AddCommand(newStatementImportCommand(g))
	return cmd
}

func newStatementImportCommand(g *globalOptions) *cobra.Command {
	o := ingest.StatementOptions{}
	var metricsFile string
	cmd := &cobra.Command{
		Use:   "import --source NAME [flags] FILE...",
		Short: "Import statement files as statement lines (never as postings)",
		Long: `Import the other side's statements: a bank's BAI2, camt.052/053/054 or
MT940/MT942 statement, the scheme's (Mastercard IPM settlement positions) or
bank's own copy of an ACH or ISO 8583 file, or a CSV export. Lines are kept as
data about the other side and never post to the ledger. Each file is read with
the same parsers as ingest, validated whole, and imported in one transaction.
A file that is refused imports nothing and is recorded as a run with status
rejected, whose errors 'clearing runs show RUN' prints.

Lines are deduplicated on their own keys, so importing a statement again adds
nothing. A statement that lists one key twice keeps both lines, and
reconciliation reports the second as duplicate_in_statement.

Directions: a bank's statement (BAI2, camt, MT940) describes our own account
at the bank (--perspective holder: a credit is money in); the other formats
describe the counterparty (--perspective counterparty), as ingest does. Lines
are stored from the counterparty's side, like postings.`,
		Example: `  clearing statement import --source bank-a statement-2026-11-29.bai2
  clearing statement import --source bank-b camt053-2026-11-29.xml
  clearing statement import --source bank-c MT940-2026-11-29.sta
  clearing statement import --source ipm settlement-positions-2026-11-29.ipm
  clearing statement import --source ach --format ach returned-by-bank.ach
  clearing statement import --source acme-psp --format csv --map acme.toml settlement.csv`,
		Args: cobra.MinimumNArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			if o.Source == "" {
				return usagef("--source is required: it names the other side, as ingest's source does")
			}
			return runStatementImport(ctx, g, o, metricsFile, args)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&o.Source, "source", "", "the other side's name; reconcile compares it with the ledger's postings of the same source (required)")
	f.StringVar(&o.Format, "format", "", "file format: "+strings.Join(ingest.StatementFormats, ", ")+" (detected for BAI2, camt, MT940, ACH and IPM)")
	f.StringVar(&o.Perspective, "perspective", "", "whose side the file's directions describe: holder or counterparty (default: holder for BAI2, camt and MT940)")
	restrictFlag(f, "format", ingest.StatementFormats)
	restrictFlag(f, "perspective", []string{statement.Holder, statement.Counterparty})
	bindReaderFlags(f, &o.MaxFileBytes, &o.Reader)
	bindMetricsFlag(f, &metricsFile)
	return cmd
}

func runStatementImport(ctx context.Context, g *globalOptions, o ingest.StatementOptions, metricsFile string, files []string) (err error) {
	m := newCommandMetrics(metricsFile, "statement_import")
	defer func() { err = m.finish(g, err) }()
	d, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	o.Tenant, o.Hasher, o.Log = g.tenant, g.hasher(), g.log
	var sums []ingest.StatementSummary
	rejected, conflicts := 0, 0
	for _, file := range files {
		began := g.now()
		s, err := ingest.Statement(ctx, d.pool, file, o)
		if err != nil && !errors.Is(err, ingest.ErrRejected) {
			return err
		}
		if err != nil {
			rejected++
			s.Error = err.Error()
			g.reportRejected(file, err)
		}
		if s.Conflicts > 0 {
			conflicts++
		}
		g.logImportSummary(s, began, err)
		m.imported(s)
		sums = append(sums, s)
	}
	rows := output.Rows{Header: []string{"file", "format", "source", "run", "status", "records", "added", "duplicates", "conflicts", "skipped"}}
	for _, s := range sums {
		run := "-"
		if s.RunID != 0 {
			run = itoa(s.RunID)
		}
		rows.Add(s.File, s.Format, s.Source, run, s.Status, itoa(s.Records), itoa(s.Added), itoa(s.Duplicates), itoa(s.Conflicts), itoa(s.Skipped))
	}
	if err := output.Write(g.stdout, g.output, sums, rows); err != nil {
		return err
	}
	switch {
	case rejected > 0:
		return fmt.Errorf("%d of %d statement file(s) rejected; nothing from them was imported", rejected, len(files))
	case conflicts > 0:
		return fmt.Errorf("%w: %d statement file(s) restate lines with other content; see 'clearing runs show RUN'", errNeedsAttention, conflicts)
	}
	return nil
}
