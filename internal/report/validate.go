package report

import (
	"fmt"
	"maps"
)

// Validate checks the rules that every form relies on, and returns an error
// wrapping ErrInvalid or ErrUnbalanced when one does not hold:
//
//   - every class code, in Classes, in each bridge and in each discrepancy,
//     is one of the stable codes (LookupClass);
//   - every Break flag agrees with its class, because a break flagged as
//     explained would be left out of the break list that a person reads;
//   - no currency is bridged twice;
//   - in each bridge, LedgerTotal - StatementTotal equals the sum of the
//     Differences plus Unexplained, exactly (Totals do not overflow);
//   - a class whose amounts no total holds (settlement totals, unbalanced
//     statements) is in
//     OutsideTotals, never in Differences, and each of its lines is the sum
//     and count of that class's discrepancies in the bridge's currency, so
//     that the bridge, the chart and the break list tell one story;
//   - in each currency, the bridge's break lines sum to what the breaks
//     listed add to them, so that the auditor's form (which splits the
//     breaks into open and acknowledged) adds up as the class lines do;
//   - EmptySide agrees with the counts of what was compared.
//
// A non-zero Unexplained is valid: it is a finding, and every form shows it
// loudly. Write calls Validate before it writes anything.
func (r *Report) Validate() error {
	_, err := r.validated()
	return err
}

// validated checks r as Validate does and returns its tally.
func (r *Report) validated() (*tally, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: no report", ErrInvalid)
	}
	if want := EmptySideOf(r.LedgerItems, r.StatementLines); r.EmptySide != want {
		return nil, fmt.Errorf("%w: empty_side is %q, but %d ledger items and %d statement lines were compared",
			ErrInvalid, r.EmptySide, r.LedgerItems, r.StatementLines)
	}
	for i, c := range r.Classes {
		if err := checkClass(c.Class, c.Break); err != nil {
			return nil, fmt.Errorf("classes[%d]: %w", i, err)
		}
	}
	seen := make(map[string]bool, len(r.Bridge))
	for i := range r.Bridge {
		b := &r.Bridge[i]
		if seen[b.Currency] {
			return nil, fmt.Errorf("%w: currency %q is bridged twice", ErrInvalid, b.Currency)
		}
		seen[b.Currency] = true
		if err := checkBridge(b); err != nil {
			return nil, fmt.Errorf("bridge %q: %w", b.Currency, err)
		}
	}
	t, err := r.tally()
	if err != nil {
		return nil, err
	}
	if t.invalid != nil {
		return nil, t.invalid
	}
	if err := checkOutside(r, t); err != nil {
		return nil, err
	}
	if err := checkBreakItems(r, t); err != nil {
		return nil, err
	}
	return t, nil
}

// checkOutside holds each bridge's OutsideTotals to the discrepancies they
// sum: the same amount and count per currency and class, and no class
// without its line.
func checkOutside(r *Report, t *tally) error {
	sums := maps.Clone(t.outside)
	for _, b := range r.Bridge {
		for _, o := range b.OutsideTotals {
			k := classCell{b.Currency, o.Class}
			want := sums[k]
			if o.Amount.Cmp(want.Amount) != 0 || o.Count != want.Count {
				return fmt.Errorf("%w: bridge %q shows %s of %d %s outside the totals, but the discrepancies sum to %s of %d",
					ErrInvalid, b.Currency, o.Amount, o.Count, o.Class, want.Amount, want.Count)
			}
			delete(sums, k)
		}
	}
	for k, t := range sums {
		return fmt.Errorf("%w: %d %s discrepancies in %q are in no bridge's outside_totals", ErrInvalid, t.Count, k.class, k.currency)
	}
	return nil
}

func checkClass(code string, isBreak bool) error {
	c, ok := LookupClass(code)
	if !ok {
		return fmt.Errorf("%w: unknown class %q", ErrInvalid, code)
	}
	if c.Break != isBreak {
		return fmt.Errorf("%w: class %q has break=%t, but the class says %t", ErrInvalid, code, isBreak, c.Break)
	}
	return nil
}

func checkBridge(b *Bridge) error {
	seen := make(map[string]bool, len(b.Differences))
	sum := b.Unexplained
	for _, d := range b.Differences {
		if err := checkKnown(d.Class); err != nil {
			return err
		}
		if seen[d.Class] {
			return fmt.Errorf("%w: class %q appears twice", ErrInvalid, d.Class)
		}
		if OutsideTotals(d.Class) {
			return fmt.Errorf("%w: class %q is in neither total; it belongs in outside_totals", ErrInvalid, d.Class)
		}
		seen[d.Class] = true
		sum = sum.Add(d.Amount)
	}
	outside := make(map[string]bool, len(b.OutsideTotals))
	for _, o := range b.OutsideTotals {
		if err := checkKnown(o.Class); err != nil {
			return err
		}
		if !OutsideTotals(o.Class) {
			return fmt.Errorf("%w: class %q is in the totals; it belongs in differences", ErrInvalid, o.Class)
		}
		if outside[o.Class] {
			return fmt.Errorf("%w: class %q appears twice outside the totals", ErrInvalid, o.Class)
		}
		outside[o.Class] = true
	}
	diff := b.LedgerTotal.Sub(b.StatementTotal)
	if diff.Cmp(sum) != 0 {
		return fmt.Errorf("%w: ledger total %s minus statement total %s is %s, but the differences and the unexplained remainder sum to %s (minor units)",
			ErrUnbalanced, b.LedgerTotal, b.StatementTotal, diff, sum)
	}
	return nil
}

func checkKnown(code string) error {
	if _, ok := LookupClass(code); !ok {
		return fmt.Errorf("%w: unknown class %q", ErrInvalid, code)
	}
	return nil
}

// Balanced reports whether every bridge's Unexplained is zero.
func (r *Report) Balanced() bool {
	for _, b := range r.Bridge {
		if !b.Unexplained.IsZero() {
			return false
		}
	}
	return true
}

// NeedsPerson reports whether the run leaves work for a person: a bridge
// that does not balance, one side empty while the other is not, or at
// least one break that no operator has acknowledged. A class that counts
// breaks but lists none of them needs a person too. A command maps it to
// the exit code for "done, but something needs a person".
func (r *Report) NeedsPerson() bool {
	if !r.Balanced() || r.OneSided() {
		return true
	}
	t, err := r.tally()
	if err != nil || t.invalid != nil || t.open > 0 {
		return true // a report that cannot be read whole needs a person too
	}
	for _, c := range r.Classes {
		if c.Break && (c.LedgerItems != 0 || c.StatementLines != 0) && !t.seen[c.Class] {
			return true
		}
	}
	return false
}
