package corrections

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	tenant = "default"
	source = "ach"
)

// valueDate is the statement date of every break in these tests, inside
// the period of every reconciliation they store.
var valueDate = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// db is one test's database: owner is its owner (the superuser that
// migrated it, whose approvals never count), url its connection string.
type db struct {
	t     *testing.T
	owner *pgxpool.Pool
	url   string
}

func newDB(t *testing.T) *db {
	t.Helper()
	pool := pgtest.Pool(t)
	return &db{t: t, owner: pool, url: pool.Config().ConnString()}
}

func (d *db) exec(sql string, args ...any) {
	d.t.Helper()
	if _, err := d.owner.Exec(context.Background(), sql, args...); err != nil {
		d.t.Fatalf("%s: %v", sql, err)
	}
}

func (d *db) count(sql string, args ...any) int64 {
	d.t.Helper()
	var n int64
	if err := d.owner.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		d.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// reconciliation stores a reconciliation run of the source over the
// period around valueDate, as reconcile does before its discrepancies, and
// returns its id.
func (d *db) reconciliation() int64 {
	d.t.Helper()
	var id int64
	if err := d.owner.QueryRow(context.Background(), `
INSERT INTO reconciliations (tenant_id, source, period_from, period_to, window_days, tolerance_minor)
VALUES ($1, $2, $3::date - 1, $3::date + 1, 3, 0) RETURNING id`, tenant, source, valueDate).Scan(&id); err != nil {
		d.t.Fatal(err)
	}
	return id
}

// statementLine stores a credit line of the statement, as statement import
// would, and returns its id.
func (d *db) statementLine(key string, amount int64, lineType string) int64 {
	d.t.Helper()
	var id int64
	if err := d.owner.QueryRow(context.Background(), `
INSERT INTO statement_lines (tenant_id, source, line_key, occurrence, reference, amount_minor, currency, direction,
                             value_date, line_type, digest, run_id, record_no, line)
VALUES ($1, $2, $3, 1, $3, $4, 'USD', 'C', $5, $6, '\x00', 1, 1, 1) RETURNING id`,
		tenant, source, key, amount, valueDate, lineType).Scan(&id); err != nil {
		d.t.Fatal(err)
	}
	return id
}

// listBreak stores, in reconciliation run, the discrepancy that
// reconciliation lists for a statement line the ledger lacks (class
// missing_in_ledger or unbooked_fee), naming the correction it proposes.
func (d *db) listBreak(run, line int64, key string, amount int64, class string) {
	d.t.Helper()
	d.exec(`
INSERT INTO discrepancies (tenant_id, run_id, seq, class, reason, is_break, explanation, reference, line_id, line_key,
                           line_type, statement_amount, statement_currency, statement_date, statement_run_id,
                           statement_line, correction_key)
SELECT $1, $2, coalesce(max(seq), 0) + 1, $5, $5, true, 'the ledger has no posting for it', $4, $3, $4,
       l.line_type, $6, 'USD', $7, 1, 1, $4 || ':correction:' || $5
  FROM statement_lines l LEFT JOIN discrepancies d ON d.tenant_id = $1 AND d.run_id = $2
 WHERE l.tenant_id = $1 AND l.id = $3
 GROUP BY l.line_type`, tenant, run, line, key, class, amount, valueDate)
}

// propose proposes run's corrections as reconciliation does, in a
// transaction of its own, and returns how many were new.
func (d *db) propose(run int64) int64 {
	d.t.Helper()
	var n int64
	err := pgx.BeginFunc(context.Background(), d.owner, func(tx pgx.Tx) error {
		var err error
		n, err = Propose(context.Background(), tx, Proposal{Tenant: tenant, Run: run, Source: source,
			AdjustmentsAccount: "adjustments:" + source, SuspenseAccount: "suspense:" + source})
		return err
	})
	if err != nil {
		d.t.Fatal(err)
	}
	return n
}

// missingInLedger stores a statement line the ledger lacks, a
// reconciliation that lists it, and that run's proposal, and returns the
// run and the correction.
func (d *db) missingInLedger(key string, amount int64) (int64, Correction) {
	d.t.Helper()
	line := d.statementLine(key, amount, "payment")
	run := d.reconciliation()
	d.listBreak(run, line, key, amount, "missing_in_ledger")
	if n := d.propose(run); n != 1 {
		d.t.Fatalf("run %d proposed %d corrections, want 1", run, n)
	}
	cs, err := List(context.Background(), d.owner, tenant, "", run)
	if err != nil || len(cs) != 1 {
		d.t.Fatalf("corrections of run %d: %+v, %v", run, cs, err)
	}
	return run, cs[0]
}

// approver returns a pool connected as a login of its own for name, a
// member of clearing_approver, as operators are set up. Roles are
// cluster-wide, so the name is unique to the test, which drops the role
// when it ends.
func (d *db) approver(name string) *pgxpool.Pool {
	d.t.Helper()
	h := fnv.New32a()
	h.Write([]byte(d.t.Name()))
	role := fmt.Sprintf("c%08x_%s", h.Sum32(), name)
	d.exec(fmt.Sprintf(`CREATE ROLE %s LOGIN IN ROLE clearing_approver`, pgx.Identifier{role}.Sanitize()))
	d.t.Cleanup(func() {
		d.owner.Exec(context.Background(), "DROP ROLE IF EXISTS "+pgx.Identifier{role}.Sanitize())
	})
	u, err := pgtest.AsUser(d.url, role)
	if err != nil {
		d.t.Fatal(err)
	}
	pool, err := pgxpool.New(context.Background(), u)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(pool.Close) // before the role is dropped
	return pool
}

// oneApprovalUpTo sets the tenant's four-eyes threshold in USD, as the
// owner does with `clearing config set`.
func (d *db) oneApprovalUpTo(major string) {
	d.t.Helper()
	d.exec(`INSERT INTO config (tenant_id, key, value) VALUES ($1, 'corrections.four_eyes_above.USD', $2)`, tenant, major)
}

// posted returns how many postings and legs the ledger holds under key.
func (d *db) posted(key string) (postings, legs int64) {
	d.t.Helper()
	postings = d.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2`, tenant, key)
	legs = d.count(`SELECT count(*) FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
	                 WHERE p.tenant_id = $1 AND p.posting_key = $2`, tenant, key)
	return postings, legs
}

func (d *db) decisions(id int64) int64 {
	d.t.Helper()
	return d.count(`SELECT count(*) FROM correction_decisions WHERE tenant_id = $1 AND correction_id = $2`, tenant, id)
}

// Reconciling the same break again, in the same run or a later one,
// proposes nothing new: the correction's key is derived from the line, and
// the table holds one row for it, as the first run proposed it. A rejected
// correction is not proposed again either.
func TestProposingTwiceIsOneProposal(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	key := "ach:1234567890:2026-11-30:091000010000001"
	run, c := d.missingInLedger(key, 1250)
	want := Correction{ID: c.ID, Key: key + ":correction:missing_in_ledger", PostingKey: key, Class: "missing_in_ledger",
		Status: "proposed", Source: source, Reference: key, Amount: 1250, Currency: "USD", Direction: "C",
		CounterAccount: "suspense:ach", SettlementAccount: "settlement:ach", ProposedByRun: run, Needed: 2, ApprovedBy: []Approver{}}
	c.ValueDate, c.CreatedAt, c.Explanation, c.refersTo, c.lineID = time.Time{}, time.Time{}, "", nil, nil
	if fmt.Sprint(c) != fmt.Sprint(want) {
		t.Fatalf("proposed\n%+v\nwant\n%+v", c, want)
	}

	if n := d.propose(run); n != 0 {
		t.Errorf("proposing run %d again added %d corrections", run, n)
	}
	line := d.count(`SELECT id FROM statement_lines WHERE tenant_id = $1 AND line_key = $2`, tenant, key)
	later := d.reconciliation()
	d.listBreak(later, line, key, 1250, "missing_in_ledger")
	if n := d.propose(later); n != 0 {
		t.Errorf("a later run listing the same break added %d corrections", n)
	}
	if n := d.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1`, tenant); n != 1 {
		t.Fatalf("%d corrections after proposing one break three times, want 1", n)
	}
	if n := d.count(`SELECT proposed_by_run FROM corrections WHERE tenant_id = $1`, tenant); n != run {
		t.Errorf("the correction is now of run %d, want the run that first proposed it, %d", n, run)
	}

	if _, err := Reject(context.Background(), d.approver("alice"), tenant, c.ID, "Alice", "the bank withdrew the line"); err != nil {
		t.Fatal(err)
	}
	again := d.reconciliation()
	d.listBreak(again, line, key, 1250, "missing_in_ledger")
	if n := d.propose(again); n != 0 {
		t.Errorf("a rejected correction was proposed again (%d new)", n)
	}
	if s := d.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1 AND status = 'rejected'`, tenant); s != 1 {
		t.Errorf("the rejected correction is no longer rejected")
	}
}

// A zero difference and a discrepancy that names no correction propose
// nothing.
func TestProposeOnlyWhatMovesMoney(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	line := d.statementLine("ach:fee:1", 300, "fee")
	run := d.reconciliation()
	d.listBreak(run, line, "ach:fee:1", 300, "unbooked_fee")
	d.listBreak(run, d.statementLine("ach:zero:1", 0, "payment"), "ach:zero:1", 0, "missing_in_ledger")
	d.exec(`INSERT INTO discrepancies (tenant_id, run_id, seq, class, reason, is_break, explanation, reference,
                                       statement_amount, statement_currency, statement_date)
            VALUES ($1, $2, 99, 'duplicate_in_statement', 'x', true, 'x', 'r', 10, 'USD', $3)`, tenant, run, valueDate)
	if n := d.propose(run); n != 1 {
		t.Fatalf("proposed %d corrections, want the fee's alone", n)
	}
	cs, err := List(context.Background(), d.owner, tenant, "proposed", run)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].PostingKey != "ach:fee:1:correction:unbooked_fee" || cs[0].CounterAccount != "adjustments:ach" {
		t.Fatalf("proposed %+v, want the fee posted under its correction key against adjustments", cs)
	}
}

// Below the threshold one approval posts the correction, through the
// ledger, in the approval's transaction; approving it again (another
// operator, or the same one) records nothing and posts nothing.
func TestApprovingAPostedCorrectionAgainPostsNothing(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.oneApprovalUpTo("1000")
	key := "ach:1234567890:2026-11-30:091000010000002"
	_, c := d.missingInLedger(key, 1250)
	alice, bob := d.approver("alice"), d.approver("bob")

	a, err := Approve(context.Background(), alice, tenant, c.ID, "Alice", "bank confirmed")
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != "posted" || a.PostingKey != key || a.Approvals != 1 || a.Needed != 1 {
		t.Fatalf("approval: %+v, want posted under %s by 1 of 1", a, key)
	}
	if p, l := d.posted(key); p != 1 || l != 2 {
		t.Fatalf("the ledger holds %d postings and %d legs under %s, want 1 and 2", p, l, key)
	}
	if k := d.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2 AND kind = 'correction'`,
		tenant, key); k != 1 {
		t.Errorf("the posting under %s is not of kind correction", key)
	}

	for _, who := range []struct {
		pool *pgxpool.Pool
		name string
	}{{bob, "Bob"}, {alice, "Alice"}} {
		a, err := Approve(context.Background(), who.pool, tenant, c.ID, who.name, "again")
		if err != nil {
			t.Fatalf("%s approving the posted correction: %v", who.name, err)
		}
		if a.Status != "posted" || a.Note != "already posted; nothing more to do" {
			t.Errorf("%s approving the posted correction: %+v", who.name, a)
		}
	}
	if p, l := d.posted(key); p != 1 || l != 2 {
		t.Fatalf("approving again left %d postings and %d legs under %s, want 1 and 2", p, l, key)
	}
	if n := d.decisions(c.ID); n != 1 {
		t.Errorf("%d decisions recorded, want alice's alone", n)
	}
	if _, err := Reject(context.Background(), bob, tenant, c.ID, "Bob", "too late"); !errors.Is(err, ErrAlreadyPosted) {
		t.Errorf("rejecting a posted correction: %v, want ErrAlreadyPosted", err)
	}
}

// Above the threshold (here: no threshold, so every correction) two logins
// and two people must approve. The same login twice, the same person under
// another login, and the owner of the schema do not count; the second
// operator's approval posts.
func TestFourEyes(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	key := "ach:1234567890:2026-11-30:091000010000003"
	_, c := d.missingInLedger(key, 990000)
	ctx := context.Background()

	if _, err := Approve(ctx, d.owner, tenant, c.ID, "Owner", "I own the schema"); !errors.Is(err, ErrNotPermitted) {
		t.Fatalf("the owner's approval: %v, want ErrNotPermitted", err)
	}
	alice := d.approver("alice")
	a, err := Approve(ctx, alice, tenant, c.ID, "Alice", "first")
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != "approved" || a.Approvals != 1 || a.Needed != 2 {
		t.Fatalf("first approval: %+v, want approved by 1 of 2", a)
	}
	if _, err := Approve(ctx, alice, tenant, c.ID, "Alice Again", "second"); !errors.Is(err, ErrSameOperator) {
		t.Errorf("the same login again: %v, want ErrSameOperator", err)
	}
	if _, err := Approve(ctx, d.approver("alice2"), tenant, c.ID, " alice ", "second"); !errors.Is(err, ErrSameOperator) {
		t.Errorf("the same person under another login: %v, want ErrSameOperator", err)
	}
	if p, _ := d.posted(key); p != 0 {
		t.Fatalf("%d postings before the second operator approved", p)
	}
	a, err = Approve(ctx, d.approver("bob"), tenant, c.ID, "Bob", "second")
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != "posted" || a.Approvals != 2 {
		t.Fatalf("second operator's approval: %+v, want posted by 2 of 2", a)
	}
	if p, l := d.posted(key); p != 1 || l != 2 {
		t.Fatalf("the ledger holds %d postings and %d legs under %s, want 1 and 2", p, l, key)
	}
}

// A correction whose discrepancy is gone is refused, records no decision
// and posts nothing: when a later reconciliation of its period no longer
// lists it, and when the ledger now holds its money.
func TestStaleCorrectionIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("a later run no longer lists it", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		d.oneApprovalUpTo("1000")
		key := "ach:1234567890:2026-11-30:091000010000004"
		_, c := d.missingInLedger(key, 1250)
		d.reconciliation() // matched everything
		_, err := Approve(ctx, d.approver("alice"), tenant, c.ID, "Alice", "bank confirmed")
		if !errors.Is(err, ErrStale) {
			t.Fatalf("approving: %v, want ErrStale", err)
		}
		if p, _ := d.posted(key); p != 0 || d.decisions(c.ID) != 0 {
			t.Fatalf("a stale approval left %d postings and %d decisions", p, d.decisions(c.ID))
		}
	})
	t.Run("the money arrived", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		d.oneApprovalUpTo("1000")
		key := "ach:1234567890:2026-11-30:091000010000005"
		_, c := d.missingInLedger(key, 1250)
		// The original record arrives under its own key, as ingest posts it.
		err := pgx.BeginFunc(ctx, d.owner, func(tx pgx.Tx) error {
			var id int64
			if err := tx.QueryRow(ctx, `
INSERT INTO postings (tenant_id, posting_key, kind, source, reference, value_date, amount_minor, currency, direction,
                      account, digest)
VALUES ($1, $2, 'clearing', $3, $2, $4, 1250, 'USD', 'C', 'customer:1', '\x01') RETURNING id`,
				tenant, key, source, valueDate).Scan(&id); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `
INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
VALUES ($1, $2, 1, 'customer:1', 'C', 1250, 'USD', $3), ($1, $2, 2, 'settlement:ach', 'D', 1250, 'USD', $3)`,
				tenant, id, valueDate)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Approve(ctx, d.approver("alice"), tenant, c.ID, "Alice", "bank confirmed")
		if !errors.Is(err, ErrStale) {
			t.Fatalf("approving: %v, want ErrStale", err)
		}
		if p, _ := d.posted(key); p != 1 || d.decisions(c.ID) != 0 {
			t.Fatalf("a stale approval left %d postings under the key (want the original's alone) and %d decisions",
				p, d.decisions(c.ID))
		}
	})
}

// Decisions on a correction that does not exist, or that was rejected,
// and decisions without a name or a reason are refused with the error
// callers branch on.
func TestRefusedDecisions(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	ctx := context.Background()
	_, c := d.missingInLedger("ach:1234567890:2026-11-30:091000010000006", 1250)
	alice := d.approver("alice")
	if _, err := Approve(ctx, alice, tenant, c.ID+100, "Alice", "why"); !errors.Is(err, ErrCorrectionNotFound) {
		t.Errorf("approving no correction: %v, want ErrCorrectionNotFound", err)
	}
	if _, err := Get(ctx, d.owner, tenant, c.ID+100); !errors.Is(err, ErrCorrectionNotFound) {
		t.Errorf("showing no correction: %v, want ErrCorrectionNotFound", err)
	}
	if _, err := Approve(ctx, alice, tenant, c.ID, "  ", "why"); !errors.Is(err, ErrInvalidDecision) {
		t.Errorf("approving without a name: %v, want ErrInvalidDecision", err)
	}
	r, err := Reject(ctx, alice, tenant, c.ID, "Alice", "the bank withdrew the line")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "rejected" || len(r.Decisions) != 1 || r.Decisions[0].Login == "" {
		t.Fatalf("rejected: %+v, want rejected with alice's login recorded", r)
	}
	if _, err := Approve(ctx, d.approver("bob"), tenant, c.ID, "Bob", "approve anyway"); !errors.Is(err, ErrRejectedCorrection) {
		t.Errorf("approving a rejected correction: %v, want ErrRejectedCorrection", err)
	}
}
