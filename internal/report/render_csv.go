package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
)

// csvHeader names the CSV columns: the run and which of its sides was
// empty (on every row, as a CSV has no headline), every Discrepancy field, then
// each side flattened with a ledger_ or statement_ prefix. Amounts appear
// twice, as signed minor units (_minor) and as a decimal in major units.
var csvHeader = []string{
	"run_id", "empty_side", "class", "break", "reason", "explanation", "reference", "currency",
	"difference_minor", "difference", "correction_key",
	"ledger_key", "ledger_kind", "ledger_file", "ledger_line",
	"ledger_amount_minor", "ledger_amount", "ledger_currency", "ledger_value_date",
	"statement_key", "statement_kind", "statement_file", "statement_line",
	"statement_amount_minor", "statement_amount", "statement_currency", "statement_value_date",
}

// writeCSV writes one row per discrepancy, in document order, after a
// header row. It streams: each row is built in one reused slice and
// written at once, so memory does not grow with the number of rows.
// output.WriteCSV takes every row up front, which for 100,000 rows means
// 2.6 million cells held at once; the rows here pass through the same
// output.SafeCell, so a cell that a spreadsheet would read as a formula is
// neutralised exactly as output.WriteCSV does (a test holds the two to the
// same bytes).
func writeCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	row := make([]string, len(csvHeader))
	if err := cw.Write(safeRow(row, csvHeader)); err != nil {
		return err
	}
	runID := strconv.FormatInt(r.RunID, 10)
	fields := make([]string, 0, len(csvHeader))
	for i := range r.Discrepancies {
		d := &r.Discrepancies[i]
		fields = append(fields[:0],
			runID, r.EmptySide, d.Class, strconv.FormatBool(d.Break), d.Reason, d.Explanation, d.Reference, d.Currency,
			strconv.FormatInt(d.Difference, 10), major(d.Difference, d.Currency), d.CorrectionKey)
		fields = appendSide(fields, d.Ledger)
		fields = appendSide(fields, d.Statement)
		if err := cw.Write(safeRow(row, fields)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
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
