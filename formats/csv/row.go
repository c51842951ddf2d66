package csv

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
)

// maxEcho bounds how much of a bad cell an error message repeats. Only cells
// that carry no personal data (amounts, dates, codes) are ever repeated.
const maxEcho = 40

// convert turns one row into a Record. On error it returns the 0-based column
// at fault, or -1 when the fault is the row's shape.
func (rd *Reader) convert(rw row) (formats.Record, int, error) {
	p, f := rd.plan, rw.fields
	if col, ok := p.skipped(f); ok {
		return rd.skipRecord(rw, col), -1, nil
	}
	if col, err := p.checkWidth(f); err != nil {
		return formats.Record{}, col, err
	}
	rec := formats.Record{Kind: formats.Clearing, LineType: formats.Payment, Line: rw.line, Offset: rw.offset}
	var col int
	var err error
	if rec.Key, rec.Reference, col, err = rd.identity(rw); err != nil {
		return rec, col, err
	}
	cur := p.fixedCurrency
	if p.currency >= 0 {
		if cur, err = p.currencyOf(f[p.currency]); err != nil {
			return rec, p.currency, err
		}
	}
	rec.Currency = cur.Code
	if rec.Amount, rec.Direction, col, err = p.amountOf(f, cur); err != nil {
		return rec, col, err
	}
	if rec.ValueDate, err = p.dateOf(f[p.valueDate], rd.m.layout()); err != nil {
		return rec, p.valueDate, err
	}
	if len(p.account) > 0 {
		if col, err = rd.accountOf(f, &rec); err != nil {
			return rec, col, err
		}
	}
	if rec.LineType, err = p.lineTypeOf(f); err != nil {
		return rec, p.typeColumn, err
	}
	if p.group >= 0 {
		if rec.SettleGroup = strings.TrimSpace(f[p.group]); len(rec.SettleGroup) > maxGroupBytes {
			return rec, p.group, fmt.Errorf("the settlement group is longer than %d bytes", maxGroupBytes)
		}
	}
	rec.Detail = p.detail(f, &rec)
	if rec.Amount == 0 {
		rec.Kind = formats.Notice
	}
	return rec, -1, nil
}

// maxGroupBytes bounds a settlement group id, which reconciliation keeps.
const maxGroupBytes = 140

// currencyOf looks a currency code up, remembering the codes it has found:
// the ISO 4217 lookup formats a string on every call, which was a tenth of
// the time spent on a row. Only valid codes are remembered, so the cache
// holds at most the few hundred codes that ISO 4217 has.
func (p *plan) currencyOf(cell string) (money.Currency, error) {
	code := strings.TrimSpace(cell)
	if c, ok := p.currencies[code]; ok {
		return c, nil
	}
	c, err := money.LookupCurrency(code)
	if err != nil {
		return c, fmt.Errorf("%w: %s is not an ISO 4217 code", ErrCurrency, echo(cell))
	}
	p.currencies[code] = c
	return c, nil
}

// skipped reports whether a skip rule matches the row, and on which column.
// A row too short to hold a rule's column does not match it.
func (p *plan) skipped(f []string) (int, bool) {
	for _, s := range p.skips {
		if s.column < len(f) && s.values[strings.TrimSpace(f[s.column])] {
			return s.column, true
		}
	}
	return -1, false
}

func (rd *Reader) skipRecord(rw row, col int) formats.Record {
	return formats.Record{
		Key:    rd.lineKey(rw.line),
		Kind:   formats.Skip,
		Detail: fmt.Sprintf("skipped row: %s is %s", rd.plan.label(col), echo(rw.fields[col])),
		Line:   rw.line,
		Offset: rw.offset,
	}
}

// checkWidth accepts a row with every column the header names, and extra
// fields only when they are empty (a trailing delimiter). A file without a
// header or columns takes its width from its first row. On error it returns
// the first missing or surplus column.
func (p *plan) checkWidth(f []string) (int, error) {
	if p.width == 0 {
		p.width = len(f)
		trimmed := len(f)
		for trimmed > 0 && strings.TrimSpace(f[trimmed-1]) == "" {
			trimmed--
		}
		p.minWidth = max(trimmed, p.need)
	}
	if len(f) < p.minWidth {
		return len(f), fmt.Errorf("%w: the row has %d fields where %d are expected", ErrFieldCount, len(f), p.width)
	}
	for i := p.width; i < len(f); i++ {
		if strings.TrimSpace(f[i]) != "" {
			return i, fmt.Errorf("%w: the row has %d fields where %d are expected, and field #%d is not empty", ErrFieldCount, len(f), p.width, i+1)
		}
	}
	return -1, nil
}

// lineKey is the key of a row in a mapping without key columns. The file id
// is escaped like a key value (KeyComponent), so that a file named "a:1"
// cannot make the keys of a file named "a".
func (rd *Reader) lineKey(line int64) string {
	return "csv:" + rd.m.Source + ":" + KeyComponent(rd.opts.FileID) + ":" + strconv.FormatInt(line, 10)
}

// identity builds the key and the reference. Key values are trimmed,
// escaped (KeyComponent) and joined with ':', so that no two different rows
// share a key and no value can end a key in what reads as a derived suffix
// (":return", ":correction:..."). The reference is only matched on, never an
// identity: it keeps the values as they are, joined with ':'.
func (rd *Reader) identity(rw row) (key, ref string, col int, err error) {
	p, f := rd.plan, rw.fields
	if len(p.key) == 0 {
		key = rd.lineKey(rw.line)
	} else {
		var b, r strings.Builder
		b.WriteString("csv:")
		b.WriteString(rd.m.Source)
		for n, i := range p.key {
			v := strings.TrimSpace(f[i])
			if err := checkText(v, "key"); err != nil {
				return "", "", i, err
			}
			b.WriteByte(':')
			b.WriteString(KeyComponent(v))
			if n > 0 {
				r.WriteByte(':')
			}
			r.WriteString(v)
		}
		key, ref = b.String(), r.String()
	}
	if p.reference >= 0 {
		ref = strings.TrimSpace(f[p.reference])
		if err := checkText(ref, "reference"); err != nil {
			return "", "", p.reference, err
		}
	}
	return key, ref, -1, nil
}

// KeyComponent escapes one value for a key, so that joining components
// with ':' is reversible: ':' is written "%3A", and '%' is written "%25" when
// two hexadecimal digits follow it (where it would read as an escape). Every
// other byte, '%' elsewhere included, stays as it is, so the key of a value
// without ':' is the value itself, as it was before keys were escaped
// (docs/decisions/csv-key-escaping.md). Reading a key back is ordinary
// percent-decoding of each ':'-separated component.
func KeyComponent(v string) string {
	if !strings.ContainsAny(v, ":%") {
		return v
	}
	var b strings.Builder
	b.Grow(len(v) + 8)
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == ':':
			b.WriteString("%3A")
		case c == '%' && i+2 < len(v) && isHex(v[i+1]) && isHex(v[i+2]):
			b.WriteString("%25")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// checkText rejects an empty value, and one with control characters or
// invalid UTF-8, which would make a key that cannot be typed or stored. The
// value itself is never repeated: it may be an account number.
func checkText(v, what string) error {
	if v == "" {
		return fmt.Errorf("%w: the %s is empty", ErrEmptyValue, what)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: the %s has a control character", ErrValue, what)
		} else if c >= utf8.RuneSelf {
			if !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
				return fmt.Errorf("%w: the %s is not printable UTF-8", ErrValue, what)
			}
			break
		}
	}
	return nil
}

// amountOf reads the amount and its direction, by whichever of the three
// shapes the mapping uses.
func (p *plan) amountOf(f []string, c money.Currency) (int64, formats.Direction, int, error) {
	switch {
	case p.debit >= 0:
		return p.debitCredit(f, c)
	case p.direction >= 0:
		v := strings.TrimSpace(f[p.direction])
		var dir formats.Direction
		switch {
		case p.debitValues[v]:
			dir = formats.Debit
		case p.creditValues[v]:
			dir = formats.Credit
		default:
			return 0, "", p.direction, fmt.Errorf("%w: %s is in neither debit_values nor credit_values", ErrDirection, echo(v))
		}
		a, err := p.unsigned(f[p.amount], c)
		return a, dir, p.amount, err
	default:
		a, err := p.amountFormat.parse(f[p.amount], c)
		if err != nil {
			return 0, "", p.amount, err
		}
		dir := formats.Credit
		if a < 0 {
			a, dir = -a, formats.Debit
		}
		if p.positiveDebit {
			dir = dir.Opposite()
		}
		return a, dir, -1, nil
	}
}

// unsigned reads an amount from a column whose direction is given elsewhere,
// where a sign would contradict or repeat that direction.
func (p *plan) unsigned(s string, c money.Currency) (int64, error) {
	if t := strings.TrimSpace(s); t != "" && (t[0] == '-' || t[0] == '+') {
		return 0, fmt.Errorf("%w: %s has a sign, but this column holds unsigned amounts", ErrAmount, echo(s))
	}
	return p.amountFormat.parse(s, c)
}

// debitCredit reads separate debit and credit columns. A column counts as
// filled when it holds a non-zero amount, since many banks write 0.00 in the
// column that does not apply. Exactly one must be filled; a row whose
// columns hold only zeros is a zero amount.
func (p *plan) debitCredit(f []string, c money.Currency) (int64, formats.Direction, int, error) {
	ds, cs := strings.TrimSpace(f[p.debit]), strings.TrimSpace(f[p.credit])
	var d, cr int64
	var err error
	if ds != "" {
		if d, err = p.unsigned(ds, c); err != nil {
			return 0, "", p.debit, err
		}
	}
	if cs != "" {
		if cr, err = p.unsigned(cs, c); err != nil {
			return 0, "", p.credit, err
		}
	}
	switch {
	case d != 0 && cr != 0:
		return 0, "", p.debit, fmt.Errorf("%w: both hold an amount", ErrDebitCredit)
	case ds == "" && cs == "":
		return 0, "", p.debit, fmt.Errorf("%w: both are empty", ErrDebitCredit)
	case d != 0 || cr == 0 && ds != "":
		return d, formats.Debit, -1, nil
	default:
		return cr, formats.Credit, -1, nil
	}
}

// dateOf reads the value date as the calendar date written in the cell, in
// whatever zone a layout with a time part names.
func (p *plan) dateOf(s, layout string) (time.Time, error) {
	t, err := time.Parse(layout, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s does not match date_layout %q", ErrDate, echo(s), layout)
	}
	return formats.Date(t.Date()), nil
}

// accountOf hashes the account columns, joined with ':', under the scope
// "csv:<source>". With several columns a ':' inside a value is refused, or
// "1:23" + "4" and "1" + "23:4" would be one account.
func (rd *Reader) accountOf(f []string, rec *formats.Record) (int, error) {
	p := rd.plan
	number := ""
	for n, i := range p.account {
		v := strings.TrimSpace(f[i])
		if err := checkText(v, "account"); err != nil {
			return i, err
		}
		if len(p.account) > 1 && strings.IndexByte(v, ':') >= 0 {
			return i, fmt.Errorf("%w: an account split over several columns cannot hold ':'", ErrValue)
		}
		if n > 0 {
			number += ":"
		}
		number += v
	}
	rec.Account = rd.opts.Hasher.Account("csv:"+rd.m.Source, number)
	return -1, nil
}

func (p *plan) lineTypeOf(f []string) (formats.LineType, error) {
	if p.typeColumn < 0 {
		return formats.Payment, nil
	}
	v := strings.TrimSpace(f[p.typeColumn])
	if lt, ok := p.lineTypes[v]; ok {
		return lt, nil
	}
	if p.strictTypes {
		return "", fmt.Errorf("%w: %s is in none of payment_values, fee_values, return_values and settlement_values", ErrLineType, echo(v))
	}
	return formats.Payment, nil
}

// detail describes the record without personal data: its direction, or
// "zero amount", and the direction or type cell when the mapping itself lists
// that value, so that no free text from the file reaches it.
func (p *plan) detail(f []string, rec *formats.Record) string {
	d := "credit"
	if rec.Direction == formats.Debit {
		d = "debit"
	}
	if rec.Amount == 0 {
		d = "zero amount"
	}
	switch {
	case p.direction >= 0:
		return d + " (" + strings.TrimSpace(f[p.direction]) + ")"
	case p.typeColumn >= 0:
		if v := strings.TrimSpace(f[p.typeColumn]); p.lineTypes[v] != "" {
			return d + " (" + v + ")"
		}
	}
	return d
}

// echo quotes a cell for an error message, cut to maxEcho bytes.
func echo(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxEcho {
		s = s[:maxEcho] + "..."
	}
	return strconv.Quote(s)
}
