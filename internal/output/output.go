// Package output renders command results as a table (tablewriter), JSON or
// CSV. CSV cells that a spreadsheet would read as a formula are neutralised.
package output

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// The output formats.
const (
	Table = "table"
	JSON  = "json"
	CSV   = "csv"
)

// ErrFormat means an output format this command does not offer.
var ErrFormat = errors.New("output: unsupported format")

// Check returns an error unless f is one of the formats.
func Check(f string) error {
	switch f {
	case Table, JSON, CSV:
		return nil
	}
	return fmt.Errorf("%w %q: use table, json or csv (html only for 'clearing reconcile' and 'clearing report')", ErrFormat, f)
}

// Rows is tabular data: a header and rows of cells of the same width.
type Rows struct {
	Header []string
	Rows   [][]string
}

// Add appends one row.
func (r *Rows) Add(cells ...string) { r.Rows = append(r.Rows, cells) }

// WriteTable draws rows as an ASCII table. ASCII rather than box drawing
// keeps cron mail and log files readable everywhere. The table is streamed:
// each column's width is measured over every cell first, as tablewriter
// would, and tablewriter then renders one row at a time instead of holding
// the whole table. A table of 5,000 listed breaks (reconcile's) otherwise
// costs about 50 MiB of heap while it renders.
func WriteTable(w io.Writer, r Rows) error {
	widths := tw.NewMapper[int, int]()
	for i, h := range r.Header {
		n := cellWidth(h)
		for _, row := range r.Rows {
			if i < len(row) {
				n = max(n, cellWidth(row[i]))
			}
		}
		widths.Set(i, n+2) // a space of padding on each side
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithStreaming(tw.StreamConfig{Enable: true}),
		tablewriter.WithWidths(tw.CellWidth{PerColumn: widths}),
	)
	if err := t.Start(); err != nil {
		return err
	}
	t.Header(toAny(r.Header)...)
	for _, row := range r.Rows {
		if err := t.Append(toAny(row)...); err != nil {
			return err
		}
	}
	return t.Close()
}

// cellWidth is the display width of a cell: that of its widest line.
func cellWidth(s string) int {
	n := 0
	for line := range strings.SplitSeq(s, "\n") {
		n = max(n, twwidth.Width(line))
	}
	return n
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// WriteCSV writes rows as CSV with a header line. Cells starting with =, +,
// - or @ (or a tab or carriage return) are prefixed with a single quote so
// that a spreadsheet shows them as text instead of evaluating them.
func WriteCSV(w io.Writer, r Rows) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(safeCells(r.Header)); err != nil {
		return err
	}
	for _, row := range r.Rows {
		if err := cw.Write(safeCells(row)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func safeCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = SafeCell(c)
	}
	return out
}

// SafeCell neutralises one CSV cell against formula injection. A plain
// decimal number ("-50", "-0.50") is left alone: a spreadsheet reads it as
// a number, which can hide no formula, and quoting it would turn every
// negative amount into text that no column sum counts.
func SafeCell(c string) string {
	if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && !plainNumber(c) {
		return "'" + c
	}
	return c
}

// plainNumber reports whether s is an optional minus sign, digits, and at
// most one decimal point between digits.
func plainNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasDot := strings.Cut(s, ".")
	digits := func(d string) bool {
		for i := 0; i < len(d); i++ {
			if d[i] < '0' || d[i] > '9' {
				return false
			}
		}
		return d != ""
	}
	return digits(intPart) && (!hasDot || digits(frac))
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Write renders in format f: v as JSON, or r as a table or CSV.
func Write(w io.Writer, f string, v any, r Rows) error {
	switch f {
	case JSON:
		return WriteJSON(w, v)
	case CSV:
		return WriteCSV(w, r)
	case Table, "":
		return WriteTable(w, r)
	}
	return Check(f)
}
