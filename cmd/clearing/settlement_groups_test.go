package main

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/bai2"
)

// An ODFI's bank statement lists one line per ACH batch on the settlement
// account, not the batch's entries. Each line settles its batch when the
// batch nets to it: the entries are settled, not missing, and what is left
// for a person is the one line nobody posted.
func TestBatchSettlementLinesSettleTheirBatches(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	// Three batches of 250 entries: three companies, one effective date.
	// The generator gives each run of 1,000 entries one company and date.
	var es []ach.Entry
	i := 0
	for e := range ach.GenerateEntries(19, 3000) {
		if i%1000 < 250 {
			es = append(es, e)
		}
		i++
	}
	es = liveOnly(es)
	nets := map[string]int64{}
	var order []string
	for _, e := range es {
		if _, ok := nets[e.CompanyID]; !ok {
			order = append(order, e.CompanyID)
		}
		nets[e.CompanyID] += signed(e)
	}
	if len(order) != 3 {
		t.Fatalf("%d batches, want 3", len(order))
	}
	c.ingest(0, c.achFile("day.ach", ach.DefaultHeader(created), es))

	// Our account at the bank: money out (a debit, 466) for a batch that
	// pays its receivers, money in (166) for one that collects.
	day := es[0].EffectiveDate
	var lines []bai2.Line
	for i, co := range order {
		l := bai2.Line{Account: "555000111", Currency: "USD", Date: day, BankReference: fmt.Sprintf("ACHSETT%d", i)}
		if n := nets[co]; n > 0 {
			l.TypeCode, l.Amount = 466, n
		} else {
			l.TypeCode, l.Amount = 166, -n
		}
		lines = append(lines, l)
	}
	lines = append(lines, bai2.Line{Account: "555000111", Currency: "USD", Date: day, TypeCode: 195, Amount: 12345,
		BankReference: "WIRE0001", CustomerReference: "WIRE0001"})
	var st bytes.Buffer
	if err := bai2.Generate(&st, slices.Values(lines), bai2.GenerateOptions{Sender: "121042882", Created: created}); err != nil {
		t.Fatal(err)
	}
	c.must(0, "statement", "import", "--source", "ach", c.file("bank.bai2", st.Bytes()))
	r := c.run("reconcile", "--source", "ach", "--from", day.Format("2006-01-02"), "--to", day.Format("2006-01-02"))
	if r.code != 3 {
		t.Fatalf("want exit 3 for the line nobody posted\n%v", r)
	}
	run := c.count(`SELECT max(id) FROM reconciliations WHERE tenant_id = $1`, c.tenant)
	classes := func(cls string, breaks bool) int64 {
		return c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND class = $3 AND is_break = $4`,
			c.tenant, run, cls, breaks)
	}
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND is_break`, c.tenant, run); n != 1 {
		t.Fatalf("%d breaks, want 1 (the wire)", n)
	}
	if classes("missing_in_ledger", true) != 1 || classes("missing_in_statement", true) != 0 {
		t.Fatalf("want the wire missing in the ledger and no entry missing in the statement")
	}
	if n := classes("settled", false); n != int64(len(es)) {
		t.Fatalf("%d entries settled, want %d", n, len(es))
	}
	// Each entry is settled by its own batch's line.
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND class = 'settled'
	                    AND strpos(explanation, 'ACH batch of company ' || split_part(posting_key, ':', 2) || ',') > 0`,
		c.tenant, run); n != int64(len(es)) {
		t.Fatalf("%d entries settled by their own batch's line, want %d", n, len(es))
	}
	if n := unexplained(c, run); n != 0 {
		t.Fatalf("%d currencies leave an unexplained remainder", n)
	}
}

// Two batches that net to the same amount on the same day: a line of that
// amount could settle either, and which one is for a person.
func TestASettlementLineThatTwoBatchesFitIsAmbiguous(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	var es []ach.Entry
	for e := range ach.GenerateEntries(23, 2000) {
		if e.Amount > 0 && (len(es) == 0 || (len(es) == 1 && e.CompanyID != es[0].CompanyID)) {
			es = append(es, e)
		}
	}
	es[1].TransactionCode, es[1].Amount = es[0].TransactionCode, es[0].Amount
	c.ingest(0, c.achFile("day.ach", ach.DefaultHeader(created), es))
	l := bai2.Line{Account: "555000111", Currency: "USD", Date: es[0].EffectiveDate, BankReference: "ACHSETT"}
	if n := signed(es[0]); n > 0 {
		l.TypeCode, l.Amount = 466, n
	} else {
		l.TypeCode, l.Amount = 166, -n
	}
	var st bytes.Buffer
	if err := bai2.Generate(&st, slices.Values([]bai2.Line{l}), bai2.GenerateOptions{Sender: "121042882", Created: created}); err != nil {
		t.Fatal(err)
	}
	c.must(0, "statement", "import", "--source", "ach", c.file("bank.bai2", st.Bytes()))
	day := es[0].EffectiveDate.Format("2006-01-02")
	c.must(3, "reconcile", "--source", "ach", "--from", day, "--to", day)
	run := c.count(`SELECT max(id) FROM reconciliations WHERE tenant_id = $1`, c.tenant)
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND class = 'ambiguous_settlement'
	                    AND is_break AND explanation LIKE '%company ' || $3 || '%' AND explanation LIKE '%company ' || $4 || '%'`,
		c.tenant, run, es[0].CompanyID, es[1].CompanyID); n != 1 {
		t.Fatalf("want one ambiguous_settlement naming both batches")
	}
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND class = 'settled'`, c.tenant, run); n != 0 {
		t.Fatalf("%d entries settled by a guess", n)
	}
}

// unexplained counts the currencies of reconciliation run whose bridge
// leaves a remainder: ledger minus statement is not the sum of the classes.
func unexplained(c *cli, run int64) int64 {
	return c.count(`
SELECT count(*) FROM reconciliation_totals t
 WHERE t.tenant_id = $1 AND t.run_id = $2
   AND t.ledger_total - t.statement_total <> (SELECT coalesce(sum(k.ledger_amount - k.statement_amount), 0)
                                                FROM reconciliation_classes k
                                               WHERE k.tenant_id = t.tenant_id AND k.run_id = t.run_id AND k.currency = t.currency)`,
		c.tenant, run)
}

// A PSP's payouts: the ledger's rows and the statement's payout lines name
// the payout they belong to. A payout line settles its rows when they net to
// it; one that differs is one break with the difference, whatever the day.
func TestPayoutLinesSettleTheRowsOfTheirPayout(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ledgerMap := c.file("sales.toml", []byte(`source = "psp"
key = ["id"]
amount = "amount"
amount_unit = "major"
currency_fixed = "EUR"
value_date = "date"
settlement_group = "payout"
`))
	sales := "id,amount,date,payout\n" +
		"s1,10.00,2026-11-25,P1\ns2,5.50,2026-11-26,P1\ns3,-2.00,2026-11-27,P1\n" +
		"s4,20.00,2026-11-27,P2\ns5,1.25,2026-11-28,P2\n"
	c.ingest(0, "--format", "csv", "--map", ledgerMap, c.file("sales.csv", []byte(sales)))
	stmtMap := c.file("payouts.toml", []byte(`source = "psp"
key = ["payout"]
reference = "payout"
amount = "amount"
amount_unit = "major"
currency_fixed = "EUR"
value_date = "date"
type_column = "type"
settlement_values = ["payout"]
settlement_group = "payout"
`))
	// P1 nets to 13.50; P2 to 21.25, but the PSP paid 21.00.
	payouts := "payout,amount,date,type\nP1,13.50,2026-11-30,payout\nP2,21.00,2026-11-30,payout\n"
	c.must(0, "statement", "import", "--source", "psp", "--format", "csv", "--map", stmtMap, c.file("payouts.csv", []byte(payouts)))
	c.must(3, "reconcile", "--source", "psp", "--from", "2026-11-25", "--to", "2026-11-30")
	run := c.count(`SELECT max(id) FROM reconciliations WHERE tenant_id = $1`, c.tenant)
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND class = 'settled'
	                    AND explanation LIKE '%group P1%'`, c.tenant, run); n != 3 {
		t.Fatalf("%d rows settled by payout P1, want 3", n)
	}
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND is_break
	                    AND class = 'settlement_total_mismatch' AND reason = 'group_total_differs'
	                    AND ledger_net - statement_amount = 25 AND explanation LIKE '%group P2%'`, c.tenant, run); n != 1 {
		t.Fatalf("want payout P2 to differ from its rows by 0.25 EUR")
	}
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND class = 'settlement_member'
	                    AND explanation LIKE '%group P2%'`, c.tenant, run); n != 2 {
		t.Fatalf("%d rows of payout P2 held by its break, want 2", n)
	}
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND is_break`, c.tenant, run); n != 1 {
		t.Fatalf("%d breaks, want 1: payout P2", n)
	}
	if n := unexplained(c, run); n != 0 {
		t.Fatalf("%d currencies leave an unexplained remainder", n)
	}
}
