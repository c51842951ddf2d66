package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
)

// HTML is the format of the self-contained page. The other formats are
// output.Table, output.CSV and output.JSON.
const HTML = "html"

// MaxListedBreaks is the most breaks that the table and the HTML page list
// one by one. Beyond it a listing stops helping a reader and only slows the
// terminal, the mail or the printer; the page says how many it left out,
// and the CSV and JSON forms always carry every discrepancy.
const MaxListedBreaks = 5000

// maxTextRunes bounds one displayed text (an explanation, a key, a file
// name) in the table and the page. These texts can come from the other
// side's files, and a megabyte-long "explanation" must not bury the report.
const maxTextRunes = 300

// Check returns nil when format is one that Write offers, and otherwise an
// error wrapping output.ErrFormat, so that a command can refuse a bad -o
// before it does any work.
func Check(format string) error {
	switch format {
	case output.Table, output.CSV, output.JSON, HTML:
		return nil
	}
	return fmt.Errorf("%w %q: use table, csv, json or html", output.ErrFormat, format)
}

// Write renders r in format: "table", "csv", "json" or "html". It validates
// r first (see Report.Validate) and writes nothing when r is invalid, so a
// report that contradicts itself is never shown as if it were sound.
func Write(w io.Writer, format string, r *Report) error {
	return WriteWith(w, format, r, CSVOptions{})
}

// WriteWith is Write with the CSV form's options: which discrepancies it
// lists. The other forms do not depend on them: the table and the page
// list the breaks and count the rest, and the JSON document carries every
// discrepancy.
//
// It reads the discrepancies twice (Each): once to check and sum them, and
// once to list them. What it holds meanwhile does not grow with their
// number, except the at most MaxListedBreaks breaks that the table and the
// page list.
func WriteWith(w io.Writer, format string, r *Report, o CSVOptions) error {
	if err := Check(format); err != nil {
		return err
	}
	t, err := r.validated()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	switch format {
	case output.Table:
		err = writeTable(bw, r, t)
	case output.CSV:
		err = writeCSV(bw, r, o)
	case output.JSON:
		err = writeJSON(bw, r, t)
	case HTML:
		err = writeHTML(bw, r, t)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// amount shows signed minor units in major units with the currency code
// ("-12.50 USD"). An unknown code is shown in minor units, saying so,
// rather than with a guessed exponent; the code is then the document's own
// text, so it is made printable.
func amount(minor int64, code string) string {
	return printable(money.FormatCode(minor, code))
}

// total is amount for a sum, which may pass the int64 range.
func total(t money.Total, code string) string {
	return printable(money.FormatTotalCode(t, code))
}

// grouped puts thousands separators into the leading number of a formatted
// amount, for people to read: "-1234567.89 USD" is "-1,234,567.89 USD" and
// "1234 (minor units) XXY" is "1,234 (minor units) XXY". The CSV and JSON
// forms never group: a spreadsheet or a program reads them.
func grouped(s string) string {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	n := j - i
	if n <= 3 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + n/3)
	b.WriteString(s[:i])
	first := n % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(s[i : i+first])
	for k := i + first; k < j; k += 3 {
		b.WriteByte(',')
		b.WriteString(s[k : k+3])
	}
	b.WriteString(s[j:])
	return b.String()
}

// bankSide shows a signed amount of the ledger's convention (a credit to
// the counterparty is positive) in our bank account's, the convention of a
// bank statement, where money in is positive: the same amount with its
// sign turned, grouped.
func bankSide(t money.Total, code string) string {
	return grouped(total(neg(t), code))
}

// printable makes a text safe to show to a person: control characters,
// Unicode format characters (bidirectional overrides, zero-width spaces)
// and line or paragraph separators are shown as Go escapes, invalid UTF-8
// bytes as \x escapes, and the text is cut after maxTextRunes runes. A key
// that hides a zero-width space, or an explanation that carries a terminal
// escape sequence or reverses the text around it, is then visible as what
// it is instead of acting on the reader's screen.
func printable(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	for i, n := 0, 0; i < len(s); n++ {
		if n == maxTextRunes {
			fmt.Fprintf(&b, "...[%d more bytes]", len(s)-i)
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s is short printable ASCII, the common case,
// which printable returns unchanged without allocating.
func isPlain(s string) bool {
	if len(s) > maxTextRunes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// breakGroup is the breaks of one class that a listing shows: Total is how
// many there are, Listed those shown, in document order.
type breakGroup struct {
	Class  Class
	Total  int
	Listed []Discrepancy
}

// listBreaks groups the breaks by class, in class order, and chooses at
// most limit of them to list, reading the discrepancies once more. The
// limit is shared fairly: every class with a break lists some, and a class
// with fewer breaks than its share gives the rest to the others. A global
// cut in class order would instead let one flooded class hide every break
// of the classes after it. It also returns how many breaks are left out.
func listBreaks(r *Report, t *tally, limit int) ([]breakGroup, int, error) {
	allot := share(t.breaks, limit)
	groups := make([]breakGroup, len(classTable))
	err := r.Each(func(d *Discrepancy) error {
		if !d.Break {
			return nil
		}
		ci, ok := classIndex[d.Class]
		if !ok {
			return fmt.Errorf("%w: a second reading met the unknown class %q", ErrInvalid, d.Class)
		}
		if g := &groups[ci]; len(g.Listed) < allot[ci] {
			g.Listed = append(g.Listed, *d)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	var out []breakGroup
	omitted := 0
	for ci, n := range t.breaks {
		if n == 0 {
			continue
		}
		g := groups[ci]
		g.Class, g.Total = classTable[ci], n
		omitted += n - len(g.Listed)
		out = append(out, g)
	}
	return out, omitted, nil
}

// share divides limit among the classes by water-filling: classes are
// served from the smallest total up, each taking at most an equal share of
// what is left, rounded up. The result never exceeds a class's total, sums
// to at most limit, and reaches limit whenever the totals do.
func share(totals []int, limit int) []int {
	order := make([]int, 0, len(totals))
	for i, t := range totals {
		if t > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return totals[order[a]] < totals[order[b]] })
	allot := make([]int, len(totals))
	left := limit
	for k, ci := range order {
		n := len(order) - k
		fair := (left + n - 1) / n
		allot[ci] = min(totals[ci], fair)
		left -= allot[ci]
	}
	return allot
}

// explainedCounts counts the discrepancies that are not breaks, per class
// in class order, for the one-line summary that stands in for their list.
func explainedCounts(t *tally) []ClassTotal {
	var out []ClassTotal
	for ci, n := range t.explained {
		if n > 0 {
			out = append(out, ClassTotal{Class: classTable[ci].Code, Count: n})
		}
	}
	return out
}

// bridgeLines returns a bridge's class lines that have a non-zero amount or
// count, in class order, whatever order the document holds them in.
func bridgeLines(b *Bridge) []ClassTotal {
	var out []ClassTotal
	for _, d := range b.Differences {
		if !d.Amount.IsZero() || d.Count != 0 {
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return classIndex[out[i].Class] < classIndex[out[j].Class] })
	return out
}

// unexplainedBanner is the loud line that opens the table and the page when
// a bridge does not balance, naming every unexplained amount.
func unexplainedBanner(r *Report) string {
	var parts []string
	for _, b := range r.Bridge {
		if !b.Unexplained.IsZero() {
			parts = append(parts, total(b.Unexplained, b.Currency))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "UNEXPLAINED DIFFERENCE: " + strings.Join(parts, ", ") +
		". Every discrepancy must be classified; this report does not balance."
}

// emptyHeadline is the line that opens the table and the page when a side
// had nothing in the period. One side empty is the loudest news a report
// can carry: every item of the other side is then a break, and the
// likeliest cause is a statement imported under another source or a period
// that misses the ledger's dates, not hundreds of lost payments.
func emptyHeadline(r *Report) string {
	what := "source " + orNone(r.Source) + " from " + period(r)
	switch r.EmptySide {
	case EmptyLedger:
		return "THE LEDGER SIDE IS EMPTY: the ledger has no postings of " + what + ", against " +
			plural(r.StatementLines, "statement line") + ". Check the source and the period before acting on any break; " +
			"no corrections were proposed."
	case EmptyStatement:
		return "THE STATEMENT SIDE IS EMPTY: no statement lines of " + what + ", against " +
			plural(r.LedgerItems, "ledger posting") + ". Check that the statement was imported, under this source; " +
			"no corrections were proposed."
	case EmptyBoth:
		return "NOTHING TO COMPARE: neither ledger postings nor statement lines of " + what + "."
	}
	return ""
}

// outsideLines returns a bridge's lines outside the totals that have a
// non-zero amount or count, in class order.
func outsideLines(b *Bridge) []ClassTotal {
	var out []ClassTotal
	for _, d := range b.OutsideTotals {
		if !d.Amount.IsZero() || d.Count != 0 {
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return classIndex[out[i].Class] < classIndex[out[j].Class] })
	return out
}

// outsideNote says what the lines outside the totals are, where they are
// shown.
const outsideNote = "Outside the totals: a statement whose balances do not add up shows its closing balance minus its opening balance " +
	"plus its booked entries, which is account state, not an item; a settlement total summarises lines the statement also lists one by one, " +
	"so its difference (the ledger's net of its day minus the total) is in neither total nor in the sum above."

// rejectionText says who rejected a break's correction, when and why; empty
// when it was not rejected. The operator and the reason are typed by
// people, so they are made printable.
func rejectionText(d *Discrepancy) string {
	j := d.Rejection
	if j == nil {
		return ""
	}
	who := orNone(j.Operator)
	if j.Login != "" && j.Login != j.Operator {
		who += " (login " + printable(j.Login) + ")"
	}
	return "Correction rejected by " + who + " on " + j.At.UTC().Format("2006-01-02") + ": " + orNone(j.Reason)
}

// period shows the compared dates.
func period(r *Report) string {
	return orNone(r.From) + " to " + orNone(r.To)
}

// orNone shows an empty text as "(none)" so that a reader can tell an
// absent value from a layout gap.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return printable(s)
}

// plural returns "1 break" or "2 breaks".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}
