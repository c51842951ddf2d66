package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/schema"
)

func newLedgerCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ledger",
		Short: "Check the ledger itself",
	}
	var opts verifyOptions
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Check every invariant: balance, legs, references, approvals, triggers, seals",
		Long: `Check the ledger's invariants: every posting balances per currency and has at
least two legs, exactly the legs its kind makes (clearing, return, reversal,
correction, reclass); no leg references a missing posting; every return,
reversal and reclassification refers to an existing posting; every correction
posting was posted by an approved correction; every audit event's references
resolve. Check that the database still guards the ledger as the migrations
built it: every trigger on its table, enabled, firing on the same events and
calling the same function; no rule or other trigger on a guarded table; every
function's body as the migrations wrote it. Check that every row of postings,
legs, notices and audit events is as it was sealed when written (an edit, a
deletion or an insert made with the triggers off shows), and that the chain
of seals is unbroken.

Each problem is listed with its table, its key (posting key, id or trigger
name) and what is wrong. Exits 3 when any check fails. A superuser or the
schema owner can still rewrite rows and seals alike: record the seal chain's
head printed here somewhere they cannot write, and pass it back with
--expect-head: a head that is no longer in the chain means seals were deleted
or rewritten.`,
		Example: `  clearing ledger verify
  clearing ledger verify -o json | jq .ok
  clearing ledger verify --expect-head "$(cat /secure/clearing-head)"`,
		Args: cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			return runVerify(ctx, g, opts)
		}),
	}
	verify.Flags().StringSliceVar(&opts.expectHeads, "expect-head", nil,
		"a seal chain head recorded earlier (hex), which must still be in the chain; repeatable")
	cmd.AddCommand(verify)
	return cmd
}

// verifyOptions are the flags of 'ledger verify'.
type verifyOptions struct {
	expectHeads []string
}

func runVerify(ctx context.Context, g *globalOptions, opts verifyOptions) error {
	for _, h := range opts.expectHeads {
		if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
			return usagef("--expect-head %q: want the 64 hex digits of a seal chain head", h)
		}
	}
	d, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	v, err := ledger.Verify(ctx, d.pool, g.tenant, schema.Routines(), opts.expectHeads...)
	if err != nil {
		return err
	}
	// One row per passing check, and one per finding of a failing check,
	// so that a CSV line is complete on its own.
	rows := output.Rows{Header: []string{"check", "ok", "problems", "table", "key", "problem"}}
	for _, c := range v.Checks {
		if len(c.Findings) == 0 {
			rows.Add(c.Name, fmt.Sprint(c.OK), itoa(c.Problems), "", "", "")
		}
		for _, f := range c.Findings {
			rows.Add(c.Name, fmt.Sprint(c.OK), itoa(c.Problems), f.Table, f.Key, f.Problem)
		}
	}
	if g.output == output.Table {
		fmt.Fprintf(g.stdout, "postings: %d, legs: %d, seals: %d, seal chain head: %s\n",
			v.Postings, v.Legs, v.Seals.Count, v.Seals.Head)
	}
	if err := output.Write(g.stdout, g.output, v, rows); err != nil {
		return err
	}
	if !v.OK {
		return fmt.Errorf("%w: the ledger fails verification", errNeedsAttention)
	}
	return nil
}
