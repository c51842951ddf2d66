package mt940

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/internal/statement"
	"github.com/clearing-dev/clearing/internal/money"
)

// currency looks up a balance's or an amount's currency. XXX (no currency)
// and XTS (testing) are refused.
func currency(code string) (money.Currency, error) {
	if code == "XXX" || code == "XTS" {
		return money.Currency{}, fmt.Errorf("%w: currency %s is not a currency of account", ErrAmount, code)
	}
	c, err := money.LookupCurrency(code)
	if err != nil || len(code) != 3 || code != strings.ToUpper(code) {
		return money.Currency{}, fmt.Errorf("%w: unknown currency %q", ErrAmount, code)
	}
	return c, nil
}

// amount parses an MT amount: digits with a decimal comma, at most the
// currency's exponent of decimals. Without a comma the digits are whole
// units and noComma is true, for a warning.
func amount(s string, c money.Currency) (v int64, noComma bool, err error) {
	if s == "" {
		return 0, false, fmt.Errorf("%w: amount missing", ErrAmount)
	}
	if strings.Count(s, ",") > 1 || strings.Trim(s, "0123456789,") != "" || s == "," || s[0] == ',' {
		return 0, false, fmt.Errorf("%w: %q is not an amount with a decimal comma", ErrAmount, s)
	}
	noComma = !strings.Contains(s, ",")
	v, err = money.ParseMajor(strings.TrimSuffix(strings.Replace(s, ",", ".", 1), "."), c)
	if err != nil {
		if errors.Is(err, money.ErrPrecision) {
			return 0, false, fmt.Errorf("%w: %q has more decimal places than %s allows (%d)", ErrAmount, s, c.Code, c.Exponent)
		}
		return 0, false, fmt.Errorf("%w: %q: %w", ErrAmount, s, err)
	}
	if err := formats.CheckAmount(v); err != nil {
		return 0, false, err
	}
	return v, noComma, nil
}

// date parses YYMMDD: years 69-99 are 1969-1999, 00-68 are 2000-2068, as
// in bai2.
func date(s string) (time.Time, error) {
	if len(s) != 6 || strings.Trim(s, "0123456789") != "" {
		return time.Time{}, fmt.Errorf("%w: date %q is not YYMMDD", ErrField, s)
	}
	yy := int(s[0]-'0')*10 + int(s[1]-'0')
	year := 2000 + yy
	if yy >= 69 {
		year = 1900 + yy
	}
	return calendar(year, s[2:], s)
}

func calendar(year int, mmdd, whole string) (time.Time, error) {
	mm := int(mmdd[0]-'0')*10 + int(mmdd[1]-'0')
	dd := int(mmdd[2]-'0')*10 + int(mmdd[3]-'0')
	t := formats.Date(year, time.Month(mm), dd)
	if mm < 1 || mm > 12 || t.Day() != dd || t.Month() != time.Month(mm) {
		return time.Time{}, fmt.Errorf("%w: date %q is not a calendar date", ErrField, whole)
	}
	return t, nil
}

// entryDate checks the optional MMDD entry date of :61: against the value
// date: it is the closest calendar date with that month and day, which may
// fall in the year before or after.
func entryDate(mmdd string, value time.Time) (time.Time, error) {
	var best time.Time
	for _, y := range []int{value.Year(), value.Year() - 1, value.Year() + 1} {
		t, err := calendar(y, mmdd, mmdd)
		if err != nil {
			continue
		}
		if best.IsZero() || absDays(t, value) < absDays(best, value) {
			best = t
		}
	}
	if best.IsZero() {
		return best, fmt.Errorf("%w: entry date %q is not a calendar date", ErrField, mmdd)
	}
	return best, nil
}

func absDays(a, b time.Time) time.Duration {
	d := a.Sub(b)
	if d < 0 {
		return -d
	}
	return d
}

// balance is a parsed :60F:, :60M:, :62F:, :62M:, :64: or :65: field.
type balance struct {
	amount int64 // signed
	date   time.Time
	cur    money.Currency
}

// parseBalance reads "C090924EUR54484,04": mark, date, currency, amount.
func parseBalance(s string) (balance, bool, error) {
	s = strings.TrimSpace(s)
	var b balance
	if len(s) < 11 {
		return b, false, fmt.Errorf("%w: balance %q is too short for mark, date, currency and amount", ErrField, s)
	}
	sign := int64(1)
	switch s[0] {
	case 'C':
	case 'D':
		sign = -1
	default:
		return b, false, fmt.Errorf("%w: balance mark %q, want C or D", ErrField, s[:1])
	}
	var err error
	if b.date, err = date(s[1:7]); err != nil {
		return b, false, err
	}
	if b.cur, err = currency(s[7:10]); err != nil {
		return b, false, err
	}
	v, noComma, err := amount(s[10:], b.cur)
	if err != nil {
		return b, false, err
	}
	b.amount = sign * v
	return b, noComma, nil
}

// line61 is a parsed :61: statement line.
type line61 struct {
	value    time.Time
	mark     string // C, D, RC, RD, EC, ED
	dir      formats.Direction
	amount   int64
	noComma  bool
	txType   string // "NTRF": identification code and type
	custRef  string
	bankRef  string
	reversal bool
}

// parseLine61 reads the first line of :61::
// 6!n[4!n]2a[1!a]15d1!a3!c16x[//16x] - value date, entry date, mark,
// funds code, amount, transaction type, customer reference, bank
// reference. cur is the statement's currency.
func parseLine61(s string, cur money.Currency) (line61, error) {
	var l line61
	if len(s) < 6 {
		return l, fmt.Errorf("%w: statement line %q is too short", ErrField, s)
	}
	var err error
	if l.value, err = date(s[:6]); err != nil {
		return l, fmt.Errorf("value date: %w", err)
	}
	s = s[6:]
	if len(s) >= 4 && strings.Trim(s[:4], "0123456789") == "" {
		if _, err := entryDate(s[:4], l.value); err != nil {
			return l, err
		}
		s = s[4:]
	} else if strings.HasPrefix(s, "    ") {
		s = s[4:] // an entry date left blank, as Citibank sends
	}
	switch {
	case strings.HasPrefix(s, "RC"), strings.HasPrefix(s, "RD"), strings.HasPrefix(s, "EC"), strings.HasPrefix(s, "ED"):
		l.mark, s = s[:2], s[2:]
	case strings.HasPrefix(s, "C"), strings.HasPrefix(s, "D"):
		l.mark, s = s[:1], s[1:]
	default:
		return l, fmt.Errorf("%w: debit/credit mark in %q, want C, D, RC or RD", ErrField, s[:min(len(s), 2)])
	}
	switch l.mark {
	case "C", "RD", "EC":
		l.dir = formats.Credit
	default:
		l.dir = formats.Debit
	}
	l.reversal = l.mark == "RC" || l.mark == "RD"
	if len(s) > 0 && (s[0] >= 'A' && s[0] <= 'Z') {
		s = s[1:] // funds code
	}
	n := 0
	for n < len(s) && (isDigit(s[n]) || s[n] == ',') {
		n++
	}
	if l.amount, l.noComma, err = amount(s[:n], cur); err != nil {
		return l, err
	}
	s = s[n:]
	if len(s) < 4 {
		l.txType, s = s, ""
	} else {
		l.txType, s = s[:4], s[4:]
	}
	cust, bank, _ := strings.Cut(s, "//")
	l.custRef, l.bankRef = strings.TrimSpace(cust), strings.TrimSpace(bank)
	return l, nil
}

// placeholders are what banks write where they have no reference, and the
// markers some write in :61: to say "the reference is in :86:".
var placeholders = map[string]bool{"NONREF": true, "NOTPROVIDED": true, "NONE": true, "EREF": true, "PREF": true, "KREF": true, "MARF": true}

// ref cleans a reference: trimmed, not a placeholder, not over the limit,
// printable, and not an IBAN with valid check digits (an account number,
// kept only hashed; a reference of that shape passes only by chance).
func ref(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || placeholders[strings.ToUpper(s)] || len(s) > maxRefBytes || validIBAN(strings.ReplaceAll(s, " ", "")) {
		return ""
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return ""
		}
	}
	return s
}

// looksLikeIBAN reports whether s has the shape of an IBAN.
func looksLikeIBAN(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i < 2 && (c < 'A' || c > 'Z'):
			return false
		case i >= 2 && i < 4 && !isDigit(c):
			return false
		case i >= 4 && !(isDigit(c) || c >= 'A' && c <= 'Z'):
			return false
		}
	}
	return true
}

// validIBAN checks an IBAN's shape and its mod-97 check digits.
func validIBAN(s string) bool {
	if !looksLikeIBAN(s) {
		return false
	}
	return statement.IBANChecksum(s)
}
