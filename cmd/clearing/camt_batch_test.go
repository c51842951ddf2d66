package main

import (
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/camt"
)

// A camt batch entry lists its transactions (TxDtls): the statement holds
// the entry as a settlement total and each transaction as a line of its
// own. The transactions pair with the ledger's items one to one, and the
// entry is settled by its own transactions, not compared with a group of
// the ledger: the day's other items, which the statement lists alone, are
// neither held by it nor settled twice.
func TestCamtBatchEntryIsSettledByItsOwnTransactions(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(31, 16))[:12]
	c.ingest(0, c.achFile("day.ach", ach.DefaultHeader(created), es))
	day := es[0].EffectiveDate

	// Our account at the bank: an entry that the ledger credits is money
	// out of the settlement account.
	dir := func(e ach.Entry) (int64, formats.Direction) {
		if n := signed(e); n > 0 {
			return n, formats.Debit
		} else {
			return -n, formats.Credit
		}
	}
	batch := camt.Entry{Ref: "BATCH0001", ValueDate: day}
	var net int64
	for _, e := range es[:5] {
		a, d := dir(e)
		batch.Details = append(batch.Details, camt.Detail{Amount: a, Direction: d, EndToEndID: e.Trace})
		if d == formats.Debit {
			net -= a
		} else {
			net += a
		}
	}
	batch.Amount, batch.Direction = net, formats.Credit
	if net < 0 {
		batch.Amount, batch.Direction = -net, formats.Debit
	}
	entriesOut := []camt.Entry{batch}
	for i, e := range es[5:] {
		a, d := dir(e)
		entriesOut = append(entriesOut, camt.Entry{Ref: "SINGLE" + string(rune('A'+i)), Amount: a, Direction: d, EndToEndID: e.Trace, ValueDate: day})
	}
	spec := []camt.StatementSpec{{ID: "STMT1", IBAN: "DE89370400440532013000", Currency: "USD", Date: day, Entries: entriesOut}}
	path := camtFile(t, c, "stmt.xml", spec, "053", "001.08")
	c.importStatement(0, "ach", path)
	if n := c.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1 AND line_type = 'settlement_total'`, c.tenant); n != 1 {
		t.Fatalf("%d settlement totals, want the batch entry's", n)
	}

	d := day.Format("2006-01-02")
	rep := c.reconcile(0, d, d)
	run := rep.RunID
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND is_break`, c.tenant, run); n != 0 {
		t.Fatalf("%d breaks, want none:\n%s", n, c.must(0, "report", "latest").stdout)
	}
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND class IN ('settled', 'settlement_member')`,
		c.tenant, run); n != 0 {
		t.Fatalf("%d items settled or held by a group; the entry's own transactions settle it", n)
	}
	if n := c.count(`SELECT coalesce(sum(ledger_items), 0) FROM reconciliation_classes WHERE tenant_id = $1 AND run_id = $2 AND class = 'matched'`,
		c.tenant, run); n != int64(len(es)) {
		t.Fatalf("%d items matched, want all %d one to one", n, len(es))
	}
	if n := unexplained(c, run); n != 0 {
		t.Fatalf("%d currencies with an unexplained remainder", n)
	}
}
