package money

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// ErrTotal means a text or database value is not a whole number of minor
// units, so it cannot be a Total.
var ErrTotal = errors.New("money: not a whole number of minor units")

// Total is an exact sum of amounts in minor units. One amount always fits in
// an int64 (a record's amount is capped at formats.MaxAmountMinor), but a sum
// of many need not: ten thousand postings of 10^15 minor units already pass
// the int64 maximum. Balances and reconciliation totals are therefore summed
// as numeric in SQL and carried as a Total in Go, never as an int64 that
// would wrap or a float that would round.
//
// The zero value is zero. A Total is a value: its methods never change it,
// and copying one is safe.
type Total struct {
	n *big.Int // nil means zero; never modified after it is set
}

// TotalOf returns minor as a Total.
func TotalOf(minor int64) Total {
	if minor == 0 {
		return Total{}
	}
	return Total{n: big.NewInt(minor)}
}

// ParseTotal parses a whole number of minor units, such as "-12345" or
// "10000000000000000000". A sign is allowed; anything else, a decimal point
// or an exponent included, is ErrTotal.
func ParseTotal(s string) (Total, error) {
	body := s
	if body != "" && (body[0] == '-' || body[0] == '+') {
		body = body[1:]
	}
	if body == "" || !allDigits(body) {
		return Total{}, fmt.Errorf("%w: %q", ErrTotal, s)
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return Total{}, fmt.Errorf("%w: %q", ErrTotal, s)
	}
	return Total{n: n}.norm(), nil
}

// norm keeps zero in its one form, nil, so that == on two zeros holds.
func (t Total) norm() Total {
	if t.n != nil && t.n.Sign() == 0 {
		return Total{}
	}
	return t
}

func (t Total) big() *big.Int {
	if t.n == nil {
		return new(big.Int)
	}
	return t.n
}

// Add returns t + u.
func (t Total) Add(u Total) Total {
	return Total{n: new(big.Int).Add(t.big(), u.big())}.norm()
}

// Sub returns t - u.
func (t Total) Sub(u Total) Total {
	return Total{n: new(big.Int).Sub(t.big(), u.big())}.norm()
}

// Sign returns -1, 0 or +1.
func (t Total) Sign() int {
	if t.n == nil {
		return 0
	}
	return t.n.Sign()
}

// Abs returns |t|.
func (t Total) Abs() Total {
	if t.Sign() >= 0 {
		return t
	}
	return Total{n: new(big.Int).Abs(t.n)}
}

// Big returns t as a new big.Int, for arithmetic that a Total does not offer
// (scaling a chart). Changing it does not change t.
func (t Total) Big() *big.Int { return new(big.Int).Set(t.big()) }

// IsZero reports whether t is zero.
func (t Total) IsZero() bool { return t.Sign() == 0 }

// Cmp compares t and u: -1 when t < u, 0 when equal, +1 when t > u.
func (t Total) Cmp(u Total) int { return t.big().Cmp(u.big()) }

// Int64 returns t as an int64, and whether it fits in one.
func (t Total) Int64() (int64, bool) {
	if t.n == nil {
		return 0, true
	}
	if !t.n.IsInt64() {
		return 0, false
	}
	return t.n.Int64(), true
}

// String writes t in minor units ("-12345").
func (t Total) String() string {
	if t.n == nil {
		return "0"
	}
	return t.n.String()
}

// MarshalJSON writes t as a JSON integer in minor units, exactly as an int64
// field would when it fits; a reader that needs every digit of a larger
// total should decode JSON numbers as text (json.Number).
func (t Total) MarshalJSON() ([]byte, error) {
	return []byte(t.String()), nil
}

// UnmarshalJSON reads a JSON integer in minor units.
func (t *Total) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		s = string(b[1 : len(b)-1])
	}
	v, err := ParseTotal(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// Scan implements sql.Scanner, so that a numeric sum scans into a Total
// without passing through an int64 or a float. A NULL is an error: sums that
// may be empty are coalesced to 0 in their SQL.
func (t *Total) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		*t = TotalOf(v)
		return nil
	case string:
		p, err := ParseTotal(v)
		if err != nil {
			return err
		}
		*t = p
		return nil
	case []byte:
		return t.Scan(string(v))
	case nil:
		return fmt.Errorf("%w: NULL", ErrTotal)
	}
	return fmt.Errorf("%w: cannot scan %T", ErrTotal, src)
}

// Value implements driver.Valuer: a Total is written as its decimal text,
// which PostgreSQL reads into a numeric column exactly.
func (t Total) Value() (driver.Value, error) {
	return t.String(), nil
}

// FormatTotal renders t as a decimal in major units of c, without the code,
// exactly as Format does for an int64.
func FormatTotal(t Total, c Currency) string {
	if v, ok := t.Int64(); ok {
		return Format(v, c)
	}
	return placePoint(t.n.Sign() < 0, new(big.Int).Abs(t.n).String(), c.Exponent)
}

// FormatTotalCode is FormatTotal for a currency given by code, with the code
// appended ("100.00 USD"). An unknown code is shown in minor units, as
// FormatCode does.
func FormatTotalCode(t Total, code string) string {
	if v, ok := t.Int64(); ok {
		return FormatCode(v, code)
	}
	c, err := LookupCurrency(code)
	if err != nil {
		return t.String() + " (minor units) " + code
	}
	return FormatTotal(t, c) + " " + c.Code
}

// placePoint writes the decimal digits of an absolute amount in minor units
// with the decimal point exponent places from the right, and the sign.
func placePoint(neg bool, digits string, exponent int) string {
	s := digits
	if exponent > 0 {
		if len(s) <= exponent {
			s = strings.Repeat("0", exponent-len(s)+1) + s
		}
		s = s[:len(s)-exponent] + "." + s[len(s)-exponent:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
