package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/report"
)

const bigMapping = `
source = "bigpsp"
key = ["id"]
amount = "amount"
amount_unit = "minor"
currency_fixed = "USD"
value_date = "date"
date_layout = "2006-01-02"
`

// bigRows writes n rows of exactly the amount cap, ids from first on.
func bigRows(first, n int) []byte {
	var b bytes.Buffer
	b.WriteString("id,amount,date\n")
	for i := range n {
		fmt.Fprintf(&b, "T%06d,%d,2026-11-29\n", first+i, formats.MaxAmountMinor)
	}
	return b.Bytes()
}

// text runs a query whose one value is read as text, so that a sum past
// int64 is compared digit by digit.
func (c *cli) text(sql string, args ...any) string {
	c.t.Helper()
	var s string
	if err := c.pool.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// TestTotalsPastInt64StayExact guards a tenant whose sums pass int64: ten
// thousand postings at the amount cap (10^15 minor units) total 10^19, and
// balance, reconcile and report failed for good once they did, because the
// sums were scanned into int64 and stored as bigint. An amount above the cap
// is refused, naming its line, and nothing of its file posts.
func TestTotalsPastInt64StayExact(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	mapping := c.file("big.toml", []byte(bigMapping))
	const n = 10_000
	const sum = "10000000000000000000" // n * 10^15, past int64's 9223372036854775807

	over := fmt.Sprintf("id,amount,date\nOK1,%d,2026-11-29\nBIG,%d,2026-11-29\n", formats.MaxAmountMinor, formats.MaxAmountMinor+1)
	r := c.run("ingest", "--format", "csv", "--map", mapping, c.file("over.csv", []byte(over)))
	if r.code != 1 || !strings.Contains(r.stderr, "line 3") || !strings.Contains(r.stderr, "above the limit") {
		t.Fatalf("an amount above the cap: want exit 1 naming line 3\n%v", r)
	}
	if c.postings() != 0 {
		t.Fatal("a file with an amount above the cap posted")
	}
	r = c.run("statement", "import", "--source", "bigpsp", "--format", "csv", "--map", mapping, c.file("over-stmt.csv", []byte(over)))
	if r.code != 1 || !strings.Contains(r.stderr, "line 3") {
		t.Fatalf("a statement with an amount above the cap: want exit 1 naming line 3\n%v", r)
	}
	if n := c.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Fatalf("a statement with an amount above the cap imported %d lines", n)
	}

	if s := c.ingest(0, "--format", "csv", "--map", mapping, c.file("big.csv", bigRows(0, n)))[0]; s.Posted != n {
		t.Fatalf("ingest: %+v", s)
	}
	// The ledger's rows: n postings of the cap, each with its two legs.
	if got := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND amount_minor = $2`, c.tenant, formats.MaxAmountMinor); got != n {
		t.Fatalf("%d postings of the cap, want %d", got, n)
	}
	for _, q := range []struct{ account, direction string }{{"settlement:bigpsp", "D"}, {"counterparty:bigpsp", "C"}} {
		got := c.text(`SELECT sum(amount_minor)::text FROM legs WHERE tenant_id = $1 AND account = $2 AND direction = $3`,
			c.tenant, q.account, q.direction)
		if got != sum {
			t.Fatalf("legs of %s (%s) sum to %s, want %s", q.account, q.direction, got, sum)
		}
	}

	// balance, as JSON and as a table.
	var bs []ledger.Balance
	out := c.must(0, "-o", "json", "balance").stdout
	if err := json.Unmarshal([]byte(out), &bs); err != nil {
		t.Fatalf("balance output: %v\n%s", err, out)
	}
	want := map[string][3]string{ // debits, credits, balance
		"settlement:bigpsp":   {sum, "0", "-" + sum},
		"counterparty:bigpsp": {"0", sum, sum},
	}
	if len(bs) != len(want) {
		t.Fatalf("balances %+v", bs)
	}
	for _, b := range bs {
		w, ok := want[b.Account]
		if !ok || b.Currency != "USD" || b.Debits.String() != w[0] || b.Credits.String() != w[1] || b.Balance.String() != w[2] {
			t.Errorf("balance %s %s: debits %s credits %s balance %s, want %v", b.Account, b.Currency, b.Debits, b.Credits, b.Balance, w)
		}
	}
	if !strings.Contains(out, `"balance": -`+sum) {
		t.Errorf("balance JSON does not carry the exact integer:\n%s", out)
	}
	if table := c.must(0, "balance").stdout; !strings.Contains(table, "-100000000000000000.00") {
		t.Errorf("balance table does not show -100000000000000000.00 USD:\n%s", table)
	}
	if csv := c.must(0, "-o", "csv", "balance", "--account", "settlement:*").stdout; !strings.Contains(csv, "-"+sum) {
		t.Errorf("balance CSV does not show %s minor units:\n%s", "-"+sum, csv)
	}

	// The statement shows every posting, and one line more that the ledger
	// lacks: the bridge's totals and the class sums pass int64 too.
	stmt := append(bigRows(0, n), fmt.Sprintf("T%06d,%d,2026-11-29\n", n, formats.MaxAmountMinor)...)
	c.must(0, "statement", "import", "--source", "bigpsp", "--format", "csv", "--map", mapping, c.file("stmt.csv", stmt))
	r = c.run("-o", "json", "reconcile", "--source", "bigpsp", "--from", "2026-11-29", "--to", "2026-11-29")
	if r.code != 3 {
		t.Fatalf("reconcile: want exit 3 (one line missing in the ledger)\n%v", r)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("reconcile output: %v\n%v", err, r)
	}
	stmtSum := "10001000000000000000"
	if len(rep.Bridge) != 1 {
		t.Fatalf("bridges %+v", rep.Bridge)
	}
	b := rep.Bridge[0]
	if b.LedgerTotal.String() != sum || b.StatementTotal.String() != stmtSum || !b.Unexplained.IsZero() {
		t.Fatalf("bridge %+v: want ledger %s, statement %s, nothing unexplained", b, sum, stmtSum)
	}
	amounts := map[string]string{}
	for _, d := range b.Differences {
		amounts[d.Class] = d.Amount.String()
	}
	if amounts["matched"] != "0" || amounts["missing_in_ledger"] != fmt.Sprint(-formats.MaxAmountMinor) {
		t.Errorf("class amounts %v", amounts)
	}
	if rep.MatchedLedger != n || rep.MatchedStatement != n {
		t.Errorf("matched %d and %d, want %d", rep.MatchedLedger, rep.MatchedStatement, n)
	}
	// What reconcile stored, read as text from its rows.
	if got := c.text(`SELECT ledger_total::text || ' ' || statement_total::text FROM reconciliation_totals WHERE tenant_id = $1`, c.tenant); got != sum+" "+stmtSum {
		t.Errorf("reconciliation_totals %s", got)
	}
	if got := c.text(`SELECT ledger_amount::text || ' ' || statement_amount::text FROM reconciliation_classes WHERE tenant_id = $1 AND class = 'matched'`, c.tenant); got != sum+" "+sum {
		t.Errorf("matched class amounts %s", got)
	}

	// The stored report, in every form (exit 3: the break needs a person).
	for _, f := range []string{"table", "csv", "json", "html"} {
		out := c.must(3, "report", "latest", "-o", f).stdout
		// The page groups thousands; the table does not.
		if (f == "table" && !strings.Contains(out, "100000000000000000.00 USD")) ||
			(f == "html" && !strings.Contains(out, "100,000,000,000,000,000.00 USD")) {
			t.Errorf("report %s does not show the ledger total:\n%s", f, out)
		}
	}
}

// TestDatabaseRefusesAmountsAboveTheCap guards the database's own copy of
// the cap (migration 00009), for a path that does not go through a reader.
func TestDatabaseRefusesAmountsAboveTheCap(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, q := range []struct{ table, sql string }{
		{"postings", `INSERT INTO postings (tenant_id, posting_key, kind, source, value_date, amount_minor, currency, direction, account, digest)
		              VALUES ($1, 'csv:x:big', 'clearing', 'x', '2026-11-29', $2, 'USD', 'C', 'counterparty:x', '\x00')`},
		{"legs", `INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
		          VALUES ($1, 1, 1, 'counterparty:x', 'C', $2, 'USD', '2026-11-29')`},
	} {
		tx, err := c.pool.Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, err = tx.Exec(context.Background(), q.sql, c.tenant, formats.MaxAmountMinor+1)
		tx.Rollback(context.Background()) //nolint:errcheck // nothing may stay
		var pe *pgconn.PgError
		// Citus passes on the shard's code and message, not the name of
		// the constraint; the message names it.
		named := errors.As(err, &pe) && (strings.Contains(pe.ConstraintName, "amount_cap") ||
			pgtest.Citus(t) && pe.ConstraintName == "" && strings.Contains(pe.Message, `constraint "`+q.table+`_amount_cap"`))
		if !named || pe.Code != pgerrcode.CheckViolation {
			t.Errorf("%s: an amount above the cap: %v, want the amount_cap check", q.table, err)
		}
	}
}
