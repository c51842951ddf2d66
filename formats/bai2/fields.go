package bai2

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/clearing-dev/clearing/internal/money"
)

// cursor walks the comma-separated fields of one logical record. A field
// that is absent at the end of the record reads as empty, which is what the
// spec's default-value rule makes of it.
type cursor struct {
	b    []byte
	pos  int  // start of the next field
	at   int  // start of the field last returned
	done bool // no fields left
}

// next returns the next field with surrounding spaces removed.
func (c *cursor) next() []byte {
	if c.done {
		c.at = len(c.b)
		return nil
	}
	c.at = c.pos
	rest := c.b[c.pos:]
	i := bytes.IndexByte(rest, ',')
	if i < 0 {
		c.done = true
		c.pos = len(c.b)
		return bytes.TrimSpace(rest)
	}
	c.pos += i + 1
	return bytes.TrimSpace(rest[:i])
}

// parseAmount reads an amount in minor units. BAI2 amounts carry no decimal
// point: their implied decimals are the currency's ISO 4217 exponent, so
// the digits are the minor units as they stand. signed allows a leading + or
// -, which the spec permits on 03 and trailer amounts but not on details.
func parseAmount(f []byte, signed bool) (int64, error) {
	if len(f) == 0 {
		return 0, fmt.Errorf("%w: amount", ErrMissingField)
	}
	if !signed && (f[0] == '+' || f[0] == '-') {
		return 0, fmt.Errorf("%w: amount %q may not carry a sign", ErrField, f)
	}
	v, err := money.ParseMinor(string(f))
	if err != nil {
		return 0, fmt.Errorf("%w: amount: %w", ErrField, err)
	}
	return v, nil
}

// parseCount reads an unsigned record, account or item count.
func parseCount(f []byte, what string) (int64, error) {
	if len(f) == 0 {
		return 0, fmt.Errorf("%w: %s", ErrMissingField, what)
	}
	if !allDigits(f) || len(f) > 18 {
		return 0, fmt.Errorf("%w: %s %q is not a count", ErrField, what, f)
	}
	n, _ := strconv.ParseInt(string(f), 10, 64) // 18 digits always fit
	return n, nil
}

// parseDate reads a YYMMDD date. Two-digit years follow Go's "06" layout:
// 69-99 are 1969-1999 and 00-68 are 2000-2068.
func parseDate(f []byte, what string) (time.Time, error) {
	if len(f) == 0 {
		return time.Time{}, fmt.Errorf("%w: %s", ErrMissingField, what)
	}
	if len(f) != 6 || !allDigits(f) {
		return time.Time{}, fmt.Errorf("%w: %s %q is not YYMMDD", ErrField, what, f)
	}
	yy, mm, dd := num2(f[0:2]), num2(f[2:4]), num2(f[4:6])
	year := 2000 + yy
	if yy >= 69 {
		year = 1900 + yy
	}
	t := time.Date(year, time.Month(mm), dd, 0, 0, 0, 0, time.UTC)
	if mm < 1 || t.Month() != time.Month(mm) || t.Day() != dd {
		return time.Time{}, fmt.Errorf("%w: %s %q is not a calendar date", ErrField, what, f)
	}
	return t, nil
}

// checkTime validates an optional HHMM time. 0000 to 2400 are times of day,
// and 9999, which some processors send, means end of day.
func checkTime(f []byte, what string) error {
	if len(f) == 0 {
		return nil
	}
	if len(f) != 4 || !allDigits(f) {
		return fmt.Errorf("%w: %s %q is not HHMM", ErrField, what, f)
	}
	hh, mm := num2(f[0:2]), num2(f[2:4])
	if string(f) == "9999" || (hh < 24 && mm < 60) || (hh == 24 && mm == 0) {
		return nil
	}
	return fmt.Errorf("%w: %s %q is not a time of day", ErrField, what, f)
}

// checkID validates an identifier that enters a natural key: printable
// ASCII without the key separator, and not starting with the mark of a
// positional key.
func checkID(f []byte, what string) error {
	if len(f) > maxIDBytes {
		return fmt.Errorf("%w: %s longer than %d bytes", ErrField, what, maxIDBytes)
	}
	for _, c := range f {
		if c < 0x20 || c > 0x7e || c == ':' {
			return fmt.Errorf("%w: %s contains %q, which a key cannot hold", ErrField, what, c)
		}
	}
	if len(f) > 0 && f[0] == '#' {
		return fmt.Errorf("%w: %s starts with '#', which marks positional keys", ErrField, what)
	}
	return nil
}

// checkText validates a free reference: printable ASCII within the size
// limit. It is never echoed, since it may hold personal data.
func checkText(f []byte, what string) error {
	if len(f) > maxIDBytes {
		return fmt.Errorf("%w: %s longer than %d bytes", ErrField, what, maxIDBytes)
	}
	for _, c := range f {
		if c < 0x20 || c > 0x7e {
			return fmt.Errorf("%w: %s contains a byte that is not printable ASCII", ErrField, what)
		}
	}
	return nil
}

func allDigits(f []byte) bool {
	for _, c := range f {
		if !isDigit(c) {
			return false
		}
	}
	return len(f) > 0
}

func num2(f []byte) int { return int(f[0]-'0')*10 + int(f[1]-'0') }

// addAmount adds b to *sum and reports false on int64 overflow.
func addAmount(sum *int64, b int64) bool {
	s := *sum + b
	if (b > 0 && s < *sum) || (b < 0 && s > *sum) {
		return false
	}
	*sum = s
	return true
}
