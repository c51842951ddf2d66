package main

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testBench is a bench on a migrated database of the test's own.
func testBench(t *testing.T) *bench {
	t.Helper()
	srv := &server{pool: pgtest.Pool(t)}
	return newBench("", t.TempDir(), srv, 1000, 1, time.Minute, io.Discard)
}

// testRows are n posting rows of distinct keys, credits and debits.
func testRows(n int) []postingRow {
	rows := make([]postingRow, n)
	for i := range rows {
		dir := "C"
		if i%3 == 0 {
			dir = "D"
		}
		rows[i] = postingRow{
			key: fmt.Sprintf("k%07d", i), kind: "clearing", reference: fmt.Sprintf("r%07d", i),
			valueDate: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), amount: int64(100 + i), currency: "USD",
			direction: dir, account: "acct:" + fmt.Sprint(i%7), last4: "1234", line: int64(i + 1),
		}
	}
	return rows
}

// TestFloorWritesWhatALedgerMust runs the floor over more rows than one
// chunk holds and checks what its twins held: a posting and two legs per
// row, an audit row per row naming its posting, and two finished runs. The
// twins are gone afterwards.
func TestFloorWritesWhatALedgerMust(t *testing.T) {
	t.Parallel()
	b := testBench(t)
	ctx := context.Background()
	n := ingest.DefaultChunkSize + 501
	res, err := b.floor(ctx, "ach", testRows(n), []floorWay{floorOnConflict, floorPlain})
	if err != nil {
		t.Fatal(err)
	}
	if res.postings != int64(n) || res.legs != 2*int64(n) || res.audit != int64(n) || res.runsDone != 2 {
		t.Errorf("the floor wrote %d postings, %d legs, %d audit rows, finished %d runs for %d rows", res.postings, res.legs, res.audit, res.runsDone, n)
	}
	for w, d := range res.ways {
		if d <= 0 {
			t.Errorf("%s: not measured", floorWay(w))
		}
	}
	if res.again <= 0 {
		t.Error("the re-ingest floor was not measured")
	}
	var left int
	err = b.srv.pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname IN ($1, $2, $3, $4)`,
		floorRuns, floorPostings, floorLegs, floorAudit).Scan(&left)
	if err != nil || left != 0 {
		t.Errorf("%d of the floor's tables left behind (%v)", left, err)
	}
}

// TestFloorOneWay measures only the way asked for.
func TestFloorOneWay(t *testing.T) {
	t.Parallel()
	b := testBench(t)
	res, err := b.floor(context.Background(), "csv", testRows(1200), []floorWay{floorPlain})
	if err != nil {
		t.Fatal(err)
	}
	if res.ways[floorOnConflict] != 0 || res.ways[floorPlain] <= 0 || res.postings != 1200 || res.audit != 1200 {
		t.Errorf("one way: %+v", res)
	}
}

// TestCopyStoredCopiesTheTenantsPostings checks that the independent
// check's baseline COPYs exactly the tenant's stored postings, ids
// included, into a table LIKE postings INCLUDING ALL, and drops it.
func TestCopyStoredCopiesTheTenantsPostings(t *testing.T) {
	t.Parallel()
	b := testBench(t)
	ctx := context.Background()
	insert := `INSERT INTO postings (tenant_id, posting_key, kind, source, reference, value_date, amount_minor, currency,
                      direction, account, digest)
SELECT $1, 'k' || g, 'clearing', 'ach', 'r' || g, DATE '2026-03-02', g, 'USD', 'C', 'a', '\x00'::bytea
  FROM generate_series(1, $2) g`
	for tenant, n := range map[string]int{b.tenant("check-1"): 1500, "someone-else": 300} {
		if _, err := b.srv.pool.Exec(ctx, insert, tenant, n); err != nil {
			t.Fatal(err)
		}
	}
	rows, took, err := b.copyStored(ctx, b.tenant("check-1"))
	if err != nil {
		t.Fatal(err)
	}
	if rows != 1500 || took <= 0 {
		t.Errorf("copied %d rows in %s, want the tenant's 1,500", rows, took)
	}
	var left int
	if err := b.srv.pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname = $1`, checkTable).Scan(&left); err != nil || left != 0 {
		t.Errorf("%s left behind (%d, %v)", checkTable, left, err)
	}
}
