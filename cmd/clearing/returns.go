package main

import (
	"context"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/output"
)

// returnAction is one return or NOC with what it requires.
type returnAction struct {
	ledger.ReturnItem
	Code string `json:"code"`
	// Return is the rule of a return's reason code; Change, the field a
	// notification of change corrects. One of them is set, or neither for
	// a code the rules do not know.
	Return *ach.ReturnRule `json:"return_rule"`
	Change *ach.ChangeRule `json:"change_rule"`
	// Action is the first thing to do, in words: re-present, stop
	// debiting, treat as unauthorized, correct the field, or none.
	Action string `json:"action"`
}

func newReturnsCommand(g *globalOptions) *cobra.Command {
	var source, from, to string
	cmd := &cobra.Command{
		Use:   "returns [--source ach] [--from DATE --to DATE]",
		Short: "ACH returns and notifications of change, with what each requires",
		Long: `List the returns (with dishonored and contested returns) and notifications of
change the ledger holds, each with what the Nacha rules ask next: whether the
entry may be presented again (R01, R09: at most twice), whether the account
must no longer be debited (R02, R03, R04, R07, R16, ...), whether the receiver
said the debit was unauthorized (R05, R07, R10, R11, R29, R51), the return time
frame (2 banking days, 60 calendar days), and for a NOC (C01-C14) the field to
correct. The account shows by its last four digits only.`,
		Example: `  clearing returns --from 2026-11-01 --to 2026-11-30
  clearing returns -o json | jq '.[] | select(.return_rule.stop_debits)'`,
		Args: cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			lo, hi := time.Time{}, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
			var err error
			if from != "" {
				if lo, err = time.Parse(time.DateOnly, from); err != nil {
					return usagef("--from %q: use YYYY-MM-DD", from)
				}
			}
			if to != "" {
				if hi, err = time.Parse(time.DateOnly, to); err != nil {
					return usagef("--to %q: use YYYY-MM-DD", to)
				}
			}
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			items, err := ledger.Returns(ctx, d.pool, g.tenant, source, lo, hi)
			if err != nil {
				return err
			}
			out := make([]returnAction, len(items))
			rows := output.Rows{Header: []string{"value date", "code", "reason", "action", "time frame", "key", "original",
				"amount", "currency", "account", "file"}}
			for i, it := range items {
				a := actionOf(it)
				out[i] = a
				reason, frame := "", ""
				switch {
				case a.Return != nil:
					reason, frame = a.Return.Reason, a.Return.TimeFrame
				case a.Change != nil:
					reason = a.Change.Reason
				}
				rows.Add(it.ValueDate.Format(time.DateOnly), a.Code, reason, a.Action, frame, it.Key, it.Original,
					amountCell(g, it.Amount, it.Currency), it.Currency, last4(it.AccountLast), it.File)
			}
			return output.Write(g.stdout, g.output, out, rows)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&source, "source", "ach", "the source whose returns to list")
	f.StringVar(&from, "from", "", "first value date, YYYY-MM-DD")
	f.StringVar(&to, "to", "", "last value date, YYYY-MM-DD")
	return cmd
}

// actionOf says what a return or NOC requires.
func actionOf(it ledger.ReturnItem) returnAction {
	a := returnAction{ReturnItem: it, Code: ach.CodeOf(it.Detail), Action: "none"}
	if it.Kind == "noc" {
		if c, ok := ach.ChangeRuleOf(a.Code); ok {
			a.Change, a.Action = &c, "correct before the next entry: "+c.Reason
		}
		return a
	}
	r, ok := ach.ReturnRuleOf(a.Code)
	if !ok {
		return a
	}
	a.Return = &r
	switch {
	case r.Unauthorized && r.StopDebits:
		a.Action = "unauthorized: do not debit the account again without a new authorization"
	case r.Unauthorized:
		a.Action = "unauthorized: correct the entry to the authorization before presenting it again"
	case r.StopDebits:
		a.Action = "stop debiting the account"
	case r.Represent > 0:
		a.Action = "may be presented again, at most " + strconv.Itoa(r.Represent) + " more times"
	}
	return a
}

// last4 shows an account by its last four digits, the only part of it the
// ledger keeps.
func last4(s string) string {
	if s == "" {
		return ""
	}
	return "…" + s
}
