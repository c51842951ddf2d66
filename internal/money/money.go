// Package money holds amounts as int64 minor units with an ISO 4217 currency,
// and parses and formats them exactly, with the currency's own exponent.
package money

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/moov-io/iso4217"
)

// Sentinel errors that callers branch on.
var (
	ErrUnknownCurrency = errors.New("money: unknown ISO 4217 currency")
	ErrSyntax          = errors.New("money: not a decimal amount")
	ErrPrecision       = errors.New("money: more decimal places than the currency allows")
	ErrRange           = errors.New("money: amount out of range")
	ErrEmpty           = errors.New("money: empty amount")
)

// Currency is an ISO 4217 currency with its minor-unit exponent.
type Currency struct {
	Code     string // alphabetic code, such as "USD"
	Numeric  string // numeric code, such as "840"
	Exponent int    // digits after the decimal point: JPY 0, USD 2, BHD 3
}

// LookupCurrency finds a currency by its alphabetic ("usd", "USD") or numeric
// ("840") code.
func LookupCurrency(code string) (Currency, error) {
	c := strings.TrimSpace(code)
	if c == "" || len(c) > 3 {
		return Currency{}, fmt.Errorf("%w: %q", ErrUnknownCurrency, code)
	}
	cc, ok := iso4217.Lookup(c)
	if !ok {
		return Currency{}, fmt.Errorf("%w: %q", ErrUnknownCurrency, code)
	}
	return Currency{Code: cc.Code, Numeric: cc.NumericCode, Exponent: int(cc.DecimalPlaces)}, nil
}

// MustCurrency is LookupCurrency for codes known at compile time.
func MustCurrency(code string) Currency {
	c, err := LookupCurrency(code)
	if err != nil {
		panic(err)
	}
	return c
}

// ParseMajor parses a decimal amount in major units ("12.34", "-0.5", "1000")
// into minor units of the currency. It never rounds: an amount with more
// decimal places than the currency has is ErrPrecision. Thousands separators,
// exponents and spaces inside the number are ErrSyntax.
func ParseMajor(s string, c Currency) (int64, error) {
	if s == "" {
		return 0, ErrEmpty
	}
	neg := false
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	if hasDot && frac == "" {
		return 0, fmt.Errorf("%w: %q has a trailing decimal point", ErrSyntax, s)
	}
	if !allDigits(intPart) || !allDigits(frac) {
		return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	// Trailing zeros beyond the exponent carry no value ("1.500" in USD).
	trimmed := strings.TrimRight(frac, "0")
	if len(trimmed) > c.Exponent {
		return 0, fmt.Errorf("%w: %q has %d decimal places, %s has %d", ErrPrecision, s, len(frac), c.Code, c.Exponent)
	}
	digits := intPart + trimmed + strings.Repeat("0", c.Exponent-len(trimmed))
	return parseDigits(digits, neg)
}

// ParseMinor parses an integer amount already in minor units ("1234", "-5").
func ParseMinor(s string) (int64, error) {
	if s == "" {
		return 0, ErrEmpty
	}
	neg := false
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	if s == "" || !allDigits(s) {
		return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	return parseDigits(s, neg)
}

func parseDigits(digits string, neg bool) (int64, error) {
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return 0, nil
	}
	u, err := strconv.ParseUint(digits, 10, 63)
	if err != nil || u > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %s", ErrRange, digits)
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Format renders minor units as a decimal in major units, without the code:
// Format(-50, USD) is "-0.50", Format(1234, JPY) is "1234".
func Format(minor int64, c Currency) string {
	neg := minor < 0
	u := uint64(minor)
	if neg {
		u = uint64(-minor) // correct for math.MinInt64 too, by two's complement
	}
	s := strconv.FormatUint(u, 10)
	if c.Exponent > 0 {
		if len(s) <= c.Exponent {
			s = strings.Repeat("0", c.Exponent-len(s)+1) + s
		}
		s = s[:len(s)-c.Exponent] + "." + s[len(s)-c.Exponent:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// FormatCode is Format for a currency given by code, with the code appended
// ("100.00 USD"). An unknown code is shown in minor units.
func FormatCode(minor int64, code string) string {
	c, err := LookupCurrency(code)
	if err != nil {
		return strconv.FormatInt(minor, 10) + " (minor units) " + code
	}
	return Format(minor, c) + " " + c.Code
}
