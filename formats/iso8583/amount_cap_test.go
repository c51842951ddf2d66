package iso8583

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// TestAmountAboveCapIsRefused guards formats.MaxAmountMinor for ISO 8583.
// DE4 has 12 digits in the 1987 specs, below the cap, but a spec file may
// widen it (amounts of up to 18 digits decode); whatever the spec, a message
// whose amount is above the cap is refused, naming its index and offset.
func TestAmountAboveCapIsRefused(t *testing.T) {
	mp := mapper{hasher: testHasher, years: newYearOf(testNow)}
	for _, tc := range []struct {
		amount int64
		refuse bool
	}{{formats.MaxAmountMinor, false}, {formats.MaxAmountMinor + 1, true}} {
		msg := with(purchase().Message(), fieldAmount, fmt.Sprintf("%016d", tc.amount))
		var m message
		m.mti = msg.MTI
		for id, v := range msg.Fields {
			m.has[id], m.values[id] = true, v
		}
		rec, err := mp.record(&m, 7, 1234)
		if !tc.refuse {
			if err != nil || rec.Amount != tc.amount {
				t.Fatalf("amount %d: %+v, %v", tc.amount, rec, err)
			}
			continue
		}
		var pe *formats.ParseError
		if !errors.As(err, &pe) || pe.Line != 7 || pe.Offset != 1234 || pe.Field != "DE4" ||
			!errors.Is(err, formats.ErrAmountTooLarge) || !errors.Is(err, ErrInvalid) {
			t.Fatalf("amount %d: error %v, want DE4 of message 7 above the limit", tc.amount, err)
		}
		if !strings.Contains(err.Error(), "line 7, offset 1234") {
			t.Errorf("error %q does not name the message", err)
		}
	}
}
