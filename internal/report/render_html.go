package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math/big"
	"sort"
	"strconv"
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
	chartLabelWidth = 200
	chartBarMax     = 320
	chartRowHeight  = 26
	chartWidth      = 860
)

// page is what the template shows. Every text in it is already printable;
// html/template does the escaping.
type page struct {
	Title       string
	Headline    string // a side was empty; EmptyAlert when only one was
	EmptyAlert  bool
	Banner      string
	Facts       [][2]string
	Classes     []pageClass
	Bridges     []pageBridge
	Charts      []pageChart
	Groups      []pageGroup
	ChartWidth  int
	BarX        int
	TotalBreaks int
	Omitted     int
	MaxListed   int
	Explained   []ClassTotal
	OutsideNote string
	Ages        []AgeBucket
}

// pageClass is one row of the items-per-class table.
type pageClass struct {
	Code, Meaning               string
	Break                       bool
	LedgerItems, StatementLines int64
}

// pageBridge is one currency's bridge, its amounts already formatted.
type pageBridge struct {
	Currency    string
	Lines       [][3]string // label, amount, items
	Unexplained string
	Balanced    bool
	Outside     [][3]string // lines outside the totals: class, difference, items
}

// pageChart is one currency's bar chart.
type pageChart struct {
	Currency string
	Height   int
	Bars     []pageBar
}

// pageBar is one class's bar: its geometry and its label.
type pageBar struct {
	Class    string
	Y, TextY int
	Width    int
	LabelX   int
	Label    string
}

// pageGroup is one class's listed breaks.
type pageGroup struct {
	Code, Meaning string
	Total, Shown  int
	Rows          []pageRow
}

// pageRow is one listed break.
type pageRow struct {
	Reference, LedgerKey, StatementKey  string
	Ledger, Statement                   string
	LedgerWhere, StatementWhere         string
	Difference, Explanation, Correction string
}

// writeHTML renders the self-contained page: inline CSS, inline SVG, no
// script, font, image or link, so it opens the same from a mail
// attachment, a file share or a printer.
func writeHTML(w io.Writer, r *Report) error {
	charts := breakCharts(r)
	p := page{
		Title:       fmt.Sprintf("Reconciliation run %d: %s, %s", r.RunID, orNone(r.Source), period(r)),
		Headline:    emptyHeadline(r),
		EmptyAlert:  r.OneSided(),
		Banner:      unexplainedBanner(r),
		Facts:       htmlFacts(r),
		Bridges:     htmlBridges(r),
		Charts:      charts,
		MaxListed:   MaxListedBreaks,
		ChartWidth:  chartWidth,
		BarX:        chartLabelWidth,
		Explained:   explainedCounts(r),
		OutsideNote: outsideNote,
		Ages:        r.Ages(),
	}
	for _, c := range r.Classes {
		cl, _ := LookupClass(c.Class)
		p.Classes = append(p.Classes, pageClass{c.Class, cl.Meaning, c.Break, c.LedgerItems, c.StatementLines})
	}
	groups, omitted := listBreaks(r, MaxListedBreaks)
	p.Omitted = omitted
	for _, g := range groups {
		pg := pageGroup{Code: g.Class.Code, Meaning: g.Class.Meaning, Total: g.Total, Shown: len(g.Listed)}
		for _, i := range g.Listed {
			pg.Rows = append(pg.Rows, htmlRow(&r.Discrepancies[i]))
		}
		p.TotalBreaks += g.Total
		p.Groups = append(p.Groups, pg)
	}
	return pageTemplate.Execute(w, p)
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

func htmlBridges(r *Report) []pageBridge {
	var out []pageBridge
	for i := range r.Bridge {
		b := &r.Bridge[i]
		diff := b.LedgerTotal.Sub(b.StatementTotal)
		pb := pageBridge{
			Currency: printable(b.Currency),
			Lines: [][3]string{
				{"Ledger total", total(b.LedgerTotal, b.Currency), ""},
				{"Statement total", total(b.StatementTotal, b.Currency), ""},
				{"Ledger minus statement", total(diff, b.Currency), ""},
			},
			Unexplained: total(b.Unexplained, b.Currency),
			Balanced:    b.Unexplained.IsZero(),
		}
		for _, d := range bridgeLines(b) {
			pb.Lines = append(pb.Lines, [3]string{d.Class, total(d.Amount, b.Currency), strconv.FormatInt(d.Count, 10)})
		}
		for _, d := range outsideLines(b) {
			pb.Outside = append(pb.Outside, [3]string{d.Class, total(d.Amount, b.Currency), strconv.FormatInt(d.Count, 10)})
		}
		out = append(out, pb)
	}
	return out
}

func htmlRow(d *Discrepancy) pageRow {
	row := pageRow{
		Reference:    orNone(d.Reference),
		LedgerKey:    sideKey(d.Ledger),
		StatementKey: sideKey(d.Statement),
		Difference:   amount(d.Difference, d.Currency),
		Explanation:  orNone(d.Explanation),
		Correction:   orNone(d.CorrectionKey),
	}
	row.Ledger, row.LedgerWhere = sideCells(d.Ledger)
	row.Statement, row.StatementWhere = sideCells(d.Statement)
	return row
}

// sideCells shows one side as its amount and, below it, where it came
// from: "2026-11-27, clearing, day1.ach line 12".
func sideCells(s *Side) (string, string) {
	if s == nil {
		return "(none)", ""
	}
	return amount(s.Amount, s.Currency), orNone(s.ValueDate) + ", " + origin(s)
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
func breakCharts(r *Report) []pageChart {
	cells := map[string][]chartCell{}
	var order []string
	for _, b := range r.Bridge {
		if _, ok := cells[b.Currency]; !ok {
			cells[b.Currency] = make([]chartCell, len(classTable))
			order = append(order, b.Currency)
		}
	}
	var extra []string
	for i := range r.Discrepancies {
		d := &r.Discrepancies[i]
		if !d.Break {
			continue
		}
		row, ok := cells[d.Currency]
		if !ok {
			row = make([]chartCell, len(classTable))
			cells[d.Currency] = row
			extra = append(extra, d.Currency)
		}
		c := &row[classIndex[d.Class]]
		c.count++
		c.abs = c.abs.Add(money.TotalOf(d.Difference).Abs())
	}
	sort.Strings(extra)
	var charts []pageChart
	for _, cur := range append(order, extra...) {
		if ch, ok := chartFor(cur, cells[cur]); ok {
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
			Class:  classTable[ci].Code,
			Y:      y + 4,
			TextY:  y + 18,
			Width:  width,
			LabelX: chartLabelWidth + width + 8,
			Label:  plural(c.count, "break") + ", " + total(c.abs, cur),
		})
	}
	ch.Height = len(ch.Bars)*chartRowHeight + 4
	return ch, len(ch.Bars) > 0
}
