package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/pgtest"
)

// distributedGolden is what the reconciliation scenario leaves in the
// ledger on one PostgreSQL, rendered without ids or times. On Citus the
// same scenario must leave exactly the same.
var distributedGolden = filepath.Join("testdata", "distributed_scenario.golden")

// distributedQueries render the scenario's ledger by content: the
// snapshot's postings, legs, notices, audit events and statement lines,
// the runs in an order of their content (which of four concurrent ingests
// of one file posts and which find duplicates is the order their claims
// reached the server), the verdicts counted, and the reconciliation side.
var distributedQueries = slices.Concat(
	slices.DeleteFunc(slices.Clone(snapshotQueries), func(q struct{ name, sql string }) bool { return q.name == "runs" }),
	[]struct{ name, sql string }{
		{"runs", `
SELECT kind, format, source, file_name, file_bytes, encode(file_sha256, 'hex'), status, progress, records,
       posted, duplicates, conflicts, quarantined, notices, skipped
  FROM runs WHERE tenant_id = $1 AND status <> 'rejected' ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15`},
		{"verdicts", `
SELECT verdict, needs_attention, count(*) FROM audit_events WHERE tenant_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`},
	},
	reconQueries)

// The acceptance scenario of running distributed: two ACH files, a
// corrected re-upload, returns, the scheme's copy of the files with planted
// breaks imported as a statement, reconcile, one correction approved by
// two operators, four concurrent ingests of one file, and a re-ingest. What
// the ledger then holds, by content, is a golden written on one PostgreSQL
// ('go test ./cmd/clearing -run TestTheDistributedScenario -rewrite'); on
// Citus (make test-citus) it must be the same, with every tenant table
// distributed.
func TestTheDistributedScenarioLeavesWhatOnePostgreSQLLeaves(t *testing.T) {
	t.Parallel()
	if doubleApply {
		t.Skip("the golden is of every command run once; CLEARING_TEST_DOUBLE_APPLY runs each twice")
	}
	c := newCLI(t)
	citus := pgtest.Citus(t)
	if citus {
		checkDistributedTables(t, c)
	}

	// Every command runs as the login a deployment gives it (README:
	// Roles): files and statements as a clearing_ingest login, reconcile
	// and approvals as clearing_approver logins. On Citus, a transaction
	// that touched a shard as the login and then as the owner (in a
	// routine) would be refused.
	ing, rec := *c, approverCLI(c, "carol")
	ing.url = loginURL(c, "ingest", "nightly")
	es := liveOnly(entries(73, 100))
	if len(es) < 71 {
		t.Fatalf("%d live entries, want 71", len(es))
	}
	day1, day2, day3 := es[:24], es[24:40], es[40:70]
	for i := range day2 {
		day2[i].EffectiveDate = day2[i].EffectiveDate.AddDate(0, 0, 1)
	}
	// The first file, its corrected re-upload with three more entries, and
	// the second day's file.
	ing.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), day1[:21]))
	h := ach.DefaultHeader(created.Add(4 * time.Hour))
	h.IDModifier, h.FirstBatch, h.BatchSize = "B", 40, 7
	if s := ing.ingest(0, c.achFile("day1-corrected.ach", h, day1))[0]; s.Posted != 3 || s.Duplicates != 21 {
		t.Fatalf("corrected re-upload: %+v, want 3 posted and 21 duplicates", s)
	}
	h2 := ach.DefaultHeader(created.Add(24 * time.Hour))
	h2.IDModifier = "C"
	ing.ingest(0, c.achFile("day2.ach", h2, day2))
	// Two returns, one of them of an entry of the corrected re-upload.
	ing.ingest(0, c.returnFile("returns.ach", ach.ReturnOf(day1[2], "R01", 1), ach.ReturnOf(day1[22], "R03", 2)))

	// The scheme's copy of both days, with breaks planted: an entry the
	// ledger lacks, one amount differs, one entry is missing, and the
	// first returned entry was never settled.
	copyOf := slices.Concat(slices.Clone(day1), slices.Clone(day2))
	copyOf[5].Amount += 75
	copyOf = slices.Delete(copyOf, 9, 10)
	copyOf = slices.Delete(copyOf, 2, 3)
	copyOf = append(copyOf, es[70])
	hc := ach.DefaultHeader(created.Add(30 * time.Hour))
	hc.IDModifier = "S"
	ing.must(0, "statement", "import", "--source", "ach", "--format", "ach", c.achFile("scheme-copy.ach", hc, copyOf))

	from := day1[0].EffectiveDate.AddDate(0, 0, -3).Format("2006-01-02")
	to := day2[0].EffectiveDate.AddDate(0, 0, 1).Format("2006-01-02")
	rep := rec.reconcile(3, from, to)
	if rep.MatchedLedger == 0 {
		t.Fatalf("reconcile matched nothing: %+v", rep)
	}
	// The correction of the entry the ledger lacks, above the four-eyes
	// threshold: one approval posts nothing, the same operator again is
	// refused, a second operator posts it.
	fix := byClass(c.corrections("--status", "proposed"), "missing_in_ledger")
	if fix.ID == 0 {
		t.Fatalf("no missing_in_ledger correction proposed: %+v", c.corrections())
	}
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1")
	c.approve(0, fix.ID, "alice")
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND kind = 'correction'`, c.tenant); n != 0 {
		t.Fatal("one approval posted a correction above the threshold")
	}
	if r := c.approve(1, fix.ID, "alice"); !strings.Contains(r.stderr, "different operator") {
		t.Fatalf("the same operator twice:\n%v", r)
	}
	c.approve(0, fix.ID, "bob")
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND kind = 'correction'`, c.tenant); n != 1 {
		t.Fatalf("%d correction postings after two approvals, want 1", n)
	}

	// Four processes ingest the third day's file at once, then it is
	// ingested again.
	f3 := c.achFile("day3.ach", ach.DefaultHeader(created.Add(48*time.Hour)), day3)
	sums := summaries(t, ing.concurrently(slices.Repeat([][]string{{"-o", "json", "ingest", "--chunk-size", "7", f3}}, 4)))
	var posted, dups int64
	for _, s := range sums {
		posted, dups = posted+s.Posted, dups+s.Duplicates
	}
	if posted != int64(len(day3)) || dups != 3*int64(len(day3)) {
		t.Fatalf("four concurrent ingests: %d posted and %d duplicates, want %d and %d", posted, dups, len(day3), 3*len(day3))
	}
	if s := ing.ingest(0, f3)[0]; s.Posted != 0 || s.Duplicates != int64(len(day3)) {
		t.Fatalf("re-ingest: %+v, want nothing posted and %d duplicates", s, len(day3))
	}

	nightly, _ := loginName(c, "nightly")
	if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND login <> $2`, c.tenant, nightly); n != 0 {
		t.Fatalf("%d runs were not started by the ingest login %s", n, nightly)
	}
	if v := c.verifyJSON(0); !v.OK {
		t.Fatalf("verify: %+v", v)
	}
	got := renderCells(t, c, distributedQueries)
	if f := flag.Lookup("rewrite"); f != nil && f.Value.String() == "true" {
		if citus {
			t.Fatal("the golden is written on one PostgreSQL: run -rewrite without make test-citus")
		}
		if err := os.WriteFile(distributedGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(distributedGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("the ledger differs from what the scenario leaves on one PostgreSQL (%s):\n%s", distributedGolden, diffLines(string(want), got))
	}
}

// renderCells is cli.render with each value as the scenarios print it
// (sqlCell): numeric as its digits, not as pgx's struct.
func renderCells(t *testing.T, c *cli, queries []struct{ name, sql string }) string {
	t.Helper()
	var b strings.Builder
	for _, q := range queries {
		fmt.Fprintf(&b, "== %s\n", q.name)
		rows, err := c.pool.Query(context.Background(), q.sql, c.tenant)
		if err != nil {
			t.Fatalf("%s: %v", q.name, err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatalf("%s: %v", q.name, err)
			}
			cells := make([]string, len(vals))
			for i, v := range vals {
				cells[i] = sqlCell(v)
			}
			b.WriteString(strings.Join(cells, "|") + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q.name, err)
		}
	}
	return b.String()
}

// checkDistributedTables fails the test unless every table of the schema
// with a tenant_id is in pg_dist_partition, hash-distributed by tenant_id
// and co-located with postings, and every other table but goose's own is a
// reference table.
func checkDistributedTables(t *testing.T, c *cli) {
	t.Helper()
	rows, err := c.pool.Query(context.Background(), `
SELECT c.relname::text, coalesce(d.partmethod::text, ''), coalesce(column_to_column_name(d.logicalrelid, d.partkey), ''),
       d.colocationid IS NOT DISTINCT FROM (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'postings'::regclass),
       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
  FROM pg_class c LEFT JOIN pg_dist_partition d ON d.logicalrelid = c.oid
 WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND c.relname <> 'clearing_schema_version'
 ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	type table struct {
		Name, Method, Column string
		Colocated, Tenant    bool
	}
	tables, err := pgx.CollectRows(rows, pgx.RowToStructByPos[table])
	if err != nil {
		t.Fatal(err)
	}
	var tenant []string
	for _, tb := range tables {
		switch {
		case tb.Tenant && (tb.Method != "h" || tb.Column != "tenant_id" || !tb.Colocated):
			t.Errorf("tenant table %s is not hash-distributed by tenant_id and co-located with postings: %+v", tb.Name, tb)
		case !tb.Tenant && tb.Method != "n":
			t.Errorf("%s has no tenant_id and is not a reference table: %+v", tb.Name, tb)
		}
		if tb.Tenant {
			tenant = append(tenant, tb.Name)
		}
	}
	// The tables README lists, at least.
	for _, name := range []string{"postings", "legs", "notices", "audit_events", "runs", "statement_lines", "statement_balances",
		"reconciliations", "reconciliation_totals", "reconciliation_classes", "discrepancies", "corrections",
		"correction_decisions", "config", "seals", "ledger_locks", "quarantine", "breaks"} {
		if !slices.Contains(tenant, name) {
			t.Errorf("%s is not among the distributed tenant tables %v", name, tenant)
		}
	}
}
