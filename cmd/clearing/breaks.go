package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/reconcile"
)

func newBreaksCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "breaks",
		Short: "The break inventory: every break reconciliation showed, its age and its state",
		Long: `A break (its class and the key of its item, within a source) keeps its identity
across reconciliation runs: when it was first and last seen, how many runs
showed it, and its state.

  open          it needs a person
  acknowledged  an operator looked at it and said why it stays (a correction
                rejected for a good reason, a difference the bank confirmed):
                it no longer makes 'clearing reconcile' exit 3, until a run
                shows it with another amount
  closed        a later run of its period no longer shows it; seen again, it
                is open again

Acknowledging needs a login in clearing_approver; the database records the
login.`,
	}
	cmd.AddCommand(newBreaksListCommand(g), newBreaksShowCommand(g), newBreaksAckCommand(g))
	return cmd
}

func newBreaksListCommand(g *globalOptions) *cobra.Command {
	var status string
	cmd := &cobra.Command{
		Use:   "list [--status open|acknowledged|closed]",
		Short: "List breaks, oldest first",
		Example: `  clearing breaks list --status open
  clearing breaks list -o json | jq '.[] | select(.age_days > 30)'`,
		Args: cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			bs, err := reconcile.ListBreaks(ctx, d.pool, g.tenant, status)
			if err != nil {
				return err
			}
			return output.Write(g.stdout, g.output, bs, breakRows(g, bs))
		}),
	}
	cmd.Flags().StringVar(&status, "status", "", "only breaks of this status: open, acknowledged or closed")
	restrictFlag(cmd.Flags(), "status", []string{reconcile.BreakOpen, reconcile.BreakAcknowledged, reconcile.BreakClosed})
	return cmd
}

func breakRows(g *globalOptions, bs []reconcile.Break) output.Rows {
	rows := output.Rows{Header: []string{"id", "status", "age (days)", "class", "key", "amount", "currency",
		"value date", "source", "first run", "last run", "runs"}}
	for _, b := range bs {
		rows.Add(itoa(b.ID), b.Status, strconv.Itoa(b.AgeDays), b.Class, b.Key, totalCell(g, b.Amount, b.Currency),
			b.Currency, b.ValueDate, b.Source, itoa(b.FirstRun), itoa(b.LastRun), strconv.Itoa(b.SeenInRuns))
	}
	return rows
}

func newBreaksShowCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "show KEY",
		Short:   "Every break of one item, with its acknowledgements",
		Example: `  clearing breaks show ach:1234567890:2026-11-29:091000010000011`,
		Args:    cobra.ExactArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			bs, err := reconcile.BreaksOf(ctx, d.pool, g.tenant, args[0])
			if err != nil {
				return err
			}
			if len(bs) == 0 {
				return fmt.Errorf("%w: no break of key %q in tenant %q", reconcile.ErrNoBreak, args[0], g.tenant)
			}
			if g.output != output.Table {
				return output.Write(g.stdout, g.output, bs, breakRows(g, bs))
			}
			if err := output.WriteTable(g.stdout, breakRows(g, bs)); err != nil {
				return err
			}
			acks := output.Rows{Header: []string{"break", "acknowledged at", "login", "amount", "reason"}}
			for _, b := range bs {
				for _, a := range b.Acks {
					acks.Add(itoa(b.ID), a.At.Format("2006-01-02 15:04:05"), a.Login, totalCell(g, a.Amount, b.Currency), a.Reason)
				}
			}
			if len(acks.Rows) == 0 {
				return nil
			}
			fmt.Fprintln(g.stdout)
			return output.WriteTable(g.stdout, acks)
		}),
	}
}

func newBreaksAckCommand(g *globalOptions) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "ack KEY... --reason TEXT",
		Short: "Acknowledge every open break of each key: it no longer needs a person",
		Long: `Acknowledge the open breaks of each key (a posting's or a statement line's), or
of a break id from 'clearing breaks list'. The acknowledgement holds at the
break's current amount: a later run that shows it with another amount opens it
again. Connect as your own login in clearing_approver; the database records it.`,
		Example: `  clearing breaks ack ach:1234567890:2026-11-29:091000010000011 --reason "correction rejected: the bank reverses it on 12-03"`,
		Args:    cobra.MinimumNArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			if reason == "" {
				return usagef("--reason is required: say why the break may stay")
			}
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			var acked []reconcile.Break
			for _, key := range args {
				bs, err := reconcile.BreaksOf(ctx, d.pool, g.tenant, key)
				if err != nil {
					return err
				}
				if len(bs) == 0 {
					return fmt.Errorf("%w: no break of key or id %q in tenant %q", reconcile.ErrNoBreak, key, g.tenant)
				}
				for _, b := range bs {
					if b.Status == reconcile.BreakClosed {
						continue
					}
					if err := reconcile.Acknowledge(ctx, d.pool, g.tenant, b.ID, reason); err != nil {
						return err
					}
					b.Status = reconcile.BreakAcknowledged
					acked = append(acked, b)
				}
			}
			if acked == nil {
				return fmt.Errorf("%w: every break of %v is closed; there is nothing to acknowledge", reconcile.ErrBreakClosed, args)
			}
			return output.Write(g.stdout, g.output, acked, breakRows(g, acked))
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why the break may stay (required)")
	return cmd
}
