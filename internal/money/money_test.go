package money

import (
	"errors"
	"math"
	"testing"
)

func TestParseMajorExactPerExponent(t *testing.T) {
	usd, jpy, bhd := MustCurrency("USD"), MustCurrency("JPY"), MustCurrency("BHD")
	cases := []struct {
		in   string
		c    Currency
		want int64
		err  error
	}{
		{"12.34", usd, 1234, nil},
		{"12.3", usd, 1230, nil},
		{"12", usd, 1200, nil},
		{"-0.50", usd, -50, nil},
		{"+7.01", usd, 701, nil},
		{".5", usd, 50, nil},
		{"1.500", usd, 150, nil},
		{"0012.34", usd, 1234, nil},
		{"12.345", usd, 0, ErrPrecision},
		{"1,234.00", usd, 0, ErrSyntax},
		{"1 234", usd, 0, ErrSyntax},
		{"1e3", usd, 0, ErrSyntax},
		{"12.", usd, 0, ErrSyntax},
		{".", usd, 0, ErrSyntax},
		{"-", usd, 0, ErrSyntax},
		{"", usd, 0, ErrEmpty},
		{"1234", jpy, 1234, nil},
		{"1234.5", jpy, 0, ErrPrecision},
		{"1.234", bhd, 1234, nil},
		{"1.2345", bhd, 0, ErrPrecision},
		{"92233720368547758.07", usd, math.MaxInt64, nil},
		{"92233720368547758.08", usd, 0, ErrRange},
	}
	for _, tc := range cases {
		got, err := ParseMajor(tc.in, tc.c)
		if !errors.Is(err, tc.err) {
			t.Errorf("ParseMajor(%q, %s) error = %v, want %v", tc.in, tc.c.Code, err, tc.err)
			continue
		}
		if err == nil && got != tc.want {
			t.Errorf("ParseMajor(%q, %s) = %d, want %d", tc.in, tc.c.Code, got, tc.want)
		}
	}
}

func TestParseMinor(t *testing.T) {
	for in, want := range map[string]int64{"1234": 1234, "-5": -5, "+0": 0, "000": 0} {
		got, err := ParseMinor(in)
		if err != nil || got != want {
			t.Errorf("ParseMinor(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "12.3", "1,000", "-", "x"} {
		if _, err := ParseMinor(in); err == nil {
			t.Errorf("ParseMinor(%q) succeeded, want an error", in)
		}
	}
}

func TestFormatRoundTrips(t *testing.T) {
	cases := []struct {
		minor int64
		code  string
		want  string
	}{
		{10000, "USD", "100.00"},
		{-50, "USD", "-0.50"},
		{5, "USD", "0.05"},
		{0, "USD", "0.00"},
		{1234, "JPY", "1234"},
		{1, "BHD", "0.001"},
		{math.MinInt64, "USD", "-92233720368547758.08"},
	}
	for _, tc := range cases {
		c := MustCurrency(tc.code)
		if got := Format(tc.minor, c); got != tc.want {
			t.Errorf("Format(%d, %s) = %q, want %q", tc.minor, tc.code, got, tc.want)
		}
		if tc.minor == math.MinInt64 {
			continue
		}
		back, err := ParseMajor(tc.want, c)
		if err != nil || back != tc.minor {
			t.Errorf("ParseMajor(Format(%d)) = %d, %v", tc.minor, back, err)
		}
	}
}

func TestLookupCurrency(t *testing.T) {
	for _, code := range []string{"USD", "usd", "840"} {
		c, err := LookupCurrency(code)
		if err != nil || c.Code != "USD" || c.Exponent != 2 || c.Numeric != "840" {
			t.Errorf("LookupCurrency(%q) = %+v, %v", code, c, err)
		}
	}
	for _, code := range []string{"", "XXXX", "ZZZ", "999x"} {
		if _, err := LookupCurrency(code); !errors.Is(err, ErrUnknownCurrency) {
			t.Errorf("LookupCurrency(%q) error = %v, want ErrUnknownCurrency", code, err)
		}
	}
}
