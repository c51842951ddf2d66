package report

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(r *Report)
		want   error
	}{
		{"full report is valid", func(*Report) {}, nil},
		{"unknown class in the counts", func(r *Report) { r.Classes[0].Class = "mystery" }, ErrInvalid},
		{"unknown class in a discrepancy", func(r *Report) { r.Discrepancies[4].Class = "Missing_In_Ledger" }, ErrInvalid},
		{"unknown class in a bridge", func(r *Report) { r.Bridge[0].Differences[0].Class = "" }, ErrInvalid},
		{"break hidden as explained", func(r *Report) { r.Discrepancies[4].Break = false }, ErrInvalid},
		{"explained flagged as break", func(r *Report) { r.Discrepancies[0].Break = true }, ErrInvalid},
		{"class count flag disagrees", func(r *Report) { r.Classes[5].Break = false }, ErrInvalid},
		{"currency bridged twice", func(r *Report) { r.Bridge = append(r.Bridge, r.Bridge[0]) }, ErrInvalid},
		{"class twice in a bridge", func(r *Report) {
			b := &r.Bridge[1]
			b.Differences = append(b.Differences, ClassTotal{Class: b.Differences[0].Class})
		}, ErrInvalid},
		{"bridge off by one minor unit", func(r *Report) { r.Bridge[1].Unexplained = r.Bridge[1].Unexplained.Add(money.TotalOf(1)) }, ErrUnbalanced},
		{"statement total changed alone", func(r *Report) {
			r.Bridge[0].StatementTotal = r.Bridge[0].StatementTotal.Sub(money.TotalOf(100))
		}, ErrUnbalanced},
		// Sums past int64 are exact: they bridge when they add up, and one
		// minor unit off is still found.
		{"differences past int64 that add up", func(r *Report) {
			// Lines of classes that need no one, as a break line must be
			// its breaks' sum.
			b := &r.Bridge[0]
			n := 0
			for i := range b.Differences {
				if c, _ := LookupClass(b.Differences[i].Class); !c.Break && n < 2 {
					b.Differences[i].Amount = b.Differences[i].Amount.Add(money.TotalOf(math.MaxInt64))
					n++
				}
			}
			b.LedgerTotal = b.LedgerTotal.Add(money.TotalOf(math.MaxInt64)).Add(money.TotalOf(math.MaxInt64))
		}, nil},
		// The auditor's form splits the breaks by their items: a break line
		// that is not its breaks' sum would make it disagree with the
		// class lines.
		{"break line that is not its breaks' sum", func(r *Report) {
			b := &r.Bridge[0]
			b.Differences[0].Amount = b.Differences[0].Amount.Add(money.TotalOf(1))
			b.LedgerTotal = b.LedgerTotal.Add(money.TotalOf(1))
		}, ErrInvalid},
		{"currency mismatch summed in one currency only", func(r *Report) {
			b := &r.Bridge[2]
			b.Differences = nil
			b.StatementTotal = b.LedgerTotal
		}, ErrInvalid},
		{"empty side that the counts deny", func(r *Report) { r.EmptySide = EmptyLedger }, ErrInvalid},
		{"empty side left out", func(r *Report) {
			r.LedgerItems, r.MatchedLedger = 0, 0
		}, ErrInvalid},
		{"settlement break summed in the bridge", func(r *Report) {
			b := &r.Bridge[0]
			b.Differences = append(b.Differences, b.OutsideTotals...)
			b.OutsideTotals = nil
			b.LedgerTotal = b.LedgerTotal.Add(money.TotalOf(1000))
		}, ErrInvalid},
		{"settlement break in no bridge", func(r *Report) { r.Bridge[0].OutsideTotals = nil }, ErrInvalid},
		{"outside line that is not the breaks' sum", func(r *Report) {
			o := &r.Bridge[0].OutsideTotals[0]
			o.Amount = o.Amount.Add(money.TotalOf(1))
		}, ErrInvalid},
		{"outside line that miscounts the breaks", func(r *Report) { r.Bridge[0].OutsideTotals[0].Count++ }, ErrInvalid},
		{"class of the totals outside them", func(r *Report) {
			b := &r.Bridge[1]
			b.OutsideTotals = append(b.OutsideTotals, ClassTotal{Class: ClassMissingInStatement})
		}, ErrInvalid},
		{"totals past int64 off by one", func(r *Report) {
			b := &r.Bridge[0]
			b.LedgerTotal = b.LedgerTotal.Add(money.TotalOf(math.MaxInt64)).Add(money.TotalOf(math.MaxInt64))
			b.StatementTotal = b.StatementTotal.Add(money.TotalOf(math.MaxInt64)).Add(money.TotalOf(math.MaxInt64 - 1))
		}, ErrUnbalanced},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := fullReport()
			tc.change(r)
			err := r.Validate()
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Validate() = %v, want %v", err, tc.want)
			}
			if tc.want == nil {
				return
			}
			// Write must refuse the same report without writing a byte.
			for _, f := range formats {
				var b bytes.Buffer
				if err := Write(&b, f.format, r); !errors.Is(err, tc.want) || b.Len() != 0 {
					t.Errorf("Write(%s) = %v with %d bytes, want %v and nothing written", f.format, err, b.Len(), tc.want)
				}
			}
		})
	}
}

func TestValidateNil(t *testing.T) {
	var r *Report
	if err := r.Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate(nil) = %v, want ErrInvalid", err)
	}
}

func TestWriteRefusesUnknownFormat(t *testing.T) {
	for _, f := range []string{"", "HTML", "pdf", "tsv", "json "} {
		t.Run(f, func(t *testing.T) {
			var b bytes.Buffer
			err := Write(&b, f, fullReport())
			if !errors.Is(err, output.ErrFormat) || b.Len() != 0 {
				t.Fatalf("Write(%q) = %v with %d bytes, want output.ErrFormat and nothing written", f, err, b.Len())
			}
			if !errors.Is(Check(f), output.ErrFormat) {
				t.Fatalf("Check(%q) accepted it", f)
			}
		})
	}
	for _, f := range formats {
		if err := Check(f.format); err != nil {
			t.Errorf("Check(%q) = %v", f.format, err)
		}
	}
}

func TestNeedsPerson(t *testing.T) {
	cases := []struct {
		name             string
		r                *Report
		balanced, attend bool
	}{
		{"unexplained and breaks", fullReport(), false, true},
		{"balanced with breaks", balancedReport(), true, true},
		{"empty", emptyReport(), true, false},
		{"one side empty", oneSidedReport(), true, true},
		{"one side empty, nothing that breaks", func() *Report {
			r := emptyReport()
			r.StatementLines, r.EmptySide = 1, EmptyLedger
			r.Classes[classIndex[ClassMatched]].StatementLines = 1
			return r
		}(), true, true},
		{"only explained differences", func() *Report {
			r := balancedReport()
			var keep []Discrepancy
			for _, d := range r.Discrepancies {
				if !d.Break {
					keep = append(keep, d)
				}
			}
			r.Discrepancies = keep
			for i := range r.Classes {
				if r.Classes[i].Break {
					r.Classes[i].LedgerItems, r.Classes[i].StatementLines = 0, 0
				}
			}
			return r
		}(), true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Balanced(); got != tc.balanced {
				t.Errorf("Balanced() = %t, want %t", got, tc.balanced)
			}
			if got := tc.r.NeedsPerson(); got != tc.attend {
				t.Errorf("NeedsPerson() = %t, want %t", got, tc.attend)
			}
		})
	}
}
