package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/internal/output"
)

// explanationWidth is where the table wraps an explanation, so that a long
// sentence does not make a break's block wider than its keys already do
// (about 110 columns, which a terminal or a mail reader shows whole).
const explanationWidth = 72

// writeTable renders the terminal form: a headline when a side is empty, a
// banner when a bridge does not balance, the run's facts, the counts per class, the bridge per currency,
// then the breaks grouped by class. Each class is one two-column table in
// which a break is a block of field and value rows, rather than one row of
// a wide table: a break's keys alone are up to 80 characters, and eight
// columns side by side would be about 250 wide, which neither a terminal
// nor a mail reader shows whole. One table per class rather than per break
// because tablewriter costs about half a megabyte of allocation per table
// (docs/report.md, Decisions).
func writeTable(w io.Writer, r *Report, t *tally) error {
	ew := &errWriter{w: w}
	if headline := emptyHeadline(r); headline != "" {
		ew.printf("%s\n\n", headline)
	}
	if banner := unexplainedBanner(r); banner != "" {
		ew.printf("%s\n\n", banner)
	}
	ew.printf("%s\n\n", wrap(verdict(r, t, func(s string) string { return s }), 100))
	writeFacts(ew, r)
	if ew.err != nil {
		return ew.err
	}
	if err := writeClassCounts(ew, r); err != nil {
		return err
	}
	if err := writeBridges(ew, r, t); err != nil {
		return err
	}
	return writeBreakRecords(ew, r, t)
}

// writeFacts writes the header block: what was compared and how.
func writeFacts(ew *errWriter, r *Report) {
	ew.printf("Reconciliation run %d\n", r.RunID)
	facts := [][2]string{
		{"tenant", orNone(r.Tenant)},
		{"source", orNone(r.Source)},
		{"period", period(r)},
		{"window", fmt.Sprintf("+/- %d days", r.Window)},
		{"tolerance", fmt.Sprintf("%d minor units", r.Tolerance)},
		{"statement last date", orNone(r.StatementLastDate)},
		{"created", r.CreatedAt.UTC().Format(time.RFC3339)},
		{"compared", fmt.Sprintf("%s, %s", plural(r.LedgerItems, "ledger posting"), plural(r.StatementLines, "statement line"))},
		{"matched", fmt.Sprintf("%s, %s", plural(r.MatchedLedger, "ledger posting"), plural(r.MatchedStatement, "statement line"))},
	}
	for _, f := range facts {
		ew.printf("  %-20s %s\n", f[0], f[1])
	}
	ew.printf("\n")
}

func writeClassCounts(ew *errWriter, r *Report) error {
	ew.printf("Items per class\n")
	rows := output.Rows{Header: []string{"class", "needs a person", "ledger items", "statement lines"}}
	for _, c := range r.Classes {
		person := "no"
		if c.Break {
			person = "yes"
		}
		rows.Add(c.Class, person, strconv.FormatInt(c.LedgerItems, 10), strconv.FormatInt(c.StatementLines, 10))
	}
	return ew.table(rows)
}

// writeBridges writes one table per currency. The unexplained line is the
// last row; when it is not zero its label says so in capitals and the
// banner is repeated above the table, where a reader of the bridge looks.
func writeBridges(ew *errWriter, r *Report, t *tally) error {
	if len(r.Bridge) == 0 {
		ew.printf("Bridge: no currencies compared.\n\n")
		return ew.err
	}
	for i := range r.Bridge {
		b := &r.Bridge[i]
		cur := printable(b.Currency)
		ew.printf("Bridge %s (ledger minus statement; a credit to the counterparty is positive)\n", cur)
		if !b.Unexplained.IsZero() {
			ew.printf("UNEXPLAINED DIFFERENCE IN %s: %s. Every discrepancy must be classified; this bridge does not balance.\n",
				cur, total(b.Unexplained, b.Currency))
		}
		if err := writeAuditor(ew, auditorOf(r, t, i), b.Currency); err != nil {
			return err
		}
		ew.printf("By class, ledger minus statement:\n")
		rows := output.Rows{Header: []string{"line", "amount", "items"}}
		rows.Add("ledger total", total(b.LedgerTotal, b.Currency), "")
		rows.Add("statement total", total(b.StatementTotal, b.Currency), "")
		rows.Add("ledger minus statement", total(b.LedgerTotal.Sub(b.StatementTotal), b.Currency), "")
		for _, d := range bridgeLines(b) {
			rows.Add(d.Class, total(d.Amount, b.Currency), strconv.FormatInt(d.Count, 10))
		}
		label := "unexplained"
		if !b.Unexplained.IsZero() {
			label = "UNEXPLAINED: DOES NOT BALANCE"
		}
		rows.Add(label, total(b.Unexplained, b.Currency), "")
		if err := ew.table(rows); err != nil {
			return err
		}
		if lines := outsideLines(b); len(lines) > 0 {
			ew.printf("%s\n", wrap(outsideNote, 100))
			rows := output.Rows{Header: []string{"outside the totals", "difference", "items"}}
			for _, d := range lines {
				rows.Add(d.Class, total(d.Amount, b.Currency), strconv.FormatInt(d.Count, 10))
			}
			if err := ew.table(rows); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeAuditor writes one currency's bridge in the auditor's form: the
// ledger balance, plus the items signed statement minus ledger, is the
// statement balance. The open and acknowledged breaks are always shown,
// the other item lines when they hold anything.
func writeAuditor(ew *errWriter, a AuditorBridge, cur string) error {
	ew.printf("Ledger balance plus open items equals statement balance (items signed statement minus ledger):\n")
	rows := output.Rows{Header: []string{"line", "items", "amount"}}
	n := func(c int64) string { return strconv.FormatInt(c, 10) }
	rows.Add("ledger balance", "", total(a.LedgerBalance, cur))
	rows.Add("+ open breaks (need a person)", n(a.Open.Count), total(a.Open.Amount, cur))
	rows.Add("+ acknowledged breaks", n(a.Acknowledged.Count), total(a.Acknowledged.Amount, cur))
	if a.Explained.Count != 0 || !a.Explained.Amount.IsZero() {
		rows.Add("+ explained (need no one)", n(a.Explained.Count), total(a.Explained.Amount, cur))
	}
	if !a.WithinTolerance.Amount.IsZero() {
		rows.Add("+ matched within the tolerance", n(a.WithinTolerance.Count), total(a.WithinTolerance.Amount, cur))
	}
	if !a.Unexplained.IsZero() {
		rows.Add("+ UNEXPLAINED", "", total(a.Unexplained, cur))
	}
	rows.Add("= statement balance", "", total(a.StatementBalance, cur))
	return ew.table(rows)
}

// writeBreakRecords lists the breaks grouped by class, at most
// MaxListedBreaks of them, and then summarises the explained discrepancies
// in one line: they need no one, their sums are in the bridge, and the CSV
// and JSON forms list each of them.
func writeBreakRecords(ew *errWriter, r *Report, t *tally) error {
	groups, omitted, err := listBreaks(r, t, MaxListedBreaks)
	if err != nil {
		return err
	}
	total, acked := t.open+t.acked, t.acked
	switch {
	case total == 0:
		ew.printf("Breaks: none.\n")
	case acked == 0:
		ew.printf("Breaks: %d, each needs a person.\n", total)
	case acked == total:
		ew.printf("Breaks: %d, every one acknowledged: none needs a person.\n", total)
	default:
		ew.printf("Breaks: %d, %d of them acknowledged; the others need a person.\n", total, acked)
	}
	if total > 0 {
		ew.printf("By age, days since first seen:")
		for _, a := range t.ages {
			ew.printf(" %s: %d", a.Bucket, a.Breaks)
		}
		ew.printf(".\n")
	}
	if omitted > 0 {
		ew.printf("%d breaks are not listed here (at most %d are); -o csv or -o json lists every one.\n", omitted, MaxListedBreaks)
	}
	if len(groups) > 0 {
		ew.printf("\n")
	}
	for _, g := range groups {
		ew.printf("%s: %s", g.Class.Code, plural(int64(g.Total), "break"))
		if len(g.Listed) < g.Total {
			ew.printf(", %d listed", len(g.Listed))
		}
		ew.printf(" (%s)\n", g.Class.Meaning)
		rows := output.Rows{Header: []string{"field", "value"}}
		for k := range g.Listed {
			if k > 0 {
				rows.Add("", "")
			}
			rows.Rows = append(rows.Rows, breakRecord(&g.Listed[k])...)
		}
		if err := ew.table(rows); err != nil {
			return err
		}
	}
	if ex := explainedCounts(t); len(ex) > 0 {
		if len(groups) == 0 {
			ew.printf("\n")
		}
		parts := make([]string, len(ex))
		for i, c := range ex {
			parts[i] = fmt.Sprintf("%s %d", c.Class, c.Count)
		}
		ew.printf("Explained, not listed: %s.\nThey need no one; the bridge includes them, and -o csv or -o json lists each.\n",
			strings.Join(parts, ", "))
	}
	return ew.err
}

// breakRecord is one break as field and value rows, in the order the
// evidence is read: what it is, the two sides, the difference, why, and the
// key of the correction that would resolve it.
func breakRecord(d *Discrepancy) [][]string {
	return [][]string{
		{"reference", orNone(d.Reference)},
		{"reason", orNone(d.Reason)},
		{"ledger key", sideKey(d.Ledger)},
		{"statement key", sideKey(d.Statement)},
		{"ledger", sideEvidence(d.Ledger)},
		{"statement", sideEvidence(d.Statement)},
		{"difference", amount(d.Difference, d.Currency)},
		{"explanation", wrap(orNone(d.Explanation), explanationWidth)},
		{"correction key", correctionCell(d)},
		{"status", breakStatus(d)},
	}
}

// correctionCell is the correction key and, when it has one, the
// correction's status; a rejected correction says who rejected it and why.
func correctionCell(d *Discrepancy) string {
	c := orNone(d.CorrectionKey)
	if rej := rejectionText(d); rej != "" {
		return c + "\n" + wrap(rej, explanationWidth)
	}
	if d.CorrectionStatus != "" {
		c += "\ncorrection " + printable(d.CorrectionStatus)
	}
	return c
}

// breakStatus says whether the break needs a person, and how long the
// break inventory has known it.
func breakStatus(d *Discrepancy) string {
	s := "open: needs a person"
	if d.Acknowledged {
		s = "acknowledged: needs no one until its amount changes"
	}
	if d.FirstSeen != "" {
		// The age, not the date: the date is in the page, the CSV and the
		// JSON, and a transcript of the table stays the same from day to
		// day.
		s += "; " + plural(int64(d.AgeDays), "day") + " old"
	}
	return s
}

func sideKey(s *Side) string {
	if s == nil {
		return "(none)"
	}
	return orNone(s.Key)
}

// sideEvidence shows one side's amount, value date, kind and origin on one
// line: "125.00 USD on 2026-11-27 (clearing, day1.ach line 12)".
func sideEvidence(s *Side) string {
	if s == nil {
		return "(none)"
	}
	return fmt.Sprintf("%s on %s (%s)", amount(s.Amount, s.Currency), orNone(s.ValueDate), origin(s))
}

// origin names a side's kind and, when it came from a file, the file and
// line. A posting made by a correction or a settlement has no file.
func origin(s *Side) string {
	o := orNone(s.Kind)
	if s.File != "" {
		o += ", " + printable(s.File)
	}
	if s.Line > 0 {
		o += " line " + strconv.FormatInt(s.Line, 10)
	}
	return o
}

// wrap breaks text into lines of at most width runes at spaces; a word
// longer than width is cut. The table shows each line of a cell on its own
// row, so the record keeps its width.
func wrap(text string, width int) string {
	var lines []string
	var line []rune
	for _, field := range strings.Fields(text) {
		word := []rune(field)
		for len(word) > width {
			if len(line) > 0 {
				lines, line = append(lines, string(line)), nil
			}
			lines, word = append(lines, string(word[:width])), word[width:]
		}
		switch {
		case len(line) == 0:
			line = word
		case len(line)+1+len(word) <= width:
			line = append(append(line, ' '), word...)
		default:
			lines, line = append(lines, string(line)), word
		}
	}
	if len(line) > 0 {
		lines = append(lines, string(line))
	}
	return strings.Join(lines, "\n")
}

// errWriter keeps the first write error, so that a sequence of writes can
// be checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// table draws rows with output.WriteTable followed by a blank line.
func (e *errWriter) table(rows output.Rows) error {
	if e.err != nil {
		return e.err
	}
	if e.err = output.WriteTable(e.w, rows); e.err == nil {
		e.printf("\n")
	}
	return e.err
}
