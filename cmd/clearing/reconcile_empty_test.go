package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/report"
)

// reconcileSource runs 'clearing -o json reconcile' on source over a
// period, checks the exit code and returns the report and the run.
func (c *cli) reconcileSource(want int, source, from, to string) (report.Report, result) {
	c.t.Helper()
	r := c.must(want, "-o", "json", "reconcile", "--source", source, "--from", from, "--to", to)
	var rep report.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		c.t.Fatalf("reconcile output is not the report document: %v\n%v", err, r)
	}
	return rep, r
}

// runRow is a stored reconciliation run's counts, as one line.
func (c *cli) runRow(id int64) string {
	c.t.Helper()
	return c.rows(`SELECT source, ledger_items, statement_lines, matched_ledger, matched_statement,
	                      coalesce(statement_last_date::text, '-')
	                 FROM reconciliations WHERE tenant_id = $1 AND id = $2`, c.tenant, id)
}

// A period in which neither side has anything, for a source the tenant
// knows, is a quiet period: the run is stored with zero counts, the report
// says that nothing was compared, and nothing needs a person (exit 0). It
// used to fail with "cannot scan NULL into *bool" and store nothing.
func TestReconcileOfAnEmptyPeriodIsStoredAndSaysSo(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	p.importInto(c)
	rep, _ := c.reconcileSource(0, "ach", "2030-01-01", "2030-01-31")
	if rep.EmptySide != report.EmptyBoth || rep.LedgerItems != 0 || rep.StatementLines != 0 {
		t.Fatalf("empty_side %q, %d items, %d lines; want both, 0, 0", rep.EmptySide, rep.LedgerItems, rep.StatementLines)
	}
	if got, want := c.runRow(rep.RunID), "ach|0|0|0|0|-\n"; got != want {
		t.Fatalf("stored run %q, want %q", got, want)
	}
	for _, table := range []string{"discrepancies", "reconciliation_classes", "reconciliation_totals"} {
		if n := c.count(`SELECT count(*) FROM `+table+` WHERE tenant_id = $1 AND run_id = $2`, c.tenant, rep.RunID); n != 0 {
			t.Errorf("%s holds %d rows for a run that compared nothing", table, n)
		}
	}
	if n := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Errorf("%d corrections proposed from an empty period", n)
	}
	table := c.must(0, "report", "latest").stdout
	if !strings.HasPrefix(table, "NOTHING TO COMPARE: neither ledger postings nor statement lines of source ach from 2030-01-01 to 2030-01-31.") {
		t.Errorf("the table does not open by saying nothing was compared:\n%s", table)
	}

	// README's own example, on a tenant that has nothing at all: not a
	// crash and not a quiet period, but a usage error; nothing is stored.
	c.tenant = "fresh"
	r := c.must(2, "reconcile", "--source", "ach", "--from", "2026-11-01", "--to", "2026-11-30")
	if !strings.Contains(r.stderr, `--source "ach": tenant "fresh" has no postings or statement lines of any source yet`) {
		t.Errorf("the error does not say the tenant has no sources:\n%v", r)
	}
	if n := c.count(`SELECT count(*) FROM reconciliations WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Errorf("an empty tenant stored %d runs", n)
	}
}

// A source that the tenant has never had a posting or a statement line of
// is a typo, not a quiet period: a usage error (exit 2) that names the
// sources the tenant has, from its postings and its statement lines, and
// no run is stored.
func TestReconcileOfAnUnknownSourceIsAUsageError(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	c.must(0, "statement", "import", "--source", "bank-x", "--format", "csv", "--map", p.mapping, p.stmt)
	from, to := p.period()
	r := c.must(2, "reconcile", "--source", "achh", "--from", from, "--to", to)
	if !strings.Contains(r.stderr, `--source "achh": tenant "default" has no postings or statement lines of it; its sources are ach, bank-x`) {
		t.Errorf("the error does not name the known sources:\n%v", r)
	}
	if n := c.count(`SELECT count(*) FROM reconciliations WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Errorf("a mistyped source stored %d runs", n)
	}
	if n := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Errorf("a mistyped source proposed %d corrections", n)
	}
}

// A statement imported under the wrong --source leaves one side empty on
// each source. Each run is stored and needs a person (exit 3), the report
// says first which side is empty, and no correction is proposed: before,
// the statement's source proposed a correction for every line of it, which
// approved would have posted the whole statement to suspense.
func TestAStatementUnderTheWrongSourceProposesNothing(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	c.must(0, "statement", "import", "--source", "bank-x", "--format", "csv", "--map", p.mapping, p.stmt)
	lines := c.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1 AND source = 'bank-x'`, c.tenant)
	from, to := p.period()

	rep, _ := c.reconcileSource(3, "bank-x", from, to)
	if rep.EmptySide != report.EmptyLedger || rep.LedgerItems != 0 || rep.StatementLines != lines {
		t.Fatalf("empty_side %q, %d items, %d lines; want ledger, 0, %d", rep.EmptySide, rep.LedgerItems, rep.StatementLines, lines)
	}
	if got := c.runRow(rep.RunID); !strings.HasPrefix(got, "bank-x|0|") {
		t.Errorf("stored run %q", got)
	}
	// Every line is still accounted for, as a break, without a correction.
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND is_break`, c.tenant, rep.RunID); n != lines {
		t.Errorf("%d breaks stored for %d lines", n, lines)
	}
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND correction_key IS NOT NULL`,
		c.tenant, rep.RunID); n != 0 {
		t.Errorf("%d discrepancies name a correction that was not proposed", n)
	}
	for _, b := range rep.Bridge {
		if !b.Unexplained.IsZero() {
			t.Errorf("%s: unexplained %s", b.Currency, b.Unexplained)
		}
	}
	page := c.must(3, "-o", "html", "report", "latest").stdout
	_, body, _ := strings.Cut(page, "<body>")
	if !strings.HasPrefix(strings.TrimSpace(body), `<div class="banner" role="alert">THE LEDGER SIDE IS EMPTY`) {
		t.Errorf("the page does not open with the empty side:\n%.400s", body)
	}

	rep, _ = c.reconcileSource(3, "ach", from, to)
	if rep.EmptySide != report.EmptyStatement || rep.StatementLines != 0 || rep.LedgerItems == 0 {
		t.Fatalf("empty_side %q, %d items, %d lines; want statement, some, 0", rep.EmptySide, rep.LedgerItems, rep.StatementLines)
	}
	csv := c.must(3, "-o", "csv", "report", "latest").stdout
	if header, row, _ := strings.Cut(csv, "\n"); !strings.HasPrefix(header, "run_id,empty_side,") || !strings.Contains(row, ",statement,") {
		t.Errorf("the CSV does not carry the empty side:\n%.400s", csv)
	}

	if n := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Fatalf("%d corrections proposed from one-sided runs", n)
	}
	// Imported under the right source, the same statement reconciles as
	// usual and proposes its three corrections.
	p.importInto(c)
	c.reconcile(3, from, to)
	if n := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1`, c.tenant); n != 3 {
		t.Fatalf("%d corrections proposed once the statement is under its source, want 3", n)
	}
}

// A settlement total that differs from the ledger's net of its day carries
// that difference (net minus total), as its explanation says, and not 0.
// It is in neither side's total, so the bridge shows it beside its sum:
// the bridge still balances, and the line beside it, the chart and the
// break list agree.
func TestSettlementTotalMismatchCarriesItsDifference(t *testing.T) {
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
		stmtLine{id: "S2", ref: "SETTLE-2", amount: net + 1, currency: "USD", date: d, typ: "settlement"},
		stmtLine{id: "S3", ref: "SETTLE-3", amount: net - 12_345, currency: "USD", date: d, typ: "settlement"})
	c.must(0, "statement", "import", "--source", "ach", "--format", "csv",
		"--map", c.file("statement.toml", []byte(statementMapping)), c.statement("statement.csv", lines))
	rep := c.reconcile(3, d, d)

	// Stored: each break keeps the ledger's net of its day.
	got := c.rows(`SELECT line_key, class, ledger_net::text, statement_amount FROM discrepancies
	                WHERE tenant_id = $1 AND run_id = $2 AND line_type = 'settlement_total' ORDER BY 1`, c.tenant, rep.RunID)
	want := "csv:ach:S2|settlement_total_mismatch|" + strconv.FormatInt(net, 10) + "|" + strconv.FormatInt(net+1, 10) + "\n" +
		"csv:ach:S3|settlement_total_mismatch|" + strconv.FormatInt(net, 10) + "|" + strconv.FormatInt(net-12_345, 10) + "\n"
	if got != want {
		t.Fatalf("stored settlement breaks:\n%s\nwant\n%s", got, want)
	}
	diffs := map[string]int64{}
	for _, x := range rep.Discrepancies {
		if x.Class == report.ClassSettlementTotalMismatch {
			diffs[x.Reference] = x.Difference
			if !strings.Contains(x.Explanation, "difference "+money.FormatCode(x.Difference, "USD")) {
				t.Errorf("%s: difference %d, but the explanation says %q", x.Reference, x.Difference, x.Explanation)
			}
			if x.CorrectionKey != "" {
				t.Errorf("%s: a settlement total names correction %q", x.Reference, x.CorrectionKey)
			}
		}
	}
	if diffs["SETTLE-2"] != -1 || diffs["SETTLE-3"] != 12_345 || len(diffs) != 2 {
		t.Fatalf("settlement differences %v, want SETTLE-2 -1 and SETTLE-3 12345", diffs)
	}
	if len(rep.Bridge) != 1 {
		t.Fatalf("bridges: %+v", rep.Bridge)
	}
	b := rep.Bridge[0]
	for _, l := range b.Differences {
		if l.Class == report.ClassSettlementTotalMismatch {
			t.Errorf("the bridge sums settlement totals, which neither total holds: %+v", l)
		}
	}
	if len(b.OutsideTotals) != 1 || b.OutsideTotals[0].Class != report.ClassSettlementTotalMismatch ||
		b.OutsideTotals[0].Amount.String() != "12344" || b.OutsideTotals[0].Count != 2 {
		t.Errorf("beside the bridge: %+v, want settlement_total_mismatch 12344 of 2", b.OutsideTotals)
	}
	if !b.Unexplained.IsZero() {
		t.Errorf("the bridge does not balance: unexplained %s", b.Unexplained)
	}
	if n := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Errorf("%d corrections proposed for settlement totals", n)
	}
	// The page's chart counts the two breaks at the sum of their absolute
	// differences: 0.01 + 123.45 USD.
	if page := c.must(3, "-o", "html", "report", "latest").stdout; !strings.Contains(page, ">2 breaks, 123.46 USD</text>") {
		t.Errorf("the chart does not count the settlement breaks at their differences")
	}
}

// ledgerOn ingests one ACH entry of source ach valued on day (YYYY-MM-DD)
// and returns the statement line that matches it. A test whose statement
// stands alone uses it to give the ledger side something of the period,
// since a run with one side empty proposes no corrections.
func (c *cli) ledgerOn(day string) stmtLine {
	c.t.Helper()
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		c.t.Fatal(err)
	}
	e := liveOnly(entries(41, 5))[0]
	e.EffectiveDate = d
	c.ingest(0, c.achFile("ledger-"+day+".ach", ach.DefaultHeader(created), []ach.Entry{e}))
	return lineOf(e)
}

// The same with a bank's BAI2 statement, as an operator meets it: the demo
// day's ACH file and statement, and the bank's ACH settlement line (type
// 166) for that day in a second statement, which does not equal the
// ledger's net of the day.
func TestBAI2SettlementTotalCarriesItsDifference(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	dir := c.dir + "/demo"
	c.must(0, "generate", "demo", dir)
	c.ingest(0, dir+"/day1.ach")
	c.must(0, "statement", "import", "--source", "ach", dir+"/statement.bai2")
	settlement := "01,121042882,CUSTOMER,261130,1200,2,80,,2/\n02,CUSTOMER,121042882,1,260302,,USD,2/\n03,000123456789,/\n" +
		"16,166,100000,,SETTLE0302,SETTLE0302,/\n49,100000,3/\n98,100000,1,5/\n99,100000,1,7/\n"
	c.must(0, "statement", "import", "--source", "ach", c.file("settlement.bai2", []byte(settlement)))
	rep := c.reconcile(3, "2026-03-02", "2026-03-03")

	net := c.count(`SELECT sum(CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END) FROM postings
	                 WHERE tenant_id = $1 AND source = 'ach' AND value_date = '2026-03-02'
	                   AND kind IN ('clearing', 'return', 'reversal')`, c.tenant)
	stored := c.rows(`SELECT ledger_net::text || ' ' || statement_amount FROM discrepancies
	                   WHERE tenant_id = $1 AND run_id = $2 AND class = 'settlement_total_mismatch'`, c.tenant, rep.RunID)
	var storedNet, total int64
	if _, err := fmt.Sscan(stored, &storedNet, &total); err != nil || storedNet != net {
		t.Fatalf("stored settlement break %q (%v): want the ledger's net of the day, %d", stored, err, net)
	}
	var got *report.Discrepancy
	for i := range rep.Discrepancies {
		if rep.Discrepancies[i].Class == report.ClassSettlementTotalMismatch {
			got = &rep.Discrepancies[i]
		}
	}
	if got == nil || got.Difference != net-total || got.Difference == 0 {
		t.Fatalf("settlement break %+v, want a difference of %d (net %d minus total %d)", got, net-total, net, total)
	}
	if !strings.Contains(got.Explanation, "difference "+money.FormatCode(got.Difference, "USD")) {
		t.Errorf("difference %d, but the explanation says %q", got.Difference, got.Explanation)
	}
	b := rep.Bridge[0]
	if len(b.OutsideTotals) != 1 || b.OutsideTotals[0].Amount.String() != strconv.FormatInt(net-total, 10) {
		t.Errorf("beside the bridge: %+v, want %d", b.OutsideTotals, net-total)
	}
	if !b.Unexplained.IsZero() {
		t.Errorf("the bridge does not balance: unexplained %s", b.Unexplained)
	}
	if n := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1 AND class NOT IN ('missing_in_ledger', 'amount_mismatch', 'unbooked_fee')`,
		c.tenant); n != 0 {
		t.Errorf("%d corrections of another class", n)
	}
}
