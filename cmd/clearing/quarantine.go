package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/corrections"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
)

func newQuarantineCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine",
		Short: "List, inspect, release and dismiss the records the ledger holds for a person",
		Long: `A record that cannot post (an orphan return or reversal, an ambiguous
original, an in-file duplicate, a held re-send or a held line-keyed file) is
quarantined once, under its key and content, by the run that first met it. It
stays open until it is resolved, and each resolution is final:

  released   it posted: its original arrived (the ingest that brings it posts
             it, once, and closes it) or an operator released it
  dismissed  an operator said it must not post, with a reason

  posted_to_suspense
             a return or reversal whose original never arrived (or is
             ambiguous) was posted under its own key against suspense: an
             operator proposed it ('quarantine suspense'), and approvers
             approved the correction with four eyes ('corrections approve');
             the same record arriving again does not post a second time

Ingesting its file again audits it as already_quarantined, with the run that
first held it, and exits 3 while it is open; once it is dismissed the same file
exits 0 for it.

Releasing and dismissing are the database login's: connect as your own login,
a member of clearing_approver; the database records it with the reason. The
owner of the schema and superusers never resolve held records.

Statuses: open, released, dismissed, posted_to_suspense.`,
	}
	cmd.AddCommand(newQuarantineListCommand(g), newQuarantineShowCommand(g),
		newQuarantineResolveCommand(g, "release"), newQuarantineResolveCommand(g, "dismiss"), newQuarantineSuspenseCommand(g))
	return cmd
}

func newQuarantineListCommand(g *globalOptions) *cobra.Command {
	var f ledger.HeldFilter
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List quarantined records with their age, oldest first",
		Example: `  clearing quarantine list
  clearing quarantine list --status open --verdict orphan_return -o json`,
		Args: cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			hs, err := ledger.ListHeld(ctx, d.pool, g.tenant, f)
			if err != nil {
				return err
			}
			rows := output.Rows{Header: []string{"age (days)", "key", "verdict", "status", "file", "line", "amount", "held by run"}}
			for _, h := range hs {
				rows.Add(itoa(h.AgeDays), h.Key, h.Verdict, h.Status, h.File, itoa(h.Line),
					money.FormatCode(h.AmountMinor, h.Currency), itoa(h.FirstRunID))
			}
			if hs == nil {
				hs = []ledger.Held{}
			}
			return output.Write(g.stdout, g.output, hs, rows)
		}),
	}
	cmd.Flags().StringVar(&f.Status, "status", "", "only records of this status: open, released, dismissed or posted_to_suspense")
	restrictFlag(cmd.Flags(), "status", []string{"open", "released", "dismissed", "posted_to_suspense"})
	cmd.Flags().StringVar(&f.Verdict, "verdict", "", "only records held with this verdict (orphan_return, in_file_duplicate, possible_resend, ...)")
	cmd.Flags().IntVar(&f.Limit, "limit", 1000, "most records to list")
	return cmd
}

func newQuarantineShowCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "show KEY",
		Short: "Show the records held under a key: what arrived, where, why, and what became of it",
		Example: `  clearing quarantine show ach:1234567890::091000010000001
  clearing quarantine show ach:1234567890::091000010000001 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			hs, err := ledger.GetHeld(ctx, d.pool, g.tenant, args[0])
			if err != nil {
				return err
			}
			rows := output.Rows{Header: []string{"field", "value"}}
			for _, h := range hs {
				rows.Add("key", h.Key)
				rows.Add("status", h.Status)
				rows.Add("verdict", h.Verdict)
				rows.Add("kind", h.Kind)
				rows.Add("amount", fmt.Sprintf("%s %s", direction(h.Direction), money.FormatCode(h.AmountMinor, h.Currency)))
				rows.Add("reference", h.Reference)
				rows.Add("links to", h.LinkReference)
				rows.Add("value date", h.ValueDate.Format("2006-01-02"))
				rows.Add("account", last4(h.AccountLast4))
				rows.Add("detail", h.Detail)
				rows.Add("held by run", fmt.Sprintf("%d (%s, line %d) at %s, %d day(s) ago", h.FirstRunID, h.File, h.Line,
					h.HeldAt.Format("2006-01-02 15:04:05 MST"), h.AgeDays))
				seen := make([]string, len(h.SeenInRuns))
				for i, r := range h.SeenInRuns {
					seen[i] = itoa(r)
				}
				rows.Add("seen in runs", strings.Join(seen, ", "))
				if dec := h.Decision; dec != nil {
					by := "login " + dec.Login
					if dec.RunID != nil {
						by += fmt.Sprintf(", run %d", *dec.RunID)
					}
					if dec.PostingID != nil {
						by += fmt.Sprintf(", posting %d", *dec.PostingID)
					}
					rows.Add(dec.Decision, fmt.Sprintf("%s at %s: %s", by, dec.DecidedAt.Format("2006-01-02 15:04:05 MST"), dec.Reason))
				}
			}
			return output.Write(g.stdout, g.output, hs, rows)
		}),
	}
}

// newQuarantineResolveCommand is 'quarantine release' or 'quarantine
// dismiss': the same flags, one database function each.
func newQuarantineResolveCommand(g *globalOptions, verb string) *cobra.Command {
	var reason string
	short, example := "Dismiss held records for good: they never post", `  clearing --database-url 'postgres://alice@db/clearing' quarantine dismiss ach:1234567890::091000010000001 --reason "sent to us by mistake; the RDFI confirmed"`
	resolve := ledger.Dismiss
	if verb == "release" {
		short = "Post held returns and reversals whose original is now in the ledger"
		example = `  clearing --database-url 'postgres://alice@db/clearing' quarantine release ach:1234567890::091000010000001 --reason "original booked by correction 12"`
		resolve = ledger.Release
	}
	cmd := &cobra.Command{
		Use:     verb + " KEY... --reason TEXT",
		Short:   short,
		Example: example,
		Args:    cobra.MinimumNArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return usagef("--reason is required: every resolution of a held record is recorded with who and why")
			}
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			var all []ledger.Resolution
			held := 0
			for _, key := range args {
				rs, err := resolve(ctx, d.pool, g.tenant, key, reason)
				if err != nil {
					return err
				}
				for _, r := range rs {
					if r.Outcome == "still_held" {
						held++
					}
				}
				all = append(all, rs...)
			}
			rows := output.Rows{Header: []string{"key", "digest", "outcome", "run"}}
			for _, r := range all {
				run := "-"
				if r.RunID != 0 {
					run = itoa(r.RunID)
				}
				rows.Add(r.Key, r.Digest[:12], r.Outcome, run)
			}
			if err := output.Write(g.stdout, g.output, all, rows); err != nil {
				return err
			}
			if held > 0 {
				return fmt.Errorf("%w: %d held record(s) still find no single original to post against; they stay quarantined", errNeedsAttention, held)
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required; recorded with your database login)")
	return cmd
}

// newQuarantineSuspenseCommand is 'quarantine suspense': it proposes the
// corrections that post held returns and reversals against suspense.
func newQuarantineSuspenseCommand(g *globalOptions) *cobra.Command {
	var reason, account string
	cmd := &cobra.Command{
		Use:   "suspense KEY... --reason TEXT",
		Short: "Propose posting held returns and reversals against suspense, for approvers to approve",
		Long: `A held return or reversal whose original never arrives (or resolves to more
than one posting) still moved money. 'quarantine suspense' proposes, for each
open one under KEY, a correction of class quarantined that posts it under its
own key against a suspense account (suspense:<source> unless --suspense-account
says otherwise). Nothing posts yet: approvers approve it with 'corrections
approve', with four eyes above its currency's threshold, and the final approval
posts it and closes the held record as posted_to_suspense, in one transaction.
If the held record is released or dismissed first, the correction posts
nothing. The same record arriving again later is settled by that posting and
does not post twice.`,
		Example: `  clearing --database-url 'postgres://alice@db/clearing' quarantine suspense ach:1234567890::091000010000001 --reason "original paid out by the RDFI; confirmed by phone"
  clearing --database-url 'postgres://bob@db/clearing' corrections approve 17 --operator "Bob Jones" --reason "second approval"`,
		Args: cobra.MinimumNArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return usagef("--reason is required: every resolution of a held record is recorded with who and why")
			}
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			var all []corrections.SuspenseProposal
			for _, key := range args {
				ps, err := corrections.ProposeSuspense(ctx, d.pool, g.tenant, key, reason, account)
				if err != nil {
					return err
				}
				all = append(all, ps...)
			}
			rows := output.Rows{Header: []string{"key", "digest", "outcome", "correction"}}
			for _, p := range all {
				id := "-"
				if p.CorrectionID != 0 {
					id = itoa(p.CorrectionID)
				}
				rows.Add(p.Key, p.Digest[:12], p.Outcome, id)
			}
			return output.Write(g.stdout, g.output, all, rows)
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required; recorded with your database login)")
	cmd.Flags().StringVar(&account, "suspense-account", "", "the account to post against (default suspense:<source>)")
	return cmd
}
