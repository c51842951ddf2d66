package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/formats/ipm"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/reconcile"
)

func newLookupCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "lookup KEY",
		Short: "Everything about one intent: posting, legs, duplicates, conflicts, returns, notices",
		Long: `Show everything the ledger knows about one natural key: the posting and its
legs, the returns and reversals derived from it, its notices (NOCs, prenotes),
every time it arrived again and was not posted (duplicate, conflict,
quarantine), with the run, file and line it arrived in, what the newest
reconciliation that compared it said, and its corrections.

Keys (see README):
  ach:<company identification>:<effective entry date>:<trace number>
  iso8583:<acquirer or ->:<RRN>:<message class>
  ipm:<ARN>:<MTI>:<function code>, or the ARN alone: the card's whole lifecycle
  ipm:<DE94 originator>:1740:<function code>:<PDS0137> (a fee collection)
  csv:<source>:<key columns> or csv:<source>:<file id>:<line>`,
		Example: `  clearing lookup ach:1234567890:2026-11-29:091000010000001
  clearing lookup -o json ach:1234567890:2026-11-29:091000010000001:return
  clearing lookup 05454546304001603000012`,
		Args: cobra.ExactArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			return runLookup(ctx, g, args[0])
		}),
	}
}

func runLookup(ctx context.Context, g *globalOptions, key string) error {
	d, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	l, err := ledger.LookupKey(ctx, d.pool, g.tenant, key)
	if err != nil {
		return err
	}
	// A card lifecycle posts under its first presentment's key: an ARN, or
	// a chargeback's own key, names that lifecycle.
	if root, ok := ipm.LifecycleKey(key); ok && root != key && !l.Found() {
		if l, err = ledger.LookupKey(ctx, d.pool, g.tenant, root); err != nil {
			return err
		}
		key = root
	}
	st, err := reconcile.StatusOf(ctx, d.pool, g.tenant, key)
	if err != nil {
		return err
	}
	if !l.Found() && len(st.Discrepancies) == 0 && len(st.Corrections) == 0 {
		return fmt.Errorf("%w: nothing is known about key %q in tenant %q", ledger.ErrNotFound, key, g.tenant)
	}
	switch g.output {
	case output.JSON:
		return output.WriteJSON(g.stdout, struct {
			ledger.Lookup
			Reconciliation reconcile.Status `json:"reconciliation"`
		}{l, st})
	case output.CSV:
		return output.WriteCSV(g.stdout, postingRows(append(optional(l.Posting), l.Related...)))
	}
	if err := writeLookupText(g.stdout, l); err != nil {
		return err
	}
	return writeStatusText(g.stdout, st)
}

func writeStatusText(w io.Writer, st reconcile.Status) error {
	fmt.Fprintf(w, "\nreconciliation\n")
	if len(st.Discrepancies) == 0 {
		fmt.Fprintln(w, "no discrepancy listed: matched in the newest run that compared it, or not reconciled yet")
	}
	for _, d := range st.Discrepancies {
		fmt.Fprintf(w, "run %d (%s): %s: %s\n", d.RunID, d.RunAt.Format("2006-01-02 15:04"), d.Class, d.Explanation)
	}
	if len(st.Corrections) == 0 {
		return nil
	}
	rows := output.Rows{Header: []string{"correction", "key", "class", "status", "amount", "approvals"}}
	for _, c := range st.Corrections {
		rows.Add(itoa(c.ID), c.Key, c.Class, c.Status, money.FormatCode(c.Amount, c.Currency), fmt.Sprint(c.Approvals))
	}
	fmt.Fprintf(w, "\ncorrections\n")
	return output.WriteTable(w, rows)
}

func optional(p *ledger.Posting) []ledger.Posting {
	if p == nil {
		return nil
	}
	return []ledger.Posting{*p}
}

func writeLookupText(w io.Writer, l ledger.Lookup) error {
	section := func(title string) { fmt.Fprintf(w, "\n%s\n", title) }
	fmt.Fprintf(w, "key: %s\n", l.Key)
	if l.Posting == nil {
		fmt.Fprintln(w, "posting: none under this key")
	}
	all := append(optional(l.Posting), l.Related...)
	if len(all) > 0 {
		section("postings")
		if err := output.WriteTable(w, postingRows(all)); err != nil {
			return err
		}
		section("legs")
		legs := output.Rows{Header: []string{"posting", "leg", "account", "debit", "credit", "currency"}}
		for _, p := range all {
			for _, lg := range p.Legs {
				debit, credit := "", amount(lg.Amount, lg.Currency)
				if lg.Direction == "D" {
					debit, credit = credit, ""
				}
				legs.Add(p.Key, itoa(int64(lg.No)), lg.Account, debit, credit, lg.Currency)
			}
		}
		if err := output.WriteTable(w, legs); err != nil {
			return err
		}
	}
	if len(l.Notices) > 0 {
		section("notices")
		rows := output.Rows{Header: []string{"notice", "detail", "value date", "file", "line"}}
		for _, n := range l.Notices {
			rows.Add(n.Key, n.Detail, n.ValueDate.Format("2006-01-02"), n.File, itoaPtr(n.Line))
		}
		if err := output.WriteTable(w, rows); err != nil {
			return err
		}
	}
	section("arrivals not posted")
	if len(l.Events) == 0 {
		fmt.Fprintln(w, "none: every arrival of this key was posted once")
		return nil
	}
	return output.WriteTable(w, eventRows(l.Events))
}

func postingRows(ps []ledger.Posting) output.Rows {
	rows := output.Rows{Header: []string{"key", "kind", "amount", "currency", "direction", "account", "value date",
		"refers to", "run", "file", "line", "detail"}}
	for _, p := range ps {
		refers := ""
		if p.RefersTo != nil {
			refers = *p.RefersTo
		}
		account := p.Account
		if p.AccountLast4 != "" {
			account += " (last4 " + p.AccountLast4 + ")"
		}
		rows.Add(p.Key, p.Kind, amount(p.Amount, p.Currency), p.Currency, direction(p.Direction), account,
			p.ValueDate.Format("2006-01-02"), refers, itoaPtr(p.RunID), p.File, itoaPtr(p.Line), p.Detail)
	}
	return rows
}

func itoaPtr(n *int64) string {
	if n == nil {
		return ""
	}
	return itoa(*n)
}

func direction(d string) string {
	if strings.EqualFold(d, "C") {
		return "credit"
	}
	return "debit"
}

// amount formats minor units in major units of the currency: 10000 USD is
// "100.00".
func amount(minor int64, currency string) string {
	c, err := money.LookupCurrency(currency)
	if err != nil {
		return itoa(minor)
	}
	return money.Format(minor, c)
}
