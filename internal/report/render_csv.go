package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
)

// csvHeader names the CSV columns: the run and which of its sides was
// empty (on every row, as a CSV has no headline), every Discrepancy field, then
// each side flattened with a ledger_ or statement_ prefix. Amounts appear
// twice, as signed minor units (_minor) and as a decimal in major units.
var csvHeader = []string{
	"run_id", "empty_side", "class", "break", "acknowledged", "needs_person", "first_seen", "age_days",
	"reason", "explanation", "reference", "currency",
	"difference_minor", "difference", "correction_key", "correction_status", "rejected_by", "rejection_reason",
	"ledger_key", "ledger_kind", "ledger_file", "ledger_line",
	"ledger_amount_minor", "ledger_amount", "ledger_currency", "ledger_value_date",
	"statement_key", "statement_kind", "statement_file", "statement_line",
	"statement_amount_minor", "statement_amount", "statement_currency", "statement_value_date",
}

// csvIdentifiers are the columns that hold identifiers: a reference, a key,
// a file name, a login or a reason typed by a person. A spreadsheet would
// read one made of digits as a number and show a trace number as
// 1.21043E+14, losing its last digits and its leading zeros, so such a cell
// is kept as text (keepText). The amount, count and date columns are left
// to be read as numbers and dates.
var csvIdentifiers = func() []bool {
	text := map[string]bool{"reference": true, "correction_key": true, "rejected_by": true, "rejection_reason": true,
		"ledger_key": true, "ledger_file": true, "statement_key": true, "statement_file": true}
	out := make([]bool, len(csvHeader))
	for i, h := range csvHeader {
		out[i] = text[h]
	}
	return out
}()

// CSVOptions choose what the CSV form lists.
type CSVOptions struct {
	// All lists every discrepancy, the explained ones included; by default
	// the CSV lists only the breaks, which is what a person works through.
	All bool
}

// writeCSV writes one row per break, or per discrepancy with o.All, in
// document order, after a header row. It streams: each row is built in one
// reused slice and written at once, so memory does not grow with the
// number of rows. output.WriteCSV takes every row up front, which for
// 100,000 rows means 2.6 million cells held at once; the rows here pass
// through the same output.SafeCell, so a cell that a spreadsheet would read
// as a formula is neutralised exactly as output.WriteCSV does (a test holds
// the two to the same bytes).
func writeCSV(w io.Writer, r *Report, o CSVOptions) error {
	cw := csv.NewWriter(w)
	row := make([]string, len(csvHeader))
	if err := cw.Write(safeRow(row, csvHeader)); err != nil {
		return err
	}
	runID := strconv.FormatInt(r.RunID, 10)
	fields := make([]string, 0, len(csvHeader))
	err := r.Each(func(d *Discrepancy) error {
		if !d.Break && !o.All {
			return nil
		}
		fields = csvFields(fields[:0], runID, r, d)
		return cw.Write(safeRow(row, fields))
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// csvFields appends d's cells, in csvHeader's order, to fields: each
// identifier kept as text, not yet neutralised (safeRow does that).
func csvFields(fields []string, runID string, r *Report, d *Discrepancy) []string {
	var by, why string
	if d.Rejection != nil {
		by, why = d.Rejection.Operator, d.Rejection.Reason
	}
	age := ""
	if d.FirstSeen != "" {
		age = strconv.Itoa(d.AgeDays)
	}
	fields = append(fields,
		runID, r.EmptySide, d.Class, yesNo(d.Break), yesNo(d.Acknowledged), yesNo(d.Break && !d.Acknowledged), d.FirstSeen, age,
		d.Reason, d.Explanation, d.Reference, d.Currency,
		strconv.FormatInt(d.Difference, 10), major(d.Difference, d.Currency), d.CorrectionKey, d.CorrectionStatus, by, why)
	fields = appendSide(fields, d.Ledger)
	fields = appendSide(fields, d.Statement)
	for k := range fields {
		if csvIdentifiers[k] {
			fields[k] = keepText(fields[k])
		}
	}
	return fields
}

// yesNo is a flag as the CSV shows it.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// keepText returns an identifier that a spreadsheet would read as a number,
// a date or a time with a leading apostrophe, the mark that makes Excel
// and LibreOffice Calc take a cell as text. It is the mark output.SafeCell
// already puts before a would-be formula, so a reader of these files meets
// one convention; a formula such as ="..." would be one itself, and
// SafeCell would neutralise it
// (docs/decisions/csv-identifiers-as-text.md).
func keepText(s string) string {
	if numberLike(s) {
		return "'" + s
	}
	return s
}

// numberLike reports whether a spreadsheet opening a CSV would turn s into
// a number, a date or a time: digits with an optional sign, decimal
// separators, exponent or percent sign ("091000010000005", "1.5E3",
// "12%"), or digits joined by '-', '/', '.' or ':' into up to three groups
// ("2026-11-02", "11/02", "12:30"). Leading and trailing spaces do not stop
// a spreadsheet, so they do not stop this.
func numberLike(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	s = strings.TrimSuffix(s, "%")
	if mantissa, exp, ok := strings.Cut(strings.ToLower(s), "e"); ok {
		exp = strings.TrimLeft(exp, "+-")
		return digitsAnd(mantissa, ".,") && mantissa[0] >= '0' && mantissa[0] <= '9' && digitsAnd(exp, "")
	}
	if digitsAnd(s, ".,") && s[0] >= '0' && s[0] <= '9' {
		return true
	}
	groups := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '/' || r == '.' || r == ':' })
	// One separator between groups, none before or after them.
	if len(groups) < 2 || len(groups) > 3 || len(s) != len(strings.Join(groups, "-")) {
		return false
	}
	for _, g := range groups {
		if !digitsAnd(g, "") {
			return false
		}
	}
	return true
}

// digitsAnd reports whether s is non-empty and holds only digits and the
// bytes of extra.
func digitsAnd(s, extra string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && !strings.ContainsRune(extra, rune(s[i])) {
			return false
		}
	}
	return true
}

// appendSide flattens one side into eight cells, all empty when the side is
// absent (an item the ledger or the statement does not have).
func appendSide(fields []string, s *Side) []string {
	if s == nil {
		return append(fields, "", "", "", "", "", "", "", "")
	}
	return append(fields, s.Key, s.Kind, s.File, strconv.FormatInt(s.Line, 10),
		strconv.FormatInt(s.Amount, 10), major(s.Amount, s.Currency), s.Currency, s.ValueDate)
}

// major is the decimal in major units without the code, or an empty cell
// when the currency is unknown: a guessed exponent would show a wrong
// amount, and the minor-unit column is still exact.
func major(minor int64, code string) string {
	c, err := money.LookupCurrency(code)
	if err != nil {
		return ""
	}
	return money.Format(minor, c)
}

// safeRow neutralises each cell of fields into dst, which has the same
// length, and returns dst.
func safeRow(dst, fields []string) []string {
	for i, f := range fields {
		dst[i] = output.SafeCell(f)
	}
	return dst
}
