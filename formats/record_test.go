package formats

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckRecordContract(t *testing.T) {
	good := func() Record {
		return Record{
			Key: "ach:1234567890:2026-11-29:091000010000001", Kind: Clearing,
			Amount: 1250, Currency: "USD", Direction: Credit,
			ValueDate: Date(2026, 11, 29), Line: 3, Offset: 188,
		}
	}
	tests := []struct {
		name   string
		change func(r *Record)
		want   string // "" when the record keeps the contract
	}{
		{"clearing", func(r *Record) {}, ""},
		{"notice of zero", func(r *Record) { r.Kind, r.Amount = Notice, 0 }, ""},
		{"return with a link", func(r *Record) {
			r.Kind, r.Link = Return, &Link{Reference: "091000010000001", Suffix: ":return"}
		}, ""},
		{"no key", func(r *Record) { r.Key = "" }, "no key"},
		{"long key", func(r *Record) { r.Key = strings.Repeat("k", 513) }, "longer than 512"},
		{"negative amount", func(r *Record) { r.Amount = -1 }, "negative amount"},
		{"zero that posts", func(r *Record) { r.Amount = 0 }, "zero amount"},
		{"amount above the cap", func(r *Record) { r.Amount = MaxAmountMinor + 1 }, "above the limit"},
		{"currency", func(r *Record) { r.Currency = "US" }, "ISO 4217"},
		{"direction", func(r *Record) { r.Direction = "X" }, "direction"},
		{"no value date", func(r *Record) { r.ValueDate = time.Time{} }, "no value date"},
		{"return without a link", func(r *Record) { r.Kind = Return }, "usable link"},
		{"reversal with a bad suffix", func(r *Record) {
			r.Kind, r.Link = Reversal, &Link{Reference: "R", Suffix: "reversal"}
		}, "usable link"},
		{"unknown kind", func(r *Record) { r.Kind = "refund" }, "unknown kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := good()
			tc.change(&r)
			err := Check(&r)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want a *ParseError saying %q", err, tc.want)
			}
			if tc.name == "amount above the cap" && !errors.Is(err, ErrAmountTooLarge) {
				t.Errorf("Check = %v, want it to wrap ErrAmountTooLarge", err)
			}
			if pe.Line != 3 || pe.Offset != 188 {
				t.Errorf("ParseError at line %d offset %d, want line 3 offset 188", pe.Line, pe.Offset)
			}
		})
	}
}
