package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/report"
)

// The auditor's bridge holds on a real reconciliation: per currency, the
// ledger balance plus the open and acknowledged breaks and the explained
// items is the statement balance the database stored. A break whose
// correction was rejected and which was then acknowledged moves from open
// to acknowledged and says who rejected its correction and why, in every
// form; the CSV lists the breaks unless --all, with numeric references
// kept as text.
func TestReportAuditorBridgeAndRejectedCorrection(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	p.importInto(c)
	from, to := p.period()
	c.reconcile(3, from, to)
	missing := byClass(c.corrections(), "missing_in_ledger")
	if missing.ID == 0 {
		t.Fatal("the planted statement line no posting has was proposed no correction")
	}
	alice := approverCLI(c, "alice")
	alice.must(0, "corrections", "reject", fmt.Sprint(missing.ID), "--operator", "alice", "--reason", "a refund the bank books itself")
	var key string
	if err := c.pool.QueryRow(t.Context(), `SELECT item_key FROM breaks WHERE tenant_id = $1 AND class = 'missing_in_ledger'`,
		c.tenant).Scan(&key); err != nil {
		t.Fatal(err)
	}
	alice.must(0, "breaks", "ack", key, "--reason", "its correction was rejected: the bank books the refund")
	r := c.reconcile(3, from, to)

	// Every bridge adds up, from the balances the database holds.
	if len(r.Bridge) < 2 {
		t.Fatalf("%d bridges, want USD and EUR (the currency mismatch's line)", len(r.Bridge))
	}
	for _, b := range r.Bridge {
		a := b.Auditor
		var lt, st money.Total
		if err := c.pool.QueryRow(t.Context(), `SELECT ledger_total, statement_total FROM reconciliation_totals
 WHERE tenant_id = $1 AND run_id = $2 AND currency = $3`, c.tenant, r.RunID, b.Currency).Scan(&lt, &st); err != nil {
			t.Fatalf("%s: %v", b.Currency, err)
		}
		if a.LedgerBalance.Cmp(lt) != 0 || a.StatementBalance.Cmp(st) != 0 {
			t.Errorf("%s: balances %s and %s, the database has %s and %s", b.Currency, a.LedgerBalance, a.StatementBalance, lt, st)
		}
		sum := a.LedgerBalance.Add(a.Open.Amount).Add(a.Acknowledged.Amount).Add(a.Explained.Amount).
			Add(a.WithinTolerance.Amount).Add(a.Unexplained)
		if sum.Cmp(a.StatementBalance) != 0 {
			t.Errorf("%s: ledger %s + open %s + acknowledged %s + explained %s + tolerance %s + unexplained %s = %s, not the statement balance %s",
				b.Currency, a.LedgerBalance, a.Open.Amount, a.Acknowledged.Amount, a.Explained.Amount, a.WithinTolerance.Amount,
				a.Unexplained, sum, a.StatementBalance)
		}
		if !a.Unexplained.IsZero() {
			t.Errorf("%s: %s unexplained", b.Currency, a.Unexplained)
		}
	}
	usd, eur := bridgeOf(t, r, "USD"), bridgeOf(t, r, "EUR")
	// The acknowledged break is the statement's extra 123.45 USD: statement
	// minus ledger, +12345.
	if a := usd.Auditor.Acknowledged; a.Count != 1 || a.Amount.Cmp(money.TotalOf(12_345)) != 0 {
		t.Errorf("USD acknowledged = %s of %d, want 12345 of 1", a.Amount, a.Count)
	}
	open := 0
	for _, d := range r.Discrepancies {
		if d.Break && !d.Acknowledged && !report.OutsideTotals(d.Class) &&
			(d.Currency == "USD" || (d.Statement != nil && d.Statement.Currency == "USD")) {
			open++
		}
	}
	if usd.Auditor.Open.Count != int64(open) || open == 0 {
		t.Errorf("USD open = %d breaks, the report lists %d open", usd.Auditor.Open.Count, open)
	}
	// The currency mismatch's EUR line is an open item of the EUR bridge.
	if o := eur.Auditor.Open; o.Count != 1 || o.Amount.IsZero() {
		t.Errorf("EUR open = %+v, want the currency mismatch's line", o)
	}
	// A break is acknowledged in the report as in the inventory, and a
	// rejected correction says who rejected it and why.
	var d *report.Discrepancy
	for i := range r.Discrepancies {
		if r.Discrepancies[i].Class == "missing_in_ledger" {
			d = &r.Discrepancies[i]
		}
	}
	if d == nil || !d.Acknowledged || d.CorrectionStatus != "rejected" || d.Rejection == nil ||
		d.Rejection.Operator != "alice" || d.Rejection.Reason != "a refund the bank books itself" || !strings.Contains(d.Rejection.Login, "alice") {
		t.Fatalf("the missing_in_ledger break: %+v rejection %+v", d, d.Rejection)
	}
	fee := byClass(c.corrections(), "unbooked_fee")
	for _, d := range r.Discrepancies {
		if d.Class == "unbooked_fee" && (d.CorrectionStatus != fee.Status || d.Rejection != nil) {
			t.Errorf("the fee's correction is %s, the report says %q (%+v)", fee.Status, d.CorrectionStatus, d.Rejection)
		}
	}

	table := c.must(3, "report", "latest").stdout
	for _, w := range []string{"Correction rejected by alice", "refund the bank books itself", "| + acknowledged breaks         | 1     | 123.45 USD   |",
		"acknowledged: needs no one until its amount changes", "= statement balance"} {
		if !strings.Contains(table, w) {
			t.Errorf("the table lacks %q:\n%s", w, table)
		}
	}
	page := c.must(3, "report", "latest", "-o", "html").stdout
	for _, w := range []string{"Correction rejected by alice", `<span class="ack">acknowledged</span>`, "&#43; acknowledged breaks", "= Statement balance"} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}

	breaks := 0
	for _, d := range r.Discrepancies {
		if d.Break {
			breaks++
		}
	}
	rows := readCSV(t, c.must(3, "report", "latest", "-o", "csv").stdout)
	all := readCSV(t, c.must(3, "report", "latest", "-o", "csv", "--all").stdout)
	if len(rows) != breaks+1 || len(all) != len(r.Discrepancies)+1 || breaks == len(r.Discrepancies) {
		t.Fatalf("CSV: %d rows by default and %d with --all, want the %d breaks and all %d discrepancies",
			len(rows)-1, len(all)-1, breaks, len(r.Discrepancies))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	found := false
	for _, row := range rows[1:] {
		if row[col["class"]] != "missing_in_ledger" {
			continue
		}
		found = true
		if row[col["reference"]] != "'999999990000001" || row[col["break"]] != "yes" || row[col["needs_person"]] != "no" ||
			row[col["rejected_by"]] != "alice" || row[col["correction_status"]] != "rejected" {
			t.Errorf("the CSV row of the acknowledged break: %v", row)
		}
	}
	if !found {
		t.Error("the CSV lacks the acknowledged break")
	}
	if r := c.must(3, "reconcile", "--source", "ach", "--from", from, "--to", to, "-o", "csv", "--all"); len(readCSV(t, r.stdout)) != len(all) {
		t.Errorf("reconcile -o csv --all lists %d rows, report --all %d", len(readCSV(t, r.stdout)), len(all))
	}
}

func bridgeOf(t *testing.T, r report.Report, cur string) report.Bridge {
	t.Helper()
	for _, b := range r.Bridge {
		if b.Currency == cur {
			return b
		}
	}
	t.Fatalf("no %s bridge in %s", cur, mustJSON(r.Bridge))
	return report.Bridge{}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func readCSV(t *testing.T, s string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, s)
	}
	return recs
}
