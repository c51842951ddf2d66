package report

import "fmt"

// Validate checks the rules that every form relies on, and returns an error
// wrapping ErrInvalid or ErrUnbalanced when one does not hold:
//
//   - every class code, in Classes, in each bridge and in each discrepancy,
//     is one of the stable codes (LookupClass);
//   - every Break flag agrees with its class, because a break flagged as
//     explained would be left out of the break list that a person reads;
//   - no currency is bridged twice;
//   - in each bridge, LedgerTotal - StatementTotal equals the sum of the
//     Differences plus Unexplained, exactly (Totals do not overflow).
//
// A non-zero Unexplained is valid: it is a finding, and every form shows it
// loudly. Write calls Validate before it writes anything.
func (r *Report) Validate() error {
	if r == nil {
		return fmt.Errorf("%w: no report", ErrInvalid)
	}
	for i, c := range r.Classes {
		if err := checkClass(c.Class, c.Break); err != nil {
			return fmt.Errorf("classes[%d]: %w", i, err)
		}
	}
	seen := make(map[string]bool, len(r.Bridge))
	for i := range r.Bridge {
		b := &r.Bridge[i]
		if seen[b.Currency] {
			return fmt.Errorf("%w: currency %q is bridged twice", ErrInvalid, b.Currency)
		}
		seen[b.Currency] = true
		if err := checkBridge(b); err != nil {
			return fmt.Errorf("bridge %q: %w", b.Currency, err)
		}
	}
	for i := range r.Discrepancies {
		d := &r.Discrepancies[i]
		if err := checkClass(d.Class, d.Break); err != nil {
			return fmt.Errorf("discrepancies[%d]: %w", i, err)
		}
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
		seen[d.Class] = true
		sum = sum.Add(d.Amount)
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
// that does not balance, or at least one break. A command maps it to the
// exit code for "done, but something needs a person".
func (r *Report) NeedsPerson() bool {
	if !r.Balanced() {
		return true
	}
	for _, c := range r.Classes {
		if c.Break && (c.LedgerItems != 0 || c.StatementLines != 0) {
			return true
		}
	}
	for i := range r.Discrepancies {
		if r.Discrepancies[i].Break {
			return true
		}
	}
	return false
}
