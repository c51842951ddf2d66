package bai2

import (
	"errors"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// TestAmountAboveCapIsRefused guards statement lines past
// formats.MaxAmountMinor: the file is rejected, naming the line.
func TestAmountAboveCapIsRefused(t *testing.T) {
	at := readAll(t, statement("12345678", "16,195,1000000000000000,,R1,,/"), Options{})
	if len(at.errs) != 0 || len(at.records) != 1 || at.records[0].Amount != formats.MaxAmountMinor {
		t.Fatalf("the amount at the limit: records %+v, errors %v", at.records, at.errs)
	}
	res := readAll(t, statement("12345678", "16,195,100,,R1,,/", "16,195,1000000000000001,,R2,,/"), Options{})
	if len(res.errs) != 1 {
		t.Fatalf("errors %v, want one", res.errs)
	}
	pe := res.errs[0]
	if pe.Line != 5 || pe.Field != "amount" || !errors.Is(pe, formats.ErrAmountTooLarge) || !strings.Contains(pe.Error(), "line 5") {
		t.Fatalf("error %v, want the amount of line 5 above the limit", pe)
	}
	if res.final == nil || errors.Is(res.final, formats.EOF) {
		t.Fatalf("final %v: the file must be rejected whole", res.final)
	}
}
