package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/internal/money"
)

//go:embed render_html.tmpl
var pageSource string

// pageTemplate is parsed once. html/template escapes every value for the
// context it lands in (element text, attribute, SVG text), which is what
// keeps the other side's explanations and keys inert.
var pageTemplate = template.Must(template.New("page").Parse(pageSource))

// The chart's geometry in SVG user units. Bars start after the class label
// and are at most chartBarMax long; the label with count and amount follows
// the bar.
const (
	chartLabelWidth = 220
	chartBarMax     = 320
	chartRowHeight  = 36
	chartWidth      = 880
)

// page is what the template shows. Every text in it is already printable;
// html/template does the escaping.
type page struct {
	Title        string
	Headline     string // a side was empty; EmptyAlert when only one was
	EmptyAlert   bool
	Banner       string
	Verdict      string
	VerdictState string // "ok", "open" or "bad": the verdict's colour
	BreakClasses []pageBreakClass
	Facts        [][2]string
	Classes      []pageClass
	Bridges      []pageBridge
	Charts       []pageChart
	Groups       []pageGroup
	ChartWidth   int
	BarX         int
	TotalBreaks  int
	Omitted      int
	MaxListed    int
	Explained    []pageCount
	OutsideNote  string
	Ages         []AgeBucket
}

// pageClass is one row of the items-per-class table.
type pageClass struct {
	Name, Code, Meaning         string
	Break                       bool
	LedgerItems, StatementLines int64
}

// pageBreakClass is one class's breaks in one currency, for the table under
// the verdict: how many need a person and how many were acknowledged, the
// sum of their absolute differences, and their net in both conventions.
type pageBreakClass struct {
	Name, Code, Currency string
	Open, Acknowledged   int
	Worth, Net, Bank     string
}

// pageCount is a class named in words, with a count.
type pageCount struct {
	Name, Code string
	Count      int64
}

// pageBridge is one currency's bridge, its amounts already formatted.
type pageBridge struct {
	Currency    string
	Auditor     []pageAuditLine
	Lines       []pageLine // the totals, then a line per class
	Unexplained string
	Balanced    bool
	Outside     []pageLine // lines outside the totals
}

// pageAuditLine is one line of the auditor's form: its label, how many
// items, the amount in the ledger's convention and in the bank's, and its
// role (total, open, unexplained) for the style sheet.
type pageAuditLine struct {
	Label, Items, Ledger, Bank, Role string
}

// pageLine is one line of the bridge by class: a label or a class in words
// with its code, the amount in the ledger's convention, and the items.
type pageLine struct {
	Label, Code, Amount, Items string
}

// pageChart is one currency's bar chart.
type pageChart struct {
	Currency string
	Height   int
	Bars     []pageBar
}

// pageBar is one class's bar: its geometry and its label.
type pageBar struct {
	Name, Class     string
	Y, TextY, CodeY int
	Width           int
	LabelX          int
	Label           string
}

// pageGroup is one class's listed breaks.
type pageGroup struct {
	Name, Code, Meaning string
	Total, Shown        int
	Rows                []pageRow
}

// pageRow is one listed break. The keys are template.HTML with a line
// break allowed after each separator, and only there, so that a long key
// wraps between its parts and never inside a number.
type pageRow struct {
	Reference, LedgerKey, StatementKey, Correction template.HTML
	Ledger, Statement, Difference                  pageAmount
	LedgerWhere, StatementWhere                    string
	Explanation                                    string
	Acknowledged                                   bool
	Age                                            string
	CorrectionStatus                               string
	Rejection                                      string
}

// pageAmount is one amount in the ledger's convention and, below it, in
// the bank's; both empty for a side that is absent.
type pageAmount struct {
	Ledger, Bank string
}

// writeHTML renders the self-contained page: inline CSS, inline SVG, no
// script, font, image or link, so it opens the same from a mail
// attachment, a file share or a printer.
func writeHTML(w io.Writer, r *Report, t *tally) error {
	charts := breakCharts(r, t)
	p := page{
		Title:        fmt.Sprintf("Reconciliation run %d: %s, %s", r.RunID, orNone(r.Source), period(r)),
		Headline:     emptyHeadline(r),
		EmptyAlert:   r.OneSided(),
		Banner:       unexplainedBanner(r),
		Verdict:      verdict(r, t, grouped),
		BreakClasses: htmlBreakClasses(r, t),
		Facts:        htmlFacts(r),
		Bridges:      htmlBridges(r, t),
		Charts:       charts,
		MaxListed:    MaxListedBreaks,
		ChartWidth:   chartWidth,
		BarX:         chartLabelWidth,
		OutsideNote:  outsideNote,
		Ages:         t.ages,
	}
	switch {
	case !r.Balanced() || r.OneSided():
		p.VerdictState = "bad"
	case t.open > 0:
		p.VerdictState = "open"
	default:
		p.VerdictState = "ok"
	}
	for _, c := range explainedCounts(t) {
		cl, _ := LookupClass(c.Class)
		p.Explained = append(p.Explained, pageCount{cl.Name, cl.Code, c.Count})
	}
	for _, c := range r.Classes {
		cl, _ := LookupClass(c.Class)
		p.Classes = append(p.Classes, pageClass{cl.Name, c.Class, cl.Meaning, c.Break, c.LedgerItems, c.StatementLines})
	}
	groups, omitted, err := listBreaks(r, t, MaxListedBreaks)
	if err != nil {
		return err
	}
	p.Omitted = omitted
	for _, g := range groups {
		pg := pageGroup{Name: g.Class.Name, Code: g.Class.Code, Meaning: g.Class.Meaning, Total: g.Total, Shown: len(g.Listed)}
		for k := range g.Listed {
			pg.Rows = append(pg.Rows, htmlRow(&g.Listed[k]))
		}
		p.TotalBreaks += g.Total
		p.Groups = append(p.Groups, pg)
	}
	return pageTemplate.Execute(w, p)
}

// htmlBreakClasses sums the breaks per class and currency, in class order
// and then the bridges' currency order, for the table under the verdict.
func htmlBreakClasses(r *Report, t *tally) []pageBreakClass {
	var out []pageBreakClass
	for _, cl := range classTable {
		for _, cur := range breakCurrencies(r, t) {
			c := t.cells[classCell{cur, cl.Code}]
			if c == nil {
				continue
			}
			out = append(out, pageBreakClass{Name: cl.Name, Code: cl.Code, Currency: printable(cur), Open: c.open, Acknowledged: c.acked,
				Worth: grouped(total(c.abs, cur)), Net: grouped(total(c.net, cur)), Bank: bankSide(c.net, cur)})
		}
	}
	return out
}

// breakCurrencies returns the bridges' currencies in their order, then
// every other currency a break has, sorted.
func breakCurrencies(r *Report, t *tally) []string {
	out := bridgeCurrencies(r)
	var extra []string
	for k := range t.cells {
		if !slices.Contains(out, k.currency) && !slices.Contains(extra, k.currency) {
			extra = append(extra, k.currency)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

func htmlFacts(r *Report) [][2]string {
	return [][2]string{
		{"Run", strconv.FormatInt(r.RunID, 10)},
		{"Tenant", orNone(r.Tenant)},
		{"Source", orNone(r.Source)},
		{"Period", period(r)},
		{"Date window", fmt.Sprintf("± %d days", r.Window)},
		{"Amount tolerance", fmt.Sprintf("%d minor units", r.Tolerance)},
		{"Statement last date", orNone(r.StatementLastDate)},
		{"Created", r.CreatedAt.UTC().Format(time.RFC3339)},
		{"Compared", plural(r.LedgerItems, "ledger posting") + ", " + plural(r.StatementLines, "statement line")},
		{"Matched", plural(r.MatchedLedger, "ledger posting") + ", " + plural(r.MatchedStatement, "statement line")},
	}
}

func htmlBridges(r *Report, t *tally) []pageBridge {
	var out []pageBridge
	for i := range r.Bridge {
		b := &r.Bridge[i]
		cur := b.Currency
		diff := b.LedgerTotal.Sub(b.StatementTotal)
		g := func(t money.Total) string { return grouped(total(t, cur)) }
		pb := pageBridge{
			Currency:    printable(cur),
			Auditor:     htmlAuditor(auditorOf(r, t, i), cur),
			Unexplained: g(b.Unexplained),
			Balanced:    b.Unexplained.IsZero(),
			Lines: []pageLine{
				{Label: "Ledger total", Amount: g(b.LedgerTotal)},
				{Label: "Statement total", Amount: g(b.StatementTotal)},
				{Label: "Ledger minus statement", Amount: g(diff)},
			},
		}
		for _, d := range bridgeLines(b) {
			cl, _ := LookupClass(d.Class)
			pb.Lines = append(pb.Lines, pageLine{Label: cl.Name, Code: d.Class, Amount: g(d.Amount), Items: strconv.FormatInt(d.Count, 10)})
		}
		for _, d := range outsideLines(b) {
			cl, _ := LookupClass(d.Class)
			pb.Outside = append(pb.Outside, pageLine{Label: cl.Name, Code: d.Class, Amount: g(d.Amount), Items: strconv.FormatInt(d.Count, 10)})
		}
		out = append(out, pb)
	}
	return out
}

// htmlAuditor lays out the auditor's form: the ledger balance, the items
// that explain the difference, and the statement balance. The open and
// acknowledged breaks are always shown; the other item lines when they
// hold anything.
func htmlAuditor(a AuditorBridge, cur string) []pageAuditLine {
	line := func(label string, items int64, t money.Total, role string) pageAuditLine {
		n := ""
		if items >= 0 {
			n = strconv.FormatInt(items, 10)
		}
		return pageAuditLine{Label: label, Items: n, Ledger: grouped(total(t, cur)), Bank: bankSide(t, cur), Role: role}
	}
	out := []pageAuditLine{
		line("Ledger balance", -1, a.LedgerBalance, "total"),
		line("+ open breaks: need a person", a.Open.Count, a.Open.Amount, "open"),
		line("+ acknowledged breaks", a.Acknowledged.Count, a.Acknowledged.Amount, "item"),
	}
	if a.Explained.Count != 0 || !a.Explained.Amount.IsZero() {
		out = append(out, line("+ explained: need no one", a.Explained.Count, a.Explained.Amount, "item"))
	}
	if !a.WithinTolerance.Amount.IsZero() {
		out = append(out, line("+ matched within the tolerance", a.WithinTolerance.Count, a.WithinTolerance.Amount, "item"))
	}
	if !a.Unexplained.IsZero() {
		out = append(out, line("+ UNEXPLAINED", -1, a.Unexplained, "unexplained"))
	}
	return append(out, line("= Statement balance", -1, a.StatementBalance, "total"))
}

func htmlRow(d *Discrepancy) pageRow {
	row := pageRow{
		Reference:    breakable(orNone(d.Reference)),
		LedgerKey:    breakable(sideKey(d.Ledger)),
		StatementKey: breakable(sideKey(d.Statement)),
		Difference:   pageAmount{grouped(amount(d.Difference, d.Currency)), bankFigure(money.TotalOf(d.Difference), d.Currency)},
		Explanation:  orNone(d.Explanation),
		Correction:   breakable(orNone(d.CorrectionKey)),
		Acknowledged: d.Acknowledged,
		Rejection:    rejectionText(d),
	}
	if d.CorrectionStatus != "" && row.Rejection == "" {
		row.CorrectionStatus = "correction " + printable(d.CorrectionStatus)
	}
	if d.FirstSeen != "" {
		row.Age = fmt.Sprintf("first seen %s, %s old", printable(d.FirstSeen), plural(int64(d.AgeDays), "day"))
	}
	row.Ledger, row.LedgerWhere = sideCells(d.Ledger)
	row.Statement, row.StatementWhere = sideCells(d.Statement)
	return row
}

// breakable escapes a key or reference for the page and allows a line
// break after each ':' or '/', and nowhere else: a long key then wraps
// between its parts, and a trace number, a date or a masked account stays
// whole on one line, where it can be read and copied. Each part is a span
// that does not wrap, because a browser would otherwise also break after a
// hyphen ("2026-11-" and "02"); the text copied is the key unchanged. A
// part longer than maxWholePart is left free to wrap (the style sheet's
// overflow-wrap), so that a key of hundreds of characters cannot run over
// its neighbours.
func breakable(s string) template.HTML {
	var b strings.Builder
	part := func(p string) {
		if p == "" {
			return
		}
		if len(p) > maxWholePart {
			b.WriteString(template.HTMLEscapeString(p))
			return
		}
		b.WriteString(`<span class="part">`)
		b.WriteString(template.HTMLEscapeString(p))
		b.WriteString(`</span>`)
	}
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ':' || s[i] == '/' {
			part(s[start : i+1])
			b.WriteString("<wbr>")
			start = i + 1
		}
	}
	part(s[start:])
	return template.HTML(b.String()) // every part is escaped above
}

// maxWholePart is the longest part of a key that the page keeps on one
// line: 26 characters fit the narrowest key column printed on A4 (the
// reference's), and a trace number or an RRN is far shorter.
const maxWholePart = 26

// bankFigure is bankSide without the currency code, for the line below an
// amount that already names it.
func bankFigure(t money.Total, code string) string {
	f := bankSide(t, code)
	if c := " " + printable(code); strings.HasSuffix(f, c) && !strings.Contains(f, "(minor units)") {
		return strings.TrimSuffix(f, c)
	}
	return f
}

// sideCells shows one side as its amount and, below it, where it came
// from: "2026-11-27, clearing, day1.ach line 12".
func sideCells(s *Side) (pageAmount, string) {
	if s == nil {
		return pageAmount{Ledger: "(none)"}, ""
	}
	return pageAmount{grouped(amount(s.Amount, s.Currency)), bankFigure(money.TotalOf(s.Amount), s.Currency)},
		orNone(s.ValueDate) + ", " + origin(s)
}

// chartCell is the breaks of one class in one currency: how many, and the
// sum of their absolute differences. The absolute sum is the size of the
// problem; a signed sum would let a +100 and a -100 show as nothing.
type chartCell struct {
	count int64
	abs   money.Total
}

// breakCharts builds one bar chart per currency, from every break (not only
// the listed ones), in the bridges' order and then any other currency a
// break has. Bars are scaled within a currency only: amounts in two
// currencies are not comparable, so no bar is drawn against another
// currency's. The sums are exact Totals: many breaks near the amount cap
// pass the int64 range.
func breakCharts(r *Report, t *tally) []pageChart {
	var charts []pageChart
	for _, cur := range breakCurrencies(r, t) {
		row := make([]chartCell, len(classTable))
		for ci, cl := range classTable {
			if c := t.cells[classCell{cur, cl.Code}]; c != nil {
				row[ci] = chartCell{count: int64(c.open + c.acked), abs: c.abs}
			}
		}
		if ch, ok := chartFor(cur, row); ok {
			charts = append(charts, ch)
		}
	}
	return charts
}

// chartFor lays out the bars of one currency; ok is false when it has no
// breaks.
func chartFor(cur string, row []chartCell) (pageChart, bool) {
	var largest money.Total
	for _, c := range row {
		if c.abs.Cmp(largest) > 0 {
			largest = c.abs
		}
	}
	ch := pageChart{Currency: printable(cur)}
	for ci, c := range row {
		if c.count == 0 {
			continue
		}
		width := 2 // a break with a zero or tiny difference still shows
		if !largest.IsZero() {
			// abs*chartBarMax/largest is at most chartBarMax, as abs <= largest.
			q := new(big.Int).Mul(c.abs.Big(), big.NewInt(chartBarMax))
			width = max(width, int(q.Quo(q, largest.Big()).Int64()))
		}
		y := len(ch.Bars) * chartRowHeight
		ch.Bars = append(ch.Bars, pageBar{
			Name:   classTable[ci].Name,
			Class:  classTable[ci].Code,
			Y:      y + 4,
			TextY:  y + 18,
			CodeY:  y + 32,
			Width:  width,
			LabelX: chartLabelWidth + width + 8,
			Label:  plural(c.count, "break") + ", " + grouped(total(c.abs, cur)),
		})
	}
	ch.Height = len(ch.Bars)*chartRowHeight + 4
	return ch, len(ch.Bars) > 0
}
