package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/corrections"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
)

func newCorrectionsCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "corrections",
		Short: "List, inspect, approve and reject the corrections reconciliation proposes",
		Long: `Reconciliation proposes a correction for each missing_in_ledger, amount_mismatch
and unbooked_fee break, under a key derived from what it corrects. A correction
is a movement of money: it posts nothing until operators approve it.

An approval is the database login's: connect as your own login, a member of
clearing_approver (CREATE ROLE alice LOGIN IN ROLE clearing_approver); the
database records it, and --operator adds your name. The owner of the schema
(the role that ran the migrations) and superusers are never approvers. Above
the threshold of the correction's currency ('corrections.four_eyes_above.USD',
in major units; see 'clearing config'), and in a currency without one, two
different logins with two different names must approve; the database refuses
a second approval by the same login. The final approval posts the correction
through the ledger path, in the same transaction as the approval record, with
kind "correction"; approving again posts nothing more. Rejection is final.

Statuses: proposed, approved (waiting for a second operator), posted, rejected.`,
	}
	cmd.AddCommand(newCorrectionsListCommand(g), newCorrectionsShowCommand(g),
		newCorrectionsApproveCommand(g), newCorrectionsRejectCommand(g))
	return cmd
}

func newCorrectionsListCommand(g *globalOptions) *cobra.Command {
	var status string
	var run int64
	cmd := &cobra.Command{
		Use:   "list [--status S] [--run RUN]",
		Short: "List corrections, newest first",
		Example: `  clearing corrections list --status proposed
  clearing corrections list --run 7 -o json`,
		Args: cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			switch status {
			case "", "proposed", "approved", "rejected", "posted":
			default:
				return usagef("--status %q: use proposed, approved, rejected or posted", status)
			}
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			cs, err := corrections.List(ctx, d.pool, g.tenant, status, run)
			if err != nil {
				return err
			}
			rows := output.Rows{Header: []string{"id", "status", "class", "amount", "currency", "direction", "approvals",
				"break", "key", "reference", "value date"}}
			for _, c := range cs {
				rows.Add(itoa(c.ID), c.Status, c.Class, amountCell(g, c.Amount, c.Currency), c.Currency, direction(c.Direction),
					c.ApprovalState(), breakCell(c.Break), c.Key, c.Reference, c.ValueDate.Format("2006-01-02"))
			}
			return output.Write(g.stdout, g.output, cs, rows)
		}),
	}
	cmd.Flags().StringVar(&status, "status", "", "only corrections of this status: proposed, approved, rejected or posted")
	cmd.Flags().Int64Var(&run, "run", 0, "only corrections proposed by this reconciliation run")
	return cmd
}

// breakCell names the break a correction corrects, its state and age.
func breakCell(b *corrections.BreakRef) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprintf("%d (%s, %s)", b.ID, b.Status, days(b.AgeDays))
}

func days(n int) string {
	if n == 1 {
		return "1 day"
	}
	return strconv.Itoa(n) + " days"
}

// amountCell shows minor units in major units, except in CSV, which keeps
// the integer for spreadsheets to sum.
func amountCell(g *globalOptions, minor int64, currency string) string {
	if g.output == output.CSV {
		return itoa(minor)
	}
	return amount(minor, currency)
}

func newCorrectionsShowCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "show ID",
		Short:   "Show one correction, what it would post, and every decision on it",
		Example: `  clearing corrections show 12`,
		Args:    cobra.ExactArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			c, err := corrections.Get(ctx, d.pool, g.tenant, id)
			if err != nil {
				return err
			}
			rows := output.Rows{Header: []string{"field", "value"}}
			rows.Add("id", itoa(c.ID))
			rows.Add("key", c.Key)
			rows.Add("status", c.Status)
			rows.Add("class", c.Class)
			rows.Add("posts under", c.PostingKey)
			rows.Add("amount", money.FormatCode(c.Amount, c.Currency))
			rows.Add("legs", fmt.Sprintf("%s %s, %s %s", direction(c.Direction), c.CounterAccount,
				direction(opposite(c.Direction)), c.SettlementAccount))
			rows.Add("reference", c.Reference)
			rows.Add("value date", c.ValueDate.Format("2006-01-02"))
			rows.Add("proposed by run", itoa(c.ProposedByRun))
			rows.Add("corrects break", breakCell(c.Break))
			rows.Add("approvals", c.ApprovalState())
			rows.Add("explanation", c.Explanation)
			for _, dec := range c.Decisions {
				login := dec.Login
				if login == "" {
					login = "none recorded; role " + dec.DBRole
				}
				rows.Add(dec.Decision, fmt.Sprintf("%s (login %s) at %s: %s", dec.Operator, login,
					dec.At.Format("2006-01-02 15:04:05 MST"), dec.Reason))
			}
			return output.Write(g.stdout, g.output, c, rows)
		}),
	}
}

func opposite(d string) string {
	if d == "C" {
		return "D"
	}
	return "C"
}

func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%q is not a correction id", s)
	}
	return id, nil
}

// decisionFlags are the operator and reason every decision must carry. The
// login that decides is the connection's, recorded by the database.
type decisionFlags struct{ operator, reason string }

func (f *decisionFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.operator, "operator", "", "your name (required; recorded next to the database login, which four eyes counts)")
	cmd.Flags().StringVar(&f.reason, "reason", "", "why (required; recorded)")
}

func (f *decisionFlags) check() error {
	if strings.TrimSpace(f.operator) == "" || strings.TrimSpace(f.reason) == "" {
		return usagef("--operator and --reason are required: every decision on money is recorded with who and why")
	}
	return nil
}

func newCorrectionsApproveCommand(g *globalOptions) *cobra.Command {
	var f decisionFlags
	cmd := &cobra.Command{
		Use:   "approve ID... --operator NAME --reason TEXT",
		Short: "Approve corrections; the last approval needed posts the correction",
		Example: `  clearing --database-url 'postgres://alice@db/clearing' corrections approve 12 --operator "Alice Smith" --reason "bank confirmed the fee"
  clearing --database-url 'postgres://bob@db/clearing' corrections approve 12 13 14 --operator "Bob Jones" --reason "second approval" -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			var ids []int64
			for _, a := range args {
				id, err := parseID(a)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return runApprove(ctx, g, ids, f)
		}),
	}
	f.bind(cmd)
	return cmd
}

func runApprove(ctx context.Context, g *globalOptions, ids []int64, f decisionFlags) error {
	d, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	var results []corrections.Approval
	var failures []error
	for _, id := range ids {
		a, err := corrections.Approve(ctx, d.pool, g.tenant, id, f.operator, f.reason)
		if err != nil {
			if !isDecisionRefusal(err) {
				return err
			}
			failures = append(failures, err)
		}
		results = append(results, a)
	}
	rows := output.Rows{Header: []string{"id", "status", "amount", "approvals", "break", "key", "note"}}
	for _, a := range results {
		amt := "-"
		if a.Currency != "" {
			amt = money.FormatCode(a.Amount, a.Currency)
		}
		rows.Add(itoa(a.ID), a.Status, amt, a.State(), breakCell(a.Break), a.Key, a.Note)
	}
	if err := output.Write(g.stdout, g.output, results, rows); err != nil {
		return err
	}
	return errors.Join(failures...)
}

// isDecisionRefusal tells a refusal of one correction (which the others do
// not share) from a failure of the database or the process.
func isDecisionRefusal(err error) bool {
	for _, e := range []error{corrections.ErrCorrectionNotFound, corrections.ErrRejectedCorrection, corrections.ErrSameOperator,
		corrections.ErrStale, corrections.ErrNotPermitted, corrections.ErrAlreadyPosted, corrections.ErrInvalidDecision,
		corrections.ErrNotApproved} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func newCorrectionsRejectCommand(g *globalOptions) *cobra.Command {
	var f decisionFlags
	cmd := &cobra.Command{
		Use:     "reject ID --operator NAME --reason TEXT",
		Short:   "Reject a correction; rejection is final",
		Example: `  clearing corrections reject 12 --operator alice --reason "the bank reversed its fee"`,
		Args:    cobra.ExactArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			c, err := corrections.Reject(ctx, d.pool, g.tenant, id, f.operator, f.reason)
			if err != nil {
				return err
			}
			rows := output.Rows{Header: []string{"id", "status", "key"}}
			rows.Add(itoa(c.ID), c.Status, c.Key)
			return output.Write(g.stdout, g.output, c, rows)
		}),
	}
	f.bind(cmd)
	return cmd
}
