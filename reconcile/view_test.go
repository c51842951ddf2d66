package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/report"
	"github.com/clearing-dev/clearing/reconcile"
)

// A report reads its discrepancies twice, once to check and sum them and
// once to list them. View reads both in one snapshot: breaks acknowledged
// by another session between the two readings change neither, so the
// verdict's counts, the auditor's form and the list agree; the next View
// shows them acknowledged.
func TestAReportReadsItsDiscrepanciesInOneSnapshot(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	const n = 12
	es := liveEntries(37, n)
	ingestFile(t, pool, achFile(t, es), ingest.Options{Tenant: tenant})
	var lines []stmtLine
	for _, e := range es {
		l := lineOf(e)
		l.amount++ // every entry a break
		lines = append(lines, l)
	}
	if _, err := ingest.Statement(ctx, pool, statementFile(t, lines),
		ingest.StatementOptions{Tenant: tenant, Source: "ach", Hasher: hasher()}); err != nil {
		t.Fatal(err)
	}
	day := es[0].EffectiveDate
	id, err := reconcile.Run(ctx, pool, reconcile.Options{Tenant: tenant, Source: "ach", From: day, To: day,
		WindowDays: reconcile.DefaultWindowDays})
	if err != nil {
		t.Fatal(err)
	}
	acknowledgeAll := func() {
		rows, err := pool.Query(ctx, `SELECT id FROM breaks WHERE tenant_id = $1`, tenant)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for rows.Next() {
			var b int64
			if err := rows.Scan(&b); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, b)
		}
		if rows.Close(); rows.Err() != nil || len(ids) != n {
			t.Fatalf("%d breaks (%v), want %d", len(ids), rows.Err(), n)
		}
		for _, b := range ids {
			if err := reconcile.Acknowledge(ctx, pool, tenant, b, "known"); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func(between func()) report.Report {
		var doc report.Report
		err := reconcile.View(ctx, pool, tenant, id, func(_ ledger.Querier, r *report.Report) error {
			inner, readings := r.Stream, 0
			r.Stream = func(yield func(*report.Discrepancy) error) error {
				err := inner(yield)
				if readings++; readings == 1 && between != nil {
					between()
				}
				return err
			}
			var b bytes.Buffer
			if err := report.Write(&b, output.JSON, r); err != nil {
				return err
			}
			if readings != 2 {
				t.Errorf("the discrepancies were read %d times, want 2", readings)
			}
			return json.Unmarshal(b.Bytes(), &doc)
		})
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	check := func(doc report.Report, acknowledged bool) {
		t.Helper()
		listed, agedAcked := 0, 0
		for _, d := range doc.Discrepancies {
			if d.Break && d.Acknowledged == acknowledged {
				listed++
			}
		}
		for _, a := range doc.BreakAges {
			agedAcked += a.Acknowledged
		}
		open := doc.Bridge[0].Auditor.Open.Count
		if acknowledged {
			open = doc.Bridge[0].Auditor.Acknowledged.Count
		}
		if listed != n || open != n || agedAcked != map[bool]int{true: n}[acknowledged] {
			t.Errorf("acknowledged %t: %d breaks listed so, the auditor's form counts %d, the ages %d acknowledged; want %d",
				acknowledged, listed, open, agedAcked, n)
		}
	}
	check(read(acknowledgeAll), false)
	check(read(nil), true)
}
