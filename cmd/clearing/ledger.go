package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/output"
)

func newLedgerCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ledger",
		Short: "Check the ledger itself",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "verify",
		Short: "Check every invariant: balance, legs, references, append-only triggers",
		Long: `Check the ledger's invariants: every posting balances per currency and has at
least two legs; no leg references a missing posting; every return, reversal and
correction refers to an existing posting; every audit event's references
resolve; the triggers that make the ledger append-only are installed and
enabled. Exits 3 when any check fails.`,
		Example: `  clearing ledger verify
  clearing ledger verify -o json | jq .ok`,
		Args: cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			return runVerify(ctx, g)
		}),
	})
	return cmd
}

func runVerify(ctx context.Context, g *globalOptions) error {
	d, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	v, err := ledger.Verify(ctx, d.pool, g.tenant)
	if err != nil {
		return err
	}
	rows := output.Rows{Header: []string{"check", "ok", "problems", "examples"}}
	for _, c := range v.Checks {
		rows.Add(c.Name, fmt.Sprint(c.OK), itoa(c.Problems), strings.Join(c.Examples, " "))
	}
	if g.output == output.Table {
		fmt.Fprintf(g.stdout, "postings: %d, legs: %d\n", v.Postings, v.Legs)
	}
	if err := output.Write(g.stdout, g.output, v, rows); err != nil {
		return err
	}
	if !v.OK {
		return fmt.Errorf("%w: the ledger fails verification", errNeedsAttention)
	}
	return nil
}
