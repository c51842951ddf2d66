package iso8583

import (
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats"
)

func TestYearOf(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 23, 59, 0, 0, time.UTC) }
	tests := []struct {
		name string
		now  time.Time
		mmdd string
		want time.Time // zero: not a date
	}{
		{"today", day(2027, 1, 5), "0105", formats.Date(2027, 1, 5)},
		{"last month", day(2027, 1, 5), "1231", formats.Date(2026, 12, 31)},
		{"within the lead", day(2027, 1, 5), "0204", formats.Date(2027, 2, 4)},
		{"just past the lead", day(2027, 1, 5), "0205", formats.Date(2026, 2, 5)},
		{"eleven months back", day(2027, 1, 5), "0301", formats.Date(2026, 3, 1)},
		{"leap day in a leap year", day(2028, 3, 1), "0229", formats.Date(2028, 2, 29)},
		{"leap day a year after", day(2029, 1, 20), "0229", formats.Date(2028, 2, 29)},
		{"leap day with no leap year in reach", day(2027, 3, 1), "0229", time.Time{}},
		{"month 13", day(2027, 1, 5), "1301", time.Time{}},
		{"day 0", day(2027, 1, 5), "0100", time.Time{}},
		{"31 April", day(2027, 1, 5), "0431", time.Time{}},
		{"not digits", day(2027, 1, 5), "01A5", time.Time{}},
		{"short", day(2027, 1, 5), "015", time.Time{}},
		{"time zone of now is ignored", time.Date(2027, 1, 5, 23, 0, 0, 0, time.FixedZone("", -5*3600)), "0204", formats.Date(2027, 2, 4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := newYearOf(tt.now).date(tt.mmdd)
			if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
				t.Errorf("date(%q) = %v, %v; want %v", tt.mmdd, got, ok, tt.want)
			}
		})
	}
}

// TestValueDateIsStableForMonths guards the digest of a re-ingested file:
// read any day from the value date to 334 days after it, a date keeps its
// year.
func TestValueDateIsStableForMonths(t *testing.T) {
	value := formats.Date(2026, 3, 15)
	for d := 0; d <= 365-leadDays-1; d++ {
		got, ok := newYearOf(value.AddDate(0, 0, d)).date("0315")
		if !ok || !got.Equal(value) {
			t.Fatalf("read %d days later: %v, %v", d, got, ok)
		}
	}
	got, _ := newYearOf(value.AddDate(0, 0, 365-leadDays+1)).date("0315")
	if got.Equal(value) {
		t.Fatalf("read %d days later the year should have moved on", 365-leadDays+1)
	}
}

func TestClock(t *testing.T) {
	for s, want := range map[string]bool{"000000": true, "235959": true, "240000": false, "126000": false,
		"120060": false, "12000": false, "12000A": false} {
		if validClock(s) != want {
			t.Errorf("validClock(%q) = %v", s, !want)
		}
	}
}
