package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
)

func newBalanceCommand(g *globalOptions) *cobra.Command {
	var f ledger.BalanceFilter
	var asOf string
	cmd := &cobra.Command{
		Use:   "balance",
		Short: "Balances computed from the legs: credits minus debits",
		Long: `Compute account balances from the ledger's legs. A balance is credits minus
debits in minor units of its currency; the JSON fields debits, credits and
balance are integers in minor units, summed exactly at any size (they may pass
the int64 range). Accounts:
  settlement:<source>     the source's settlement account (ach, iso8583, a CSV source)
  cust:<32 hex digits>    a customer account or card, as an HMAC of its number
  counterparty:<source>   records that name no account`,
		Example: `  clearing balance
  clearing balance --account 'settlement:*'
  clearing balance --account cust:3f2a9c...e1 --as-of 2026-11-29 -o json
  clearing balance --by-kind`,
		Args: cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			if asOf != "" {
				d, err := time.Parse(time.DateOnly, asOf)
				if err != nil {
					return usagef("--as-of %q: use YYYY-MM-DD", asOf)
				}
				f.AsOf = &d
			}
			return runBalance(ctx, g, f)
		}),
	}
	cmd.Flags().StringVar(&f.Account, "account", "", "one account, or a prefix ending in * (\"settlement:*\")")
	cmd.Flags().StringVar(&asOf, "as-of", "", "count legs with a value date on or before this date (YYYY-MM-DD)")
	cmd.Flags().BoolVar(&f.ByKind, "by-kind", false, "break balances down by posting kind (clearing, return, reversal, correction)")
	return cmd
}

func runBalance(ctx context.Context, g *globalOptions, f ledger.BalanceFilter) error {
	d, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	bs, err := ledger.Balances(ctx, d.pool, g.tenant, f)
	if err != nil {
		return err
	}
	header := []string{"account", "currency", "debits", "credits", "balance"}
	if f.ByKind {
		header = []string{"account", "currency", "kind", "debits", "credits", "balance"}
	}
	rows := output.Rows{Header: header}
	for _, b := range bs {
		cells := []string{b.Account, b.Currency}
		if f.ByKind {
			cells = append(cells, b.Kind)
		}
		rows.Add(append(cells, totalCell(g, b.Debits, b.Currency), totalCell(g, b.Credits, b.Currency),
			totalCell(g, b.Balance, b.Currency))...)
	}
	if bs == nil {
		bs = []ledger.Balance{}
	}
	return output.Write(g.stdout, g.output, bs, rows)
}

// totalCell is amountCell for a sum, which may be beyond int64: minor
// units in CSV, else major units of the currency, exactly.
func totalCell(g *globalOptions, t money.Total, currency string) string {
	c, err := money.LookupCurrency(currency)
	if g.output == output.CSV || err != nil {
		return t.String()
	}
	return money.FormatTotal(t, c)
}
