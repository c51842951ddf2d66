package ach

import (
	"errors"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// TestAmountFieldsStayBelowTheCap guards the Record contract's amount cap
// for ACH. An entry's amount has 10 digits and an ADV entry's 12, so no ACH
// file can carry more than formats.MaxAmountMinor: the widest amount a file
// can hold reads, and the reader's own guard refuses an amount past the cap
// if a layout ever gives it more digits.
func TestAmountFieldsStayBelowTheCap(t *testing.T) {
	for _, f := range []entryFields{standardFields, advFields} {
		if digits := f.amountTo - f.amountFrom; digits >= len("1000000000000001") {
			t.Fatalf("an amount field of %d digits can pass the cap", digits)
		}
	}
	entries := testEntries()[:2]
	entries[0].Amount = 9_999_999_999
	recs := mustRead(t, testFile(t, entries))
	if recs[0].Amount != 9_999_999_999 {
		t.Fatalf("amount %d, want the widest 10-digit amount", recs[0].Amount)
	}

	// A layout with a 16-digit amount field (positions 24-39) must still
	// refuse 10^15+1, naming the line and offset.
	wide := entryFields{codeAt: 1, rdfiAt: 3, amountFrom: 23, amountTo: 39, indicatorAt: 78, traceFrom: 79}
	line := lines(testFile(t, entries))[2]
	for _, tc := range []struct {
		amount string
		refuse bool
	}{{"1000000000000000", false}, {"1000000000000001", true}} {
		rc := &record{text: setField(line, 23, tc.amount), line: 3, off: 188}
		r := NewReader(strings.NewReader(""), Options{Hasher: testHasher})
		ok := r.numericFields(rc, &entryState{pos: pos{rc.line, rc.off}}, wide)
		if ok == tc.refuse {
			t.Fatalf("amount %s: accepted %t", tc.amount, ok)
		}
		if !tc.refuse {
			continue
		}
		var pe *formats.ParseError
		if len(r.queue) != 1 || !errors.As(r.queue[0].err, &pe) {
			t.Fatalf("queue %+v, want one ParseError", r.queue)
		}
		if pe.Line != 3 || pe.Offset != 188 || pe.Field != "Amount" || !errors.Is(pe, formats.ErrAmountTooLarge) {
			t.Fatalf("error %v, want the amount of line 3 above the limit", pe)
		}
	}
}
