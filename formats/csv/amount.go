package csv

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
)

// amountFormat is how an export writes its amounts: in major or minor units,
// with which decimal separator and which thousands separator, if any.
type amountFormat struct {
	minor     bool
	thousands byte // 0 when the export has none
	decimal   byte
}

// newAmountFormat checks the mapping's amount_unit, thousands and decimal.
// Only separators that real exports use are accepted, and the two must differ,
// or "1.234" could be read two ways.
func newAmountFormat(unit, thousands, decimal string) (amountFormat, error) {
	f := amountFormat{minor: unit == "minor", decimal: '.'}
	switch decimal {
	case "", ".":
	case ",":
		f.decimal = ','
	default:
		return f, fmt.Errorf("decimal = %q: it is \".\" or \",\"", decimal)
	}
	switch thousands {
	case "":
	case ",", ".", " ", "'", "_":
		f.thousands = thousands[0]
	default:
		return f, fmt.Errorf("thousands = %q: it is one of \",\", \".\", \" \", \"'\" or \"_\"", thousands)
	}
	if f.thousands == f.decimal {
		return f, fmt.Errorf("thousands and decimal are both %q; a reader could not tell them apart", decimal)
	}
	return f, nil
}

// parse reads one amount exactly, in minor units of c. It never rounds: more
// decimal places than the currency has, an undeclared separator or a
// misplaced thousands separator are errors wrapping ErrAmount (and the
// money error, where there is one).
func (f amountFormat) parse(s string, c money.Currency) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("%w: %w", ErrAmount, money.ErrEmpty)
	}
	sign, body := "", s
	if body[0] == '-' || body[0] == '+' {
		sign, body = body[:1], body[1:]
	}
	intPart, frac, hasDecimal := strings.Cut(body, string(f.decimal))
	if f.thousands != 0 {
		grouped, err := f.ungroup(intPart)
		if err != nil {
			return 0, fmt.Errorf("%w: %q: %w", ErrAmount, s, err)
		}
		intPart = grouped
	}
	if strings.ContainsAny(frac, separators) {
		return 0, fmt.Errorf("%w: %q does not fit the mapping's separators (decimal %q, thousands %s)", ErrAmount, s, string(rune(f.decimal)), f.thousandsName())
	}
	if i := strings.IndexAny(intPart, separators); i >= 0 {
		sep, _ := utf8.DecodeRuneInString(intPart[i:])
		return 0, fmt.Errorf("%w: %q has a separator %q that the mapping does not declare; if it groups thousands, set thousands = %q", ErrAmount, s, string(sep), string(sep))
	}
	if f.minor {
		if hasDecimal {
			return 0, fmt.Errorf("%w: %q has a decimal separator but amount_unit is \"minor\"", ErrAmount, s)
		}
		v, err := money.ParseMinor(sign + intPart)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrAmount, err)
		}
		return capped(v)
	}
	normal := sign + intPart
	if hasDecimal {
		normal += "." + frac
	}
	v, err := money.ParseMajor(normal, c)
	if err != nil {
		if errors.Is(err, money.ErrPrecision) {
			return 0, fmt.Errorf("%w: %q has more decimal places than %s allows (%d): %w", ErrAmount, s, c.Code, c.Exponent, money.ErrPrecision)
		}
		return 0, fmt.Errorf("%w: %w", ErrAmount, err)
	}
	return capped(v)
}

// capped refuses an amount whose size is above formats.MaxAmountMinor, in
// either direction: a debit of 10^15+1 is as absurd as a credit.
func capped(v int64) (int64, error) {
	size := v
	if size < 0 {
		size = -size // ParseMinor and ParseMajor never return math.MinInt64
	}
	if err := formats.CheckAmount(size); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrAmount, err)
	}
	return v, nil
}

// separators are the characters that exports put inside numbers, the
// no-break spaces of French and Swiss exports included.
const separators = ",.' _\u00a0\u202f"

func (f amountFormat) thousandsName() string {
	if f.thousands == 0 {
		return "none"
	}
	return strconv.Quote(string(f.thousands))
}

// ungroup removes thousands separators from the integer part, which must
// group digits in threes ("1,234,567"): "12,34" is far more likely a decimal
// comma than a thousands separator, so it is an error, not 1234.
func (f amountFormat) ungroup(intPart string) (string, error) {
	sep := string(f.thousands)
	if !strings.Contains(intPart, sep) {
		return intPart, nil
	}
	groups := strings.Split(intPart, sep)
	if len(groups[0]) < 1 || len(groups[0]) > 3 {
		return "", fmt.Errorf("thousands separator %q in the wrong place", sep)
	}
	for _, g := range groups[1:] {
		if len(g) != 3 {
			return "", fmt.Errorf("thousands separator %q in the wrong place", sep)
		}
	}
	return strings.Join(groups, ""), nil
}
