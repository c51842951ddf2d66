package ledger_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/schema"
)

// LookupKey finds a posted key with the posting's row and legs as the
// database holds them, and nothing for a key never posted, not even for a
// prefix of a posted one.
func TestLookupKey(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	es := liveEntries(11, 8)
	ingestFile(t, pool, achFile(t, "day1.ach", es), ingest.Options{})
	e := es[3]

	l, err := ledger.LookupKey(ctx, pool, tenant, e.Key())
	if err != nil {
		t.Fatal(err)
	}
	if !l.Found() || l.Posting == nil {
		t.Fatalf("lookup of posted %s found %+v", e.Key(), l)
	}
	p := l.Posting
	var id, amount int64
	var direction, account string
	if err := pool.QueryRow(ctx, `SELECT id, amount_minor, direction, account FROM postings WHERE tenant_id = $1 AND posting_key = $2`,
		tenant, e.Key()).Scan(&id, &amount, &direction, &account); err != nil {
		t.Fatal(err)
	}
	if p.ID != id || p.Amount != amount || p.Amount != e.Amount || p.Direction != direction || p.Account != account ||
		p.Kind != "clearing" || p.Source != "ach" || p.File != "day1.ach" {
		t.Errorf("lookup: %+v\nwant the row: id %d, amount %d (entry %d), direction %s, account %s, a clearing posting of ach from day1.ach",
			p, id, amount, e.Amount, direction, account)
	}
	if got := fmt.Sprint(p.Legs); got != legsOf(t, pool, id) {
		t.Errorf("lookup's legs %s, the table's %s", got, legsOf(t, pool, id))
	}
	if len(p.Legs) != 2 || p.Legs[1].Account != "settlement:ach" || p.Legs[0].Direction == p.Legs[1].Direction {
		t.Errorf("legs %+v, want the customer's and settlement:ach's, one each way", p.Legs)
	}
	if len(l.Related) != 0 || len(l.Events) != 0 {
		t.Errorf("a key posted once has related postings %+v and events %+v", l.Related, l.Events)
	}

	for _, key := range []string{"ach:0000000000:2026-03-02:000000000000000", e.Key()[:len(e.Key())-1]} {
		if n := count(t, pool, `SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2`, tenant, key); n != 0 {
			t.Fatalf("%d postings under %s", n, key)
		}
		l, err := ledger.LookupKey(ctx, pool, tenant, key)
		if err != nil {
			t.Fatal(err)
		}
		if l.Found() {
			t.Errorf("lookup of unknown %s found %+v", key, l)
		}
	}
}

// legsOf prints the legs of posting id as the table holds them, in the
// form fmt gives []ledger.Leg.
func legsOf(t *testing.T, q ledger.Querier, id int64) string {
	t.Helper()
	rows, err := q.Query(context.Background(), `
SELECT leg_no, account, direction, amount_minor, currency FROM legs WHERE tenant_id = $1 AND posting_id = $2 ORDER BY leg_no`,
		tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	legs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.Leg])
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(legs)
}

// Balances are the legs netted per account: each customer's balance is
// what the table's legs sum to, settlement:ach takes the other side of
// every entry, and every leg of a currency sums to zero.
func TestBalancesNetTheLegs(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	es := liveEntries(12, 20)
	ingestFile(t, pool, achFile(t, "day1.ach", es), ingest.Options{})

	bs, err := ledger.Balances(ctx, pool, tenant, ledger.BalanceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(DISTINCT (account, currency)) FROM legs WHERE tenant_id = $1`, tenant); int64(len(bs)) != n {
		t.Fatalf("%d balances, the legs have %d accounts", len(bs), n)
	}
	total := money.Total{}
	for _, b := range bs {
		want := count(t, pool, `SELECT sum(CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END)
		                          FROM legs WHERE tenant_id = $1 AND account = $2 AND currency = $3`, tenant, b.Account, b.Currency)
		if b.Balance.Cmp(money.TotalOf(want)) != 0 || b.Credits.Sub(b.Debits).Cmp(b.Balance) != 0 {
			t.Errorf("%s %s: %+v, the legs net to %d", b.Account, b.Currency, b, want)
		}
		total = total.Add(b.Balance)
	}
	if !total.IsZero() {
		t.Errorf("the balances sum to %s, want 0", total)
	}
	if n := count(t, pool, `SELECT count(*) FROM (SELECT currency FROM legs WHERE tenant_id = $1 GROUP BY currency
	                         HAVING sum(CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END) <> 0) x`, tenant); n != 0 {
		t.Errorf("the legs of %d currencies do not sum to zero", n)
	}

	var settlement int64
	for _, e := range es {
		settlement -= signed(e)
	}
	s, err := ledger.Balances(ctx, pool, tenant, ledger.BalanceFilter{Account: "settlement:*"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0].Account != "settlement:ach" || s[0].Currency != "USD" || s[0].Balance.Cmp(money.TotalOf(settlement)) != 0 {
		t.Errorf("settlement balances %+v, want settlement:ach at %d USD", s, settlement)
	}
	before := es[0].EffectiveDate.AddDate(0, 0, -1)
	if early, err := ledger.Balances(ctx, pool, tenant, ledger.BalanceFilter{AsOf: &before}); err != nil || len(early) != 0 {
		t.Errorf("balances as of the day before every value date: %+v, %v; want none", early, err)
	}
}

// Verify passes a ledger as ingest left it, duplicates and all, and
// names the posting whose leg was changed behind the triggers' back, and
// the broken seal.
func TestVerifyFindsATamperedLeg(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	es := liveEntries(13, 10)
	f := achFile(t, "day1.ach", es)
	ingestFile(t, pool, f, ingest.Options{})
	ingestFile(t, pool, f, ingest.Options{}) // an audit trail of duplicates

	v, err := ledger.Verify(ctx, pool, tenant, schema.Routines())
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK || v.Postings != 10 || v.Legs != 20 {
		t.Fatalf("verify of a clean ledger: ok %v, %d postings, %d legs, want ok, 10 and 20: %+v", v.OK, v.Postings, v.Legs, failed(v))
	}
	if n := count(t, pool, `SELECT count(*) FROM seals WHERE tenant_id = $1`, tenant); v.Seals.Count != n || n == 0 {
		t.Errorf("verify counts %d seals, the table holds %d", v.Seals.Count, n)
	}

	key := es[4].Key()
	// On one PostgreSQL the triggers are disabled in the transaction that
	// changes the leg; on Citus on the coordinator and every shard, before
	// it and after it (pgtest.AlterTrigger).
	tamper := []string{`UPDATE legs SET amount_minor = amount_minor + 100
			  WHERE tenant_id = 'default' AND leg_no = 1
			    AND posting_id = (SELECT id FROM postings WHERE tenant_id = 'default' AND posting_key = '` + key + `')`}
	citus := pgtest.Citus(t)
	if citus {
		pgtest.AlterTrigger(t, pool, "legs", "DISABLE", "ALL")
	} else {
		tamper = append(append([]string{`ALTER TABLE legs DISABLE TRIGGER ALL`}, tamper...), `ALTER TABLE legs ENABLE TRIGGER ALL`)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, sql := range tamper {
			if _, err := tx.Exec(ctx, sql); err != nil {
				return fmt.Errorf("%s: %w", sql, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if citus {
		pgtest.AlterTrigger(t, pool, "legs", "ENABLE", "ALL")
	}
	if n := count(t, pool, `SELECT abs(sum(CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END))
	                          FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
	                         WHERE p.tenant_id = $1 AND p.posting_key = $2`, tenant, key); n != 100 {
		t.Fatalf("the tampered posting's legs net to %d, want 100", n)
	}

	v, err = ledger.Verify(ctx, pool, tenant, schema.Routines())
	if err != nil {
		t.Fatal(err)
	}
	if v.OK {
		t.Fatal("verify passed a ledger with a changed leg")
	}
	wantFinding(t, v, "every posting balances per currency", "legs", key, "differ by 100")
	wantFinding(t, v, "every row is sealed and unchanged since", "legs", "", "changed")
}

// wantFinding fails the test unless check failed with a finding in table
// whose key and problem contain the texts given.
func wantFinding(t *testing.T, v ledger.Verification, check, table, key, problem string) {
	t.Helper()
	for _, c := range v.Checks {
		if c.Name != check {
			continue
		}
		for _, f := range c.Findings {
			if !c.OK && f.Table == table && strings.Contains(f.Key, key) && strings.Contains(f.Problem, problem) {
				return
			}
		}
		t.Fatalf("check %q: no finding in %s for %q saying %q; it found %+v", check, table, key, problem, c.Findings)
	}
	t.Fatalf("verify has no check %q", check)
}

// failed lists the checks that failed, for messages.
func failed(v ledger.Verification) []ledger.Check {
	var out []ledger.Check
	for _, c := range v.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// Applying the same file again posts nothing: every record is audited
// once as a duplicate of its posting, needing no attention, and the
// postings and legs are the first run's.
func TestReapplyingAFilePostsNothing(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	es := liveEntries(14, 12)
	f := achFile(t, "day1.ach", es)
	first := ingestFile(t, pool, f, ingest.Options{})
	if first.Posted != 12 || first.Duplicates != 0 {
		t.Fatalf("first ingest: %+v, want 12 posted", first)
	}
	again := ingestFile(t, pool, f, ingest.Options{})
	if again.Posted != 0 || again.Duplicates != 12 || again.RunID == first.RunID {
		t.Fatalf("second ingest: %+v, want 12 duplicates under a run of its own", again)
	}

	if p, l := count(t, pool, `SELECT count(*) FROM postings WHERE tenant_id = $1`, tenant),
		count(t, pool, `SELECT count(*) FROM legs WHERE tenant_id = $1`, tenant); p != 12 || l != 24 {
		t.Errorf("%d postings and %d legs after applying the file twice, want 12 and 24", p, l)
	}
	if n := count(t, pool, `SELECT count(*) FROM postings WHERE tenant_id = $1 AND run_id <> $2`, tenant, first.RunID); n != 0 {
		t.Errorf("%d postings of a run other than the first", n)
	}
	rows, err := pool.Query(ctx, `
SELECT verdict, count(*), count(*) FILTER (WHERE needs_attention), count(DISTINCT existing_posting_id), min(run_id)
  FROM audit_events WHERE tenant_id = $1 GROUP BY verdict ORDER BY verdict`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	type tally struct {
		Verdict                     string
		Events, Attention, Postings int64
		Run                         int64
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[tally])
	if err != nil {
		t.Fatal(err)
	}
	if want := []tally{{"duplicate", 12, 0, 12, again.RunID}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit events by verdict: %+v, want %+v", got, want)
	}

	l, err := ledger.LookupKey(ctx, pool, tenant, es[0].Key())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Events) != 1 || l.Events[0].Verdict != "duplicate" || l.Events[0].RunID != again.RunID ||
		l.Events[0].CollidedWith == nil || *l.Events[0].CollidedWith != es[0].Key() {
		t.Errorf("lookup's events of %s: %+v, want the second run's duplicate of it", es[0].Key(), l.Events)
	}
}
