package report

import (
	"fmt"
	"slices"

	"github.com/clearing-dev/clearing/internal/money"
)

// Each calls f with every discrepancy in document order, from Stream when
// it is set and otherwise from Discrepancies, and stops at the first error.
// A streamed discrepancy is f's to keep.
func (r *Report) Each(f func(*Discrepancy) error) error {
	if r.Stream != nil {
		return r.Stream(f)
	}
	for i := range r.Discrepancies {
		if err := f(&r.Discrepancies[i]); err != nil {
			return err
		}
	}
	return nil
}

// tally is everything the forms and the checks read from the whole list of
// discrepancies, gathered in one pass over it: the sums and counts behind
// the verdict, the bridges in the auditor's form, the break counts, the
// age buckets and the charts, and what Validate holds them to. A form then
// reads the list once more to list it, so that a stored run is read from
// the database twice and never held whole, whatever its size.
type tally struct {
	n int // discrepancies
	// invalid is the first discrepancy whose class is unknown or whose
	// break flag disagrees with its class; the sums leave it out.
	invalid error
	// outside sums the discrepancies that neither total holds, per
	// currency and class; breakItems what the breaks add to their class
	// lines, per currency (itemAmounts).
	outside    map[classCell]ClassTotal
	breakItems map[string]money.Total
	// seen is every class that has a discrepancy.
	seen map[string]bool
	// breaks and explained count the breaks and the other discrepancies
	// per class, in classTable's order.
	breaks    []int
	explained []int64
	// open and acked count the breaks that need a person and those an
	// operator acknowledged; ages buckets the breaks by age.
	open, acked int
	ages        []AgeBucket
	// audit is each currency's items in the auditor's form: every
	// discrepancy that touches the currency (touches).
	audit map[string]*auditItems
	// worth sums the absolute differences of the open breaks per currency,
	// in worthOrder, the order their currencies first appear.
	worth      map[string]*ClassTotal
	worthOrder []string
	// cells sums the breaks per class and currency.
	cells map[classCell]*breakCell
}

// classCell is a currency and a class.
type classCell struct{ currency, class string }

// auditItems is one currency's discrepancies in the auditor's form:
// explained counts those that are not breaks, open and acknowledged the
// breaks, with their items signed statement minus ledger.
type auditItems struct {
	explained   int64
	open, acked ItemsTotal
}

// breakCell is the breaks of one class in one currency: how many are open
// and acknowledged, and the sum of their differences, absolute and signed.
type breakCell struct {
	open, acked int
	abs, net    money.Total
}

// tally returns the report's tally. A streamed report's is read once and
// kept, since every pass reads the same discrepancies; a report that holds
// its discrepancies is tallied afresh, as they may have changed.
func (r *Report) tally() (*tally, error) {
	if r.sum != nil {
		return r.sum, nil
	}
	t := &tally{
		outside:    map[classCell]ClassTotal{},
		breakItems: map[string]money.Total{},
		seen:       map[string]bool{},
		breaks:     make([]int, len(classTable)),
		explained:  make([]int64, len(classTable)),
		ages:       []AgeBucket{{Bucket: "0-2"}, {Bucket: "3-7"}, {Bucket: "8-30"}, {Bucket: "over 30"}},
		audit:      map[string]*auditItems{},
		worth:      map[string]*ClassTotal{},
		cells:      map[classCell]*breakCell{},
	}
	i := 0
	err := r.Each(func(d *Discrepancy) error {
		t.add(i, d)
		i++
		return nil
	})
	if err != nil {
		return nil, err
	}
	t.n = i
	if r.Stream != nil {
		r.sum = t
	}
	return t, nil
}

// add counts the i-th discrepancy d.
func (t *tally) add(i int, d *Discrepancy) {
	if err := checkClass(d.Class, d.Break); err != nil {
		if t.invalid == nil {
			t.invalid = fmt.Errorf("discrepancies[%d]: %w", i, err)
		}
		return
	}
	t.seen[d.Class] = true
	ci := classIndex[d.Class]
	if OutsideTotals(d.Class) {
		k := classCell{d.Currency, d.Class}
		o := t.outside[k]
		o.Amount = o.Amount.Add(money.TotalOf(d.Difference))
		o.Count++
		t.outside[k] = o
	}
	t.addAudit(d)
	if !d.Break {
		t.explained[ci]++
		return
	}
	t.breaks[ci]++
	itemAmounts(d, func(cur string, amt int64) { t.breakItems[cur] = t.breakItems[cur].Add(money.TotalOf(amt)) })
	age := 3
	switch {
	case d.AgeDays <= 2:
		age = 0
	case d.AgeDays <= 7:
		age = 1
	case d.AgeDays <= 30:
		age = 2
	}
	t.ages[age].Breaks++
	c := t.cells[classCell{d.Currency, d.Class}]
	if c == nil {
		c = &breakCell{}
		t.cells[classCell{d.Currency, d.Class}] = c
	}
	diff := money.TotalOf(d.Difference)
	c.abs, c.net = c.abs.Add(diff.Abs()), c.net.Add(diff)
	if d.Acknowledged {
		t.acked++
		t.ages[age].Acknowledged++
		c.acked++
		return
	}
	t.open++
	c.open++
	w := t.worth[d.Currency]
	if w == nil {
		w = &ClassTotal{Class: d.Currency}
		t.worth[d.Currency] = w
		t.worthOrder = append(t.worthOrder, d.Currency)
	}
	w.Amount = w.Amount.Add(diff.Abs())
	w.Count++
}

// addAudit adds d to the auditor's form of each currency it touches.
func (t *tally) addAudit(d *Discrepancy) {
	if OutsideTotals(d.Class) {
		return
	}
	for _, cur := range touched(d) {
		a := t.audit[cur]
		if a == nil {
			a = &auditItems{}
			t.audit[cur] = a
		}
		if !d.Break {
			a.explained++
			continue
		}
		items := &a.open
		if d.Acknowledged {
			items = &a.acked
		}
		items.Count++
		itemAmounts(d, func(c string, amt int64) {
			if c == cur {
				items.Amount = items.Amount.Sub(money.TotalOf(amt))
			}
		})
	}
}

// touched returns the currencies that d is an item of in the auditor's
// form, each once: its own and its sides'.
func touched(d *Discrepancy) []string {
	curs := make([]string, 1, 3)
	curs[0] = d.Currency
	if d.Ledger != nil && d.Ledger.Currency != d.Currency {
		curs = append(curs, d.Ledger.Currency)
	}
	if d.Statement != nil && !slices.Contains(curs, d.Statement.Currency) {
		curs = append(curs, d.Statement.Currency)
	}
	return curs
}
