package reconcile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/reconcile"
)

// Loading a run for its report looks up, for each discrepancy, the runs of
// its two sides, its break and its correction by their keys, also for a
// tenant the statistics do not know. A plan that enters an index by the
// tenant alone and filters the rest reads every run, break or correction
// of the tenant once per discrepancy (at 1,000,000 postings: 9,508
// discrepancies against 6,697 corrections, 15 s). The plan is read, not
// timed: a tenant analysed with its corrections, then another reconciled
// after it.
func TestLoadingARunLooksUpEachDiscrepancysRowsByKey(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	run := map[string]int64{}
	const n = 300
	// Both tenants' files and statements first, then their reconciliations.
	tenants := []string{"analysed", tenant}
	for _, tn := range tenants {
		es := liveEntries(31, n)
		ingestFile(t, pool, achFile(t, es), ingest.Options{Tenant: tn})
		var lines []stmtLine
		for _, e := range es {
			l := lineOf(e)
			l.amount++ // every entry an amount mismatch, each with its correction
			lines = append(lines, l)
		}
		if _, err := ingest.Statement(ctx, pool, statementFile(t, lines),
			ingest.StatementOptions{Tenant: tn, Source: "ach", Hasher: hasher()}); err != nil {
			t.Fatal(err)
		}
	}
	day := liveEntries(31, 1)[0].EffectiveDate
	for _, tn := range tenants {
		id, err := reconcile.Run(ctx, pool, reconcile.Options{Tenant: tn, Source: "ach", From: day, To: day,
			WindowDays: reconcile.DefaultWindowDays})
		if err != nil {
			t.Fatal(err)
		}
		if got := count(t, pool, `SELECT count(*) FROM corrections WHERE tenant_id = $1`, tn); got != int64(n) {
			t.Fatalf("tenant %s: %d corrections, want %d", tn, got, n)
		}
		run[tn] = id
		if tn == "analysed" {
			if _, err := pool.Exec(ctx, `ANALYZE corrections; ANALYZE breaks; ANALYZE discrepancies`); err != nil {
				t.Fatal(err)
			}
		}
	}
	// On Citus the plan is the shards': every task is shown, and the
	// tenant's shard must probe by key while the empty ones may scan.
	plan := explain(t, pool, pgtest.Citus(t), reconcile.DiscrepanciesOfRun, tenant, run[tenant])
	for table, key := range map[string]string{"corrections": "correction_key = d.correction_key", "breaks": "item_key = ",
		"runs": "id = d."} {
		probes, byKey := scansOf(plan, table), 0
		for _, p := range probes {
			i := strings.Index(p, "Index Cond")
			switch {
			case i >= 0 && strings.Contains(p[i:], key):
				byKey++
			case i >= 0:
				t.Errorf("%s is entered by an index without %s:\n%s\nwhole plan:\n%s", table, key, p, plan)
			}
		}
		if byKey == 0 {
			t.Errorf("%s is not looked up by %s:\n%s", table, key, plan)
		}
	}
}

// explain returns the plan of sql with args as text; allTasks shows the
// plan of every shard on Citus, not only one of them.
func explain(t *testing.T, pool *pgxpool.Pool, allTasks bool, sql string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if allTasks {
		if _, err := conn.Exec(ctx, `SET citus.explain_all_tasks = on`); err != nil {
			t.Fatal(err)
		}
		defer conn.Exec(ctx, `RESET citus.explain_all_tasks`) //nolint:errcheck // the connection goes back to a test's pool
	}
	rows, err := conn.Query(ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// scansOf returns each scan of table in a text plan, with the lines of its
// conditions.
func scansOf(plan, table string) []string {
	var out []string
	lines := strings.Split(plan, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "Scan") || !(strings.Contains(l, " on "+table+" ") || strings.Contains(l, " on "+table+"_")) {
			continue
		}
		scan := []string{l}
		for _, c := range lines[i+1:] {
			if strings.Contains(c, "->") || strings.TrimSpace(c) == "" {
				break
			}
			scan = append(scan, c)
		}
		out = append(out, strings.Join(scan, "\n"))
	}
	return out
}
