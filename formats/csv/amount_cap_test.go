package csv

import (
	"errors"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// TestAmountAboveCapIsRefused guards amounts past formats.MaxAmountMinor,
// which once posted could make a tenant's sums overflow for good.
func TestAmountAboveCapIsRefused(t *testing.T) {
	cases := []struct {
		name, mapping, cell string
	}{
		{"major", simpleMapping, "10000000000000.01"},
		{"major debit", simpleMapping, "-10000000000000.01"},
		{"minor", strings.Replace(simpleMapping, `amount_unit = "major"`, `amount_unit = "minor"`, 1), "1000000000000001"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMapping(t, tc.mapping)
			limit := "10000000000000.00"
			if strings.Contains(tc.mapping, `"minor"`) {
				limit = "1000000000000000"
			}
			in := "id,date,amount,currency,account\nok,2026-11-29," + limit + ",USD,1234\nbig,2026-11-29," + tc.cell + ",USD,1234\n"
			recs, bad, err := readAll(t, m, in, opts())
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].Amount != formats.MaxAmountMinor {
				t.Fatalf("the amount at the limit was not read: %+v", recs)
			}
			if len(bad) != 1 || bad[0].Line != 3 || bad[0].Field != "amount" ||
				!errors.Is(bad[0], formats.ErrAmountTooLarge) || !errors.Is(bad[0], ErrAmount) {
				t.Fatalf("errors %v, want one amount above the limit at line 3", bad)
			}
			if !strings.Contains(bad[0].Error(), "line 3") {
				t.Errorf("error %q does not name the line", bad[0])
			}
		})
	}
}
