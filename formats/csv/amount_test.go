package csv

import (
	"errors"
	"testing"

	"github.com/clearing-dev/clearing/internal/money"
)

func TestAmountExactPerExponent(t *testing.T) {
	usd, jpy, bhd := money.MustCurrency("USD"), money.MustCurrency("JPY"), money.MustCurrency("BHD")
	major, _ := newAmountFormat("major", "", "")
	minor, _ := newAmountFormat("minor", "", "")
	grouped, _ := newAmountFormat("major", ",", "")
	european, _ := newAmountFormat("major", ".", ",")
	swiss, _ := newAmountFormat("major", "'", "")
	cases := []struct {
		name string
		f    amountFormat
		in   string
		c    money.Currency
		want int64
		err  error
	}{
		{"usd", major, "12.34", usd, 1234, nil},
		{"usd negative", major, "-12.34", usd, -1234, nil},
		{"usd spaces around", major, " 12.30 ", usd, 1230, nil},
		{"usd too precise", major, "12.345", usd, 0, money.ErrPrecision},
		{"usd trailing zero beyond exponent", major, "12.340", usd, 1234, nil},
		{"jpy", major, "1234", jpy, 1234, nil},
		{"jpy with cents", major, "1234.5", jpy, 0, money.ErrPrecision},
		{"bhd", major, "1.234", bhd, 1234, nil},
		{"bhd too precise", major, "1.2345", bhd, 0, money.ErrPrecision},
		{"empty", major, "", usd, 0, money.ErrEmpty},
		{"blank", major, "   ", usd, 0, money.ErrEmpty},
		{"undeclared thousands", major, "1,234.00", usd, 0, ErrAmount},
		{"undeclared space group", major, "1 234.00", usd, 0, ErrAmount},
		{"two decimal points", major, "1.234.00", usd, 0, ErrAmount},
		{"currency symbol", major, "$12.34", usd, 0, money.ErrSyntax},
		{"parentheses", major, "(12.34)", usd, 0, money.ErrSyntax},
		{"exponent", major, "1e3", usd, 0, money.ErrSyntax},
		{"declared thousands", grouped, "1,234,567.89", usd, 123456789, nil},
		{"declared thousands negative", grouped, "-1,234.50", usd, -123450, nil},
		{"declared thousands not needed", grouped, "999.99", usd, 99999, nil},
		{"misplaced thousands", grouped, "12,34.00", usd, 0, ErrAmount},
		{"short group", grouped, "1,23", usd, 0, ErrAmount},
		{"leading separator", grouped, ",123", usd, 0, ErrAmount},
		{"european", european, "1.234,56", usd, 123456, nil},
		{"european jpy", european, "1.234", jpy, 1234, nil},
		{"european undeclared dot in fraction", european, "1,234.5", usd, 0, ErrAmount},
		{"swiss", swiss, "1'234.50", usd, 123450, nil},
		{"minor", minor, "1234", usd, 1234, nil},
		{"minor bhd", minor, "1234", bhd, 1234, nil},
		{"minor with point", minor, "12.34", usd, 0, ErrAmount},
		{"minor negative", minor, "-5", usd, -5, nil},
		{"overflow", major, "92233720368547758.08", usd, 0, money.ErrRange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.f.parse(tc.in, tc.c)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !errors.Is(err, ErrAmount) {
					t.Fatalf("parse(%q) = %d, %v; want %v wrapped in ErrAmount", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parse(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestAmountFormatRejectsAmbiguousSeparators(t *testing.T) {
	for _, tc := range []struct{ thousands, decimal string }{
		{",", ","}, {".", ""}, {"x", ""}, {"", ";"}, {",,", ""},
	} {
		if _, err := newAmountFormat("major", tc.thousands, tc.decimal); err == nil {
			t.Errorf("thousands %q, decimal %q accepted", tc.thousands, tc.decimal)
		}
	}
}

func TestUndeclaredSeparatorMessageSaysWhatToSet(t *testing.T) {
	f, _ := newAmountFormat("major", "", "")
	_, err := f.parse("1,234.00", money.MustCurrency("USD"))
	if err == nil || err.Error() != `csv: bad amount: "1,234.00" has a separator "," that the mapping does not declare; if it groups thousands, set thousands = ","` {
		t.Fatalf("err = %v", err)
	}
}
