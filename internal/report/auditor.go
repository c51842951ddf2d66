package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/clearing-dev/clearing/internal/money"
)

// lineSettlementTotal is the statement line type of a settlement total. Its
// amount is in neither side's total (it repeats lines the statement lists
// one by one), so an item whose statement side is one adds nothing to its
// class's line in the bridge.
const lineSettlementTotal = "settlement_total"

// itemAmounts calls f with what d adds to its class's line in each
// currency's bridge, ledger minus statement: the ledger side's amount in its
// currency, less the statement side's in its own. This is how
// reconciliation sums a class (a currency mismatch adds its ledger amount to
// one currency and takes its line from the other), and so it differs from
// Difference, which is 0 for a currency mismatch. A class that no total
// holds adds nothing.
func itemAmounts(d *Discrepancy, f func(currency string, amount int64)) {
	if OutsideTotals(d.Class) {
		return
	}
	if d.Ledger != nil {
		f(d.Ledger.Currency, d.Ledger.Amount)
	}
	if d.Statement != nil && d.Statement.Kind != lineSettlementTotal {
		f(d.Statement.Currency, -d.Statement.Amount)
	}
}

// neg returns -t.
func neg(t money.Total) money.Total { return money.Total{}.Sub(t) }

// auditorOf returns the auditor's form of r.Bridge[i]. The breaks come from
// the discrepancies (t), split by whether an operator acknowledged them; the
// explained items and the matched pairs from the bridge's class lines, which
// hold matched pairs that are no discrepancy. Validate holds the breaks to
// their class lines, so the lines add up exactly.
func auditorOf(r *Report, t *tally, i int) AuditorBridge {
	b := &r.Bridge[i]
	a := AuditorBridge{LedgerBalance: b.LedgerTotal, StatementBalance: b.StatementTotal, Unexplained: neg(b.Unexplained)}
	for _, d := range b.Differences {
		c, _ := LookupClass(d.Class)
		switch {
		case c.Break:
		case d.Class == ClassMatched:
			a.WithinTolerance.Amount = a.WithinTolerance.Amount.Sub(d.Amount)
			a.WithinTolerance.Count += d.Count
		default:
			a.Explained.Amount = a.Explained.Amount.Sub(d.Amount)
		}
	}
	if items := t.audit[b.Currency]; items != nil {
		a.Explained.Count += items.explained
		a.Open, a.Acknowledged = items.open, items.acked
	}
	return a
}

// checkBreakItems holds each bridge's break lines to the breaks listed:
// per currency, the class lines of the breaks sum to what the break
// discrepancies add to them (itemAmounts). Without it the auditor's form,
// which splits the breaks by their items, would not add up to the
// statement balance while the class lines did, and the two forms of one
// bridge would disagree.
func checkBreakItems(r *Report, t *tally) error {
	lines := map[string]money.Total{}
	for _, b := range r.Bridge {
		for _, d := range b.Differences {
			if c, _ := LookupClass(d.Class); c.Break {
				lines[b.Currency] = lines[b.Currency].Add(d.Amount)
			}
		}
	}
	items := t.breakItems
	currencies := make([]string, 0, len(lines)+len(items))
	for cur := range lines {
		currencies = append(currencies, cur)
	}
	for cur := range items {
		if _, ok := lines[cur]; !ok {
			currencies = append(currencies, cur)
		}
	}
	sort.Strings(currencies)
	for _, cur := range currencies {
		if lines[cur].Cmp(items[cur]) != 0 {
			return fmt.Errorf("%w: in %q the bridge's break lines sum to %s, but the breaks listed sum to %s (minor units, ledger minus statement)",
				ErrInvalid, cur, lines[cur], items[cur])
		}
	}
	return nil
}

// openWorth sums, per currency in the bridges' order and then any other,
// the absolute differences of the breaks that need a person: the size of
// what is open, in which a +100 and a -100 do not cancel.
func openWorth(r *Report, t *tally) []ClassTotal {
	var out []ClassTotal
	listed := map[string]bool{}
	for _, cur := range slices.Concat(bridgeCurrencies(r), t.worthOrder) {
		if w := t.worth[cur]; w != nil && !listed[cur] {
			listed[cur] = true
			out = append(out, *w)
		}
	}
	return out
}

// bridgeCurrencies returns the bridges' currencies in their order.
func bridgeCurrencies(r *Report) []string {
	out := make([]string, len(r.Bridge))
	for i := range r.Bridge {
		out[i] = r.Bridge[i].Currency
	}
	return out
}

// verdict is the report's one line: balanced, or how many breaks need a
// person and what they are worth per currency, with the unexplained
// remainder. group formats an amount (the page groups thousands).
func verdict(r *Report, t *tally, group func(string) string) string {
	worth, open, acked := openWorth(r, t), t.open, t.acked
	var unexplained []string
	for _, b := range r.Bridge {
		if !b.Unexplained.IsZero() {
			unexplained = append(unexplained, group(total(b.Unexplained, b.Currency)))
		}
	}
	var s string
	switch {
	case open == 0 && len(unexplained) == 0 && !r.OneSided():
		s = "Balanced: every difference is explained and no break needs a person"
	case open == 0:
		s = "No break needs a person"
	default:
		parts := make([]string, len(worth))
		for i, w := range worth {
			parts[i] = group(total(w.Amount, w.Class))
		}
		s = plural(int64(open), "break") + " " + map[bool]string{true: "needs", false: "need"}[open == 1] +
			" a person, worth " + strings.Join(parts, " and ") + " (the sum of their differences, either sign)"
	}
	if acked > 0 {
		s += "; " + plural(int64(acked), "acknowledged break") + " " + map[bool]string{true: "needs", false: "need"}[acked == 1] + " no one"
	}
	if len(unexplained) > 0 {
		s += "; unexplained remainder " + strings.Join(unexplained, " and ") + ": the report does not balance."
	} else {
		s += "; nothing unexplained."
	}
	return s
}
