package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/bai2"
)

// A break keeps its identity across runs; acknowledged, it no longer makes
// reconcile exit 3 until its amount changes; a later run of its period that
// no longer shows it closes it.
func TestBreaksKeepTheirIdentityUntilTheyClose(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(slices.Collect(ach.GenerateEntries(31, 8)))[:4]
	c.ingest(0, c.achFile("day.ach", ach.DefaultHeader(created), es[:3]))

	// The bank shows every entry, the late one too, and a settlement total
	// that no batch or day nets to.
	day := es[0].EffectiveDate
	var lines []bai2.Line
	for _, e := range es {
		l := bai2.Line{Account: "555000111", Currency: "USD", Date: day, TypeCode: 165, Amount: e.Amount,
			BankReference: e.Trace, CustomerReference: e.Trace}
		if e.TransactionCode%10 == 2 {
			l.TypeCode = 455
		}
		lines = append(lines, l)
	}
	lines = append(lines, bai2.Line{Account: "555000111", Currency: "USD", Date: day, TypeCode: 166, Amount: 777,
		BankReference: "ACHSETT", CustomerReference: "ACHSETT"})
	var st bytes.Buffer
	if err := bai2.Generate(&st, slices.Values(lines), bai2.GenerateOptions{Sender: "121042882", Created: created}); err != nil {
		t.Fatal(err)
	}
	c.must(0, "statement", "import", "--source", "ach", c.file("bank.bai2", st.Bytes()))
	from := day.Format("2006-01-02")
	reconcile := func(want int) int64 {
		t.Helper()
		c.must(want, "reconcile", "--source", "ach", "--from", from, "--to", from)
		return c.count(`SELECT max(id) FROM reconciliations WHERE tenant_id = $1`, c.tenant)
	}
	type row struct {
		status           string
		firstRun, seenIn int64
	}
	breakOf := func(class string) row {
		t.Helper()
		var r row
		if err := c.pool.QueryRow(t.Context(), `SELECT status, first_run, seen_in_runs FROM breaks WHERE tenant_id = $1 AND class = $2`,
			c.tenant, class).Scan(&r.status, &r.firstRun, &r.seenIn); err != nil {
			t.Fatalf("break %s: %v", class, err)
		}
		return r
	}

	r1 := reconcile(3)
	reconcile(3)
	if n := c.count(`SELECT count(*) FROM breaks WHERE tenant_id = $1`, c.tenant); n != 2 {
		t.Fatalf("%d breaks in the inventory, want 2 (the late entry's line, the settlement total)", n)
	}
	for _, class := range []string{"missing_in_ledger", "settlement_total_mismatch"} {
		if got := breakOf(class); got != (row{"open", r1, 2}) {
			t.Fatalf("%s: %+v, want open since run %d, seen in 2 runs", class, got, r1)
		}
	}

	// A reader may not acknowledge; an approver may, and the database
	// records the login.
	var keys []string
	rows, err := c.pool.Query(t.Context(), `SELECT item_key FROM breaks WHERE tenant_id = $1 ORDER BY id`, c.tenant)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if r := c.must(1, "--database-url", loginURL(c, "reader", "rita"), "breaks", "ack", keys[0], "--reason", "looked at it"); !strings.Contains(r.stderr, "permission denied") {
		t.Fatalf("a reader's acknowledgement is refused, but not by the database\n%v", r)
	}
	args := append([]string{"--database-url", loginURL(c, "approver", "alice"), "breaks", "ack", "--reason", "the bank confirmed both"}, keys...)
	c.must(0, args...)
	if n := c.count(`SELECT count(*) FROM break_acks WHERE tenant_id = $1 AND login LIKE '%alice%'`, c.tenant); n != int64(len(keys)) {
		t.Fatalf("%d acknowledgements recorded with alice's login, want %d", n, len(keys))
	}
	// A break is named by its key or its id, with who acknowledged it.
	id := c.count(`SELECT id FROM breaks WHERE tenant_id = $1 AND class = 'settlement_total_mismatch'`, c.tenant)
	for _, arg := range []string{keys[len(keys)-1], itoa(id)} {
		if r := c.must(0, "breaks", "show", arg); !strings.Contains(r.stdout, "ACHSETT") || !strings.Contains(r.stdout, "the bank confirmed both") {
			t.Fatalf("breaks show %s does not show the settlement break and its acknowledgement\n%v", arg, r)
		}
	}
	reconcile(0)
	if got := breakOf("settlement_total_mismatch"); got.status != "acknowledged" || got.seenIn != 3 {
		t.Fatalf("after the acknowledgement: %+v", got)
	}

	// The late entry arrives: its line matches, so its break closes; the
	// day's net moves, so the settlement total differs by another amount
	// and needs a person again.
	c.ingest(0, c.achFile("late.ach", ach.DefaultHeader(created.Add(2*3600e9)), es[3:]))
	r4 := reconcile(3)
	if got := breakOf("missing_in_ledger"); got.status != "closed" {
		t.Fatalf("the late entry's break is %s, want closed", got.status)
	}
	if n := c.count(`SELECT count(*) FROM breaks WHERE tenant_id = $1 AND class = 'missing_in_ledger' AND closed_run = $2`, c.tenant, r4); n != 1 {
		t.Fatalf("the late entry's break was not closed by run %d", r4)
	}
	if got := breakOf("settlement_total_mismatch"); got.status != "open" || got.firstRun != r1 {
		t.Fatalf("the settlement break after its amount changed: %+v, want open, still first seen in run %d", got, r1)
	}
}
