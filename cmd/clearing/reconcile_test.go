package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/report"
)

// statementMapping reads the test statements: CSV lines keyed by id, matched
// on ref, signed amounts in minor units seen from the counterparty.
const statementMapping = `
source = "ach"
key = ["id"]
reference = "ref"
amount = "amount"
amount_unit = "minor"
currency = "currency"
value_date = "date"
date_layout = "2006-01-02"
type_column = "type"
payment_values = ["payment"]
fee_values = ["fee"]
return_values = ["return"]
settlement_values = ["settlement"]
`

// stmtLine is one line of a test statement.
type stmtLine struct {
	id, ref  string
	amount   int64 // signed: a credit to the counterparty is positive
	currency string
	date     string
	typ      string
}

func lineOf(e ach.Entry) stmtLine {
	return stmtLine{id: "L" + e.Trace, ref: e.Trace, amount: signed(e), currency: "USD",
		date: e.EffectiveDate.Format("2006-01-02"), typ: "payment"}
}

func (c *cli) statement(name string, lines []stmtLine) string {
	c.t.Helper()
	var b strings.Builder
	b.WriteString("id,ref,amount,currency,date,type\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "%s,%s,%d,%s,%s,%s\n", l.id, l.ref, l.amount, l.currency, l.date, l.typ)
	}
	return c.file(name, []byte(b.String()))
}

// reconcile runs 'clearing reconcile -o json' on source ach, with flags,
// and returns the report; want -1 accepts 0 and 3.
func (c *cli) reconcile(want int, from, to string, flags ...string) report.Report {
	c.t.Helper()
	r := c.run(append([]string{"-o", "json", "reconcile", "--source", "ach", "--from", from, "--to", to}, flags...)...)
	if (want >= 0 && r.code != want) || (want < 0 && r.code != 0 && r.code != 3) {
		c.t.Fatalf("want exit %d\n%v", want, r)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		c.t.Fatalf("reconcile output is not the report document: %v\n%v", err, r)
	}
	return rep
}

// planted is a ledger and a statement that differ in every way the classes
// name, and what each reference should end as.
type planted struct {
	live     []ach.Entry
	day      string
	mapping  string
	stmt     string
	expected map[string]string // reference -> class
}

func plant(t *testing.T, c *cli) planted {
	t.Helper()
	es := liveOnly(entries(21, 60))[:40]
	day := es[0].EffectiveDate
	late := es[39]
	late.EffectiveDate = day.AddDate(0, 0, 2) // after the statement's last date: in transit
	ledgerSide := append(slices.Clone(es[:39]), late)
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), ledgerSide))
	c.ingest(0, c.returnFile("returns.ach", ach.ReturnOf(es[3], "R01", 1)))

	p := planted{live: es, day: day.Format("2006-01-02"), expected: map[string]string{}}
	var lines []stmtLine
	for i, e := range es[:39] {
		l := lineOf(e)
		switch i {
		case 3:
			p.expected[e.Trace] = "returned"
			continue
		case 10:
			p.expected[e.Trace] = "missing_in_statement"
			continue
		case 11:
			l.amount -= 50
			p.expected[e.Trace] = "amount_mismatch"
		case 12:
			l.date = day.AddDate(0, 0, -5).Format("2006-01-02")
			p.expected[e.Trace] = "date_out_of_window"
		case 13:
			l.currency = "EUR"
			p.expected[e.Trace] = "currency_mismatch"
		case 14:
			lines = append(lines, l) // listed twice: a double charge
			p.expected[e.Trace] = "duplicate_in_statement"
		default:
			p.expected[e.Trace] = "matched"
		}
		lines = append(lines, l)
	}
	p.expected[late.Trace] = "in_transit"
	lines = append(lines,
		stmtLine{id: "EXTRA1", ref: "999999990000001", amount: 12_345, currency: "USD", date: p.day, typ: "payment"},
		stmtLine{id: "FEE1", ref: "FEE-2026-03", amount: -250, currency: "USD", date: p.day, typ: "fee"})
	p.expected["999999990000001"] = "missing_in_ledger"
	p.expected["FEE-2026-03"] = "unbooked_fee"
	p.mapping = c.file("statement.toml", []byte(statementMapping))
	p.stmt = c.statement("statement.csv", lines)
	return p
}

// importInto imports the planted statement for c's tenant.
func (p planted) importInto(c *cli) {
	c.t.Helper()
	c.must(0, "statement", "import", "--source", "ach", "--format", "csv", "--map", p.mapping, p.stmt)
}

func (p planted) period() (string, string) {
	return p.live[0].EffectiveDate.AddDate(0, 0, -7).Format("2006-01-02"), p.live[0].EffectiveDate.AddDate(0, 0, 3).Format("2006-01-02")
}

func TestReconcileClassifiesEveryDifferenceAndBridges(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	imp := c.must(0, "-o", "json", "statement", "import", "--source", "ach", "--format", "csv", "--map", p.mapping, p.stmt)
	var imported []struct{ Conflicts int64 }
	if err := json.Unmarshal([]byte(imp.stdout), &imported); err != nil || len(imported) != 1 || imported[0].Conflicts != 0 {
		t.Fatalf("import (%v):\n%v", err, imp)
	}
	postingsBefore := c.postings()
	from, to := p.period()
	rep := c.reconcile(3, from, to)
	if c.postings() != postingsBefore {
		t.Fatal("statement import or reconciliation wrote postings")
	}

	got := map[string][]string{}
	for _, d := range rep.Discrepancies {
		got[d.Reference] = append(got[d.Reference], d.Class)
	}
	for ref, want := range p.expected {
		classes := got[ref]
		if want == "matched" {
			if len(classes) != 0 {
				t.Errorf("reference %s: want matched, got %v", ref, classes)
			}
			continue
		}
		if want == "duplicate_in_statement" {
			if len(classes) != 1 || classes[0] != want {
				t.Errorf("reference %s: want the first line matched and the second %s, got %v", ref, want, classes)
			}
			continue
		}
		if len(classes) != 1 || classes[0] != want {
			t.Errorf("reference %s: want %s, got %v", ref, want, classes)
		}
	}
	for _, d := range rep.Discrepancies {
		if d.Class == "amount_mismatch" {
			if !strings.Contains(d.Explanation, "statement shows") || !strings.Contains(d.Explanation, "ledger posted") ||
				!strings.Contains(d.Explanation, "difference 0.50 USD") && !strings.Contains(d.Explanation, "difference -0.50 USD") {
				t.Errorf("explanation does not name both sides and the difference: %q", d.Explanation)
			}
			if d.Ledger == nil || d.Statement == nil || d.Ledger.File != "day1.ach" || d.Statement.File != "statement.csv" ||
				d.Ledger.Line == 0 || d.Statement.Line == 0 {
				t.Errorf("evidence lacks a side or its file:line: %+v %+v", d.Ledger, d.Statement)
			}
		}
	}

	// Nothing counted twice or lost: every item of both sides is in exactly
	// one class.
	var ledgerItems, lines int64
	for _, cl := range rep.Classes {
		ledgerItems += cl.LedgerItems
		lines += cl.StatementLines
	}
	if ledgerItems != rep.LedgerItems || lines != rep.StatementLines {
		t.Fatalf("classes hold %d ledger items and %d lines; compared %d and %d", ledgerItems, lines, rep.LedgerItems, rep.StatementLines)
	}
	if want := c.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, c.tenant); rep.StatementLines != want {
		t.Fatalf("compared %d statement lines, the statement has %d", rep.StatementLines, want)
	}
	for _, b := range rep.Bridge {
		if !b.Unexplained.IsZero() {
			t.Errorf("%s: unexplained %s", b.Currency, b.Unexplained)
		}
	}

	// Re-running changes nothing: the same discrepancies, no new corrections.
	corrections := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1`, c.tenant)
	if corrections != 3 {
		t.Fatalf("%d corrections proposed, want 3 (missing_in_ledger, amount_mismatch, unbooked_fee)", corrections)
	}
	again := c.reconcile(3, from, to)
	if !sameDiscrepancies(rep, again) {
		t.Fatal("a second run of the same period gives other discrepancies")
	}
	if n := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1`, c.tenant); n != corrections {
		t.Fatalf("the second run proposed %d more corrections", n-corrections)
	}
	// Importing the statement again adds nothing.
	p.importInto(c)
	if n := c.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, c.tenant); n != rep.StatementLines {
		t.Fatalf("re-import added %d lines", n-rep.StatementLines)
	}
}

func sameDiscrepancies(a, b report.Report) bool {
	key := func(r report.Report) []string {
		var out []string
		for _, d := range r.Discrepancies {
			out = append(out, fmt.Sprintf("%s|%s|%s|%d|%s", d.Class, d.Reason, d.Reference, d.Difference, d.CorrectionKey))
		}
		return out
	}
	return slices.Equal(key(a), key(b))
}

// --tolerance and --window decide what is a break: the planted 0.50
// difference matches within 50 minor units and breaks at 49; the line dated
// five days early matches within a 6-day window and breaks at 4.
func TestToleranceAndWindowDecideWhatBreaks(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	p.importInto(c)
	from, to := p.period()
	amount, date := p.live[11].Trace, p.live[12].Trace
	classOf := func(ref string) string {
		return c.rows(`SELECT class FROM discrepancies
		                WHERE tenant_id = $1 AND reference = $2 AND run_id = (SELECT max(id) FROM reconciliations WHERE tenant_id = $1)`,
			c.tenant, ref)
	}
	for _, tc := range []struct {
		tolerance, window    string
		amountWant, dateWant string
	}{
		{"49", "4d", "amount_mismatch\n", "date_out_of_window\n"},
		{"50", "6d", "", ""},
	} {
		c.reconcile(3, from, to, "--tolerance", tc.tolerance, "--window", tc.window)
		if got := classOf(amount); got != tc.amountWant {
			t.Errorf("--tolerance %s: the 0.50 difference is %q, want %q", tc.tolerance, got, tc.amountWant)
		}
		if got := classOf(date); got != tc.dateWant {
			t.Errorf("--window %s: the line 5 days early is %q, want %q", tc.window, got, tc.dateWant)
		}
		if got := c.rows(`SELECT tolerance_minor || ' ' || window_days FROM reconciliations
		                   WHERE tenant_id = $1 ORDER BY id DESC LIMIT 1`, c.tenant); got != tc.tolerance+" "+strings.TrimSuffix(tc.window, "d")+"\n" {
			t.Errorf("the run stored %q", got)
		}
	}
	// lookup tells what the newest run said: the difference the first run
	// listed matched in the second.
	var look struct {
		Reconciliation struct {
			Discrepancies []struct{ Class string } `json:"discrepancies"`
		} `json:"reconciliation"`
	}
	if err := json.Unmarshal([]byte(c.must(0, "-o", "json", "lookup", p.live[11].Key()).stdout), &look); err != nil {
		t.Fatal(err)
	}
	if d := look.Reconciliation.Discrepancies; len(d) != 0 {
		t.Fatalf("lookup shows %+v from an older run; the newest matched the key", d)
	}
	// The first run proposed a correction for the difference; the newest
	// no longer shows it, so approving it is refused and posts nothing.
	stale := byClass(c.corrections(), "amount_mismatch")
	if r := c.approve(1, stale.ID, "alice"); !strings.Contains(r.stderr, "no longer") {
		t.Fatalf("approving a correction whose break is gone:\n%v", r)
	}
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2`, c.tenant, stale.Key); n != 0 {
		t.Fatalf("a stale correction posted")
	}
	if n := c.count(`SELECT count(*) FROM correction_decisions WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Fatalf("a refused approval left %d decisions", n)
	}
}

// A settlement total on the statement is compared with the net of the
// ledger's items of its day and currency: one that agrees matches, one that
// does not is a settlement_total_mismatch, a break.
func TestSettlementTotalsAgainstTheDailyNet(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(25, 12))
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), es))
	day := es[0].EffectiveDate
	var lines []stmtLine
	var net int64
	for _, e := range es {
		lines = append(lines, lineOf(e))
		if e.EffectiveDate.Equal(day) {
			net += signed(e)
		}
	}
	d := day.Format("2006-01-02")
	lines = append(lines,
		stmtLine{id: "S1", ref: "SETTLE-1", amount: net, currency: "USD", date: d, typ: "settlement"},
		stmtLine{id: "S2", ref: "SETTLE-2", amount: net + 1, currency: "USD", date: d, typ: "settlement"})
	c.must(0, "statement", "import", "--source", "ach", "--format", "csv",
		"--map", c.file("statement.toml", []byte(statementMapping)), c.statement("statement.csv", lines))
	c.reconcile(3, d, d)
	got := c.rows(`SELECT line_key, class, is_break FROM discrepancies WHERE tenant_id = $1 AND line_type = 'settlement_total' ORDER BY 1`, c.tenant)
	if want := "csv:ach:S2|settlement_total_mismatch|true\n"; got != want {
		t.Fatalf("settlement totals:\n%s\nwant\n%s", got, want)
	}
}

// A reference that the statement lists under two keys fans the plain join
// out: the ledger's one item would pair with both lines. The run must notice
// (every item and line comes out of the join once, or the pass is repeated
// by rank) and pair the item with one line only, by amount.
func TestARepeatedReferencePairsOnce(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(31, 10))
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), es))
	var lines []stmtLine
	for _, e := range es {
		lines = append(lines, lineOf(e))
	}
	twice := lineOf(es[4])
	twice.id, twice.amount = "SECOND", twice.amount+1_000 // a second, larger line under the same reference
	lines = append(lines, twice)
	c.must(0, "statement", "import", "--source", "ach", "--format", "csv", "--map",
		c.file("m.toml", []byte(statementMapping)), c.statement("bank.csv", lines))
	day := es[0].EffectiveDate.Format("2006-01-02")
	rep := c.reconcile(3, day, day)

	if len(rep.Discrepancies) != 1 {
		t.Fatalf("want one discrepancy, got %+v", rep.Discrepancies)
	}
	if d := rep.Discrepancies[0]; d.Class != "missing_in_ledger" || d.Reference != es[4].Trace || d.Statement == nil ||
		d.Statement.Amount != twice.amount {
		t.Fatalf("want the larger line of %s missing in the ledger, got %+v (statement %+v)", es[4].Trace, d, d.Statement)
	}
	run := c.count(`SELECT max(id) FROM reconciliations WHERE tenant_id = $1`, c.tenant)
	matched := c.count(`SELECT ledger_items FROM reconciliation_classes WHERE tenant_id = $1 AND run_id = $2 AND class = 'matched'`,
		c.tenant, run)
	missing := c.count(`SELECT statement_lines FROM reconciliation_classes WHERE tenant_id = $1 AND run_id = $2 AND class = 'missing_in_ledger'`,
		c.tenant, run)
	if matched != int64(len(es)) || missing != 1 {
		t.Fatalf("stored %d matched items and %d missing lines; want %d and 1", matched, missing, len(es))
	}
	if rep.LedgerItems != int64(len(es)) || rep.StatementLines != int64(len(es))+1 {
		t.Fatalf("compared %d items and %d lines; want %d and %d", rep.LedgerItems, rep.StatementLines, len(es), len(es)+1)
	}
}
