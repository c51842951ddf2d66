package bai2

import (
	"fmt"
	"strings"

	"github.com/clearing-dev/clearing/internal/money"
)

// maxTextBytes bounds a generated detail's free text.
const maxTextBytes = 4096

// record writes one logical record as physical records of at most
// RecordLength bytes, continuing it with 88 records where it does not fit,
// and adds the physical records written to each of counts. A field goes
// whole onto a line, except the free text of a detail, which is cut where
// the line is full.
func (g *generator) record(code string, fields []string, textual bool, counts ...*genTotals) {
	limit := g.opts.RecordLength
	b := append(g.buf[:0], code...)
	start, lines := 0, int64(1)                                     // start is where the current physical line begins in b
	fits := func(n int) bool { return len(b)-start+1+n+1 <= limit } // ",field/"
	breakLine := func() {
		b = append(b, "/\n88"...)
		start = len(b) - 2
		lines++
	}
	for i, f := range fields {
		if !fits(len(f)) && len(b)-start > 2 {
			breakLine()
		}
		for textual && i == len(fields)-1 && !fits(len(f)) {
			n := limit - (len(b) - start) - 2
			b = append(b, ',')
			b = append(b, f[:n]...)
			f = f[n:]
			breakLine()
		}
		b = append(b, ',')
		b = append(b, f...)
	}
	b = append(b, "/\n"...)
	g.buf = b
	_, _ = g.w.Write(b) // bufio.Writer keeps the first error, and Flush returns it
	for _, c := range counts {
		c.records += lines
	}
}

// checkLine refuses a line that would not read back as written.
func checkLine(l Line) error {
	if err := checkGenField(l.Account, "account", true); err != nil {
		return err
	}
	if _, err := money.LookupCurrency(l.Currency); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidLine, err)
	}
	if l.Date.IsZero() {
		return fmt.Errorf("%w: no as-of date", ErrInvalidLine)
	}
	tc, err := detailType(l.TypeCode, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidLine, err)
	}
	if l.Amount < 0 || (tc.Direction == "" && l.Amount != 0) {
		return fmt.Errorf("%w: amount %d for type code %03d", ErrInvalidLine, l.Amount, l.TypeCode)
	}
	if err := checkID([]byte(l.BankReference), "bank reference"); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidLine, err)
	}
	if err := checkGenField(l.BankReference, "bank reference", false); err != nil {
		return err
	}
	if err := checkGenField(l.CustomerReference, "customer reference", false); err != nil {
		return err
	}
	if len(l.Text) > maxTextBytes || !printable(l.Text) {
		return fmt.Errorf("%w: text is longer than %d bytes or not printable ASCII", ErrInvalidLine, maxTextBytes)
	}
	if strings.HasSuffix(l.Text, "/") {
		return fmt.Errorf("%w: text ends with '/', which reads as the record's end", ErrInvalidLine)
	}
	return nil
}

// checkGenField refuses values that would break the record syntax or not
// read back: empty required values, surrounding spaces, commas, slashes and
// bytes that are not printable ASCII.
func checkGenField(v, what string, required bool) error {
	switch {
	case required && v == "":
		return fmt.Errorf("%w: empty %s", ErrInvalidLine, what)
	case v != strings.TrimSpace(v):
		return fmt.Errorf("%w: %s has surrounding spaces", ErrInvalidLine, what)
	case len(v) > maxIDBytes || !printable(v):
		return fmt.Errorf("%w: %s is longer than %d bytes or not printable ASCII", ErrInvalidLine, what, maxIDBytes)
	case strings.ContainsAny(v, ",/"):
		return fmt.Errorf("%w: %s contains ',' or '/'", ErrInvalidLine, what)
	}
	return nil
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
