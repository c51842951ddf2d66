package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/failpoint"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/settings"
)

// Sentinel errors of the correction workflow.
var (
	ErrCorrectionNotFound = errors.New("reconcile: no such correction")
	// ErrRejectedCorrection means the correction was rejected; rejection
	// is final.
	ErrRejectedCorrection = errors.New("reconcile: the correction was rejected")
	// ErrAlreadyPosted means a rejection came after the correction posted.
	ErrAlreadyPosted = errors.New("reconcile: the correction is already posted")
	// ErrSameOperator means the operator already approved this correction
	// and a second, different operator is needed.
	ErrSameOperator = errors.New("reconcile: four eyes: a different operator must approve")
	// ErrStale means the discrepancy the correction was proposed for no
	// longer exists.
	ErrStale = errors.New("reconcile: the discrepancy no longer exists")
	// ErrNotPermitted means the connection's role may not decide on
	// corrections.
	ErrNotPermitted = errors.New("reconcile: this database role may not decide on corrections")
)

// Correction is a proposed (or decided) correction.
type Correction struct {
	ID                int64      `json:"id"`
	Key               string     `json:"key"`
	PostingKey        string     `json:"posting_key"`
	Class             string     `json:"class"`
	Status            string     `json:"status"`
	Source            string     `json:"source"`
	Reference         string     `json:"reference"`
	Amount            int64      `json:"amount"`
	Currency          string     `json:"currency"`
	Direction         string     `json:"direction"`
	CounterAccount    string     `json:"counter_account"`
	SettlementAccount string     `json:"settlement_account"`
	ValueDate         time.Time  `json:"value_date"`
	Explanation       string     `json:"explanation"`
	ProposedByRun     int64      `json:"proposed_by_run"`
	CreatedAt         time.Time  `json:"created_at"`
	Approvals         int        `json:"approvals"`
	Decisions         []Decision `json:"decisions,omitempty"`

	refersTo *int64
	lineID   *int64
}

// Decision is one operator's approval or rejection.
type Decision struct {
	Decision string    `json:"decision"`
	Operator string    `json:"operator"`
	Reason   string    `json:"reason"`
	DBRole   string    `json:"db_role"`
	At       time.Time `json:"at"`
}

const selectCorrections = `
SELECT c.id, c.correction_key, c.posting_key, c.class, c.status, c.source, c.reference, c.amount_minor, c.currency,
       c.direction, c.counter_account, c.settlement_account, c.value_date, c.explanation, c.proposed_by_run,
       c.created_at, c.refers_to, c.line_id,
       (SELECT count(*) FROM correction_decisions d
         WHERE d.tenant_id = c.tenant_id AND d.correction_id = c.id AND d.decision = 'approve')
  FROM corrections c`

func scanCorrection(row pgx.CollectableRow) (Correction, error) {
	var c Correction
	err := row.Scan(&c.ID, &c.Key, &c.PostingKey, &c.Class, &c.Status, &c.Source, &c.Reference, &c.Amount,
		&c.Currency, &c.Direction, &c.CounterAccount, &c.SettlementAccount, &c.ValueDate, &c.Explanation,
		&c.ProposedByRun, &c.CreatedAt, &c.refersTo, &c.lineID, &c.Approvals)
	return c, err
}

// ListCorrections returns corrections, newest first, optionally only those
// of one status or proposed by one reconciliation run.
func ListCorrections(ctx context.Context, q ledger.Querier, tenant, status string, run int64) ([]Correction, error) {
	rows, err := q.Query(ctx, selectCorrections+`
 WHERE c.tenant_id = $1 AND ($2 = '' OR c.status = $2) AND ($3 = 0 OR c.proposed_by_run = $3)
 ORDER BY c.id DESC`, tenant, status, run)
	if err != nil {
		return nil, fmt.Errorf("reconcile: list corrections: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanCorrection)
	if err != nil {
		return nil, fmt.Errorf("reconcile: list corrections: %w", err)
	}
	if out == nil {
		out = []Correction{}
	}
	return out, nil
}

// GetCorrection returns one correction with its decisions.
func GetCorrection(ctx context.Context, q ledger.Querier, tenant string, id int64) (Correction, error) {
	c, err := getCorrection(ctx, q, tenant, id, "")
	if err != nil {
		return c, err
	}
	rows, err := q.Query(ctx, `
SELECT decision, operator, reason, db_role, decided_at FROM correction_decisions
 WHERE tenant_id = $1 AND correction_id = $2 ORDER BY id`, tenant, id)
	if err != nil {
		return c, fmt.Errorf("reconcile: decisions of correction %d: %w", id, err)
	}
	c.Decisions, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Decision, error) {
		var d Decision
		err := row.Scan(&d.Decision, &d.Operator, &d.Reason, &d.DBRole, &d.At)
		return d, err
	})
	return c, err
}

func getCorrection(ctx context.Context, q ledger.Querier, tenant string, id int64, lock string) (Correction, error) {
	rows, err := q.Query(ctx, selectCorrections+` WHERE c.tenant_id = $1 AND c.id = $2 `+lock, tenant, id)
	if err != nil {
		return Correction{}, fmt.Errorf("reconcile: correction %d: %w", id, err)
	}
	c, err := pgx.CollectExactlyOneRow(rows, scanCorrection)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("%w: %d", ErrCorrectionNotFound, id)
	}
	if err != nil {
		return c, fmt.Errorf("reconcile: correction %d: %w", id, err)
	}
	return c, nil
}

// Approval is what one approval did.
type Approval struct {
	ID         int64  `json:"id"`
	Key        string `json:"key"`
	Status     string `json:"status"` // approved (waiting for another operator), posted
	Approvals  int    `json:"approvals"`
	Needed     int    `json:"needed"`
	PostingKey string `json:"posting_key,omitempty"`
	Note       string `json:"note"`
}

// Approve records operator's approval of correction id and, when it is the
// last approval needed, posts the correction in the same transaction.
// Approving a posted correction again posts nothing; two approvals racing
// are serialised on the correction's row, and the ledger's unique key would
// refuse a second posting anyway. Above the four-eyes threshold two
// different operators must approve; the threshold is read from the
// database, never from a flag.
func Approve(ctx context.Context, pool *pgxpool.Pool, tenant string, id int64, operator, reason string) (Approval, error) {
	var a Approval
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		c, err := getCorrection(ctx, tx, tenant, id, "FOR UPDATE OF c")
		if err != nil {
			return err
		}
		// Count the approvals again now that the row is locked: the count
		// read with the row comes from the snapshot taken before waiting
		// for the lock, and would miss an approval committed meanwhile.
		if err := tx.QueryRow(ctx, `
SELECT count(*) FROM correction_decisions WHERE tenant_id = $1 AND correction_id = $2 AND decision = 'approve'`,
			tenant, c.ID).Scan(&c.Approvals); err != nil {
			return err
		}
		a = Approval{ID: c.ID, Key: c.Key, Status: c.Status, Approvals: c.Approvals}
		switch c.Status {
		case "posted":
			a.Needed = c.Approvals
			a.Note = "already posted; nothing more to do"
			a.PostingKey = c.PostingKey
			return nil
		case "rejected":
			return fmt.Errorf("%w: correction %d (%s); rejection is final", ErrRejectedCorrection, c.ID, c.Key)
		}
		// From here to commit no ingest of the source is between its
		// check for settling corrections and its commit: the check below
		// sees every original that arrived, and an ingest that starts now
		// sees this correction posted.
		if err := ledger.LockSource(ctx, tx, tenant, c.Source, true); err != nil {
			return err
		}
		if err := checkStillNeeded(ctx, tx, tenant, c); err != nil {
			return err
		}
		threshold, err := settings.Int(ctx, tx, tenant, settings.FourEyesAboveMinor)
		if err != nil {
			return err
		}
		a.Needed = 1
		if c.Amount > threshold {
			a.Needed = 2
		}
		tag, err := tx.Exec(ctx, `
INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason)
VALUES ($1, $2, 'approve', $3, $4)
ON CONFLICT (tenant_id, correction_id, operator, decision) DO NOTHING`, tenant, c.ID, operator, reason)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: %s already approved correction %d, which is above %d minor units and needs a second operator",
				ErrSameOperator, operator, c.ID, threshold)
		}
		a.Approvals = c.Approvals + 1
		a.Status = "approved"
		if a.Approvals < a.Needed {
			a.Note = fmt.Sprintf("approved by %d of %d operators; a different operator must approve before it posts", a.Approvals, a.Needed)
			_, err := tx.Exec(ctx, `UPDATE corrections SET status = 'approved' WHERE tenant_id = $1 AND id = $2`, tenant, c.ID)
			return err
		}
		if err := failpoint.Hit(failpoint.ApproveRecorded); err != nil {
			return err
		}
		postingID, err := ledger.PostCorrection(ctx, tx, ledger.Correction{
			Tenant: tenant, Key: c.PostingKey, Source: c.Source, Reference: c.Reference, RefersTo: c.refersTo,
			ValueDate: c.ValueDate, Amount: c.Amount, Currency: c.Currency, Direction: c.Direction,
			Counter: c.CounterAccount, Settlement: c.SettlementAccount, Detail: "correction of " + c.Class,
		})
		if errors.Is(err, ledger.ErrKeyTaken) {
			return fmt.Errorf("%w: the ledger already holds %s, so the money this correction would post has arrived", ErrStale, c.PostingKey)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE corrections SET status = 'posted', posting_id = $3 WHERE tenant_id = $1 AND id = $2`,
			tenant, c.ID, postingID)
		a.Status, a.PostingKey, a.Note = "posted", c.PostingKey, "posted under "+c.PostingKey
		return err
	})
	return a, permission(err)
}

// Reject records operator's rejection of correction id. Rejection is final;
// a posted correction cannot be rejected (a new correction undoes it).
func Reject(ctx context.Context, pool *pgxpool.Pool, tenant string, id int64, operator, reason string) (Correction, error) {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		c, err := getCorrection(ctx, tx, tenant, id, "FOR UPDATE OF c")
		if err != nil {
			return err
		}
		switch c.Status {
		case "posted":
			return fmt.Errorf("%w: correction %d posted under %s; reverse it with a new correction", ErrAlreadyPosted, c.ID, c.PostingKey)
		case "rejected":
			return nil // rejecting again changes nothing
		}
		if _, err := tx.Exec(ctx, `
INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason)
VALUES ($1, $2, 'reject', $3, $4)
ON CONFLICT (tenant_id, correction_id, operator, decision) DO NOTHING`, tenant, c.ID, operator, reason); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE corrections SET status = 'rejected' WHERE tenant_id = $1 AND id = $2`, tenant, c.ID)
		return err
	})
	if err != nil {
		return Correction{}, permission(err)
	}
	return GetCorrection(ctx, pool, tenant, id)
}

// permission turns the database's refusal into ErrNotPermitted.
func permission(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.InsufficientPrivilege {
		return fmt.Errorf("%w: %s", ErrNotPermitted, pgErr.Message)
	}
	return err
}

// checkStillNeeded refuses a correction whose discrepancy is gone: a later
// reconciliation of its period no longer lists it, or the ledger now holds
// what it would post.
func checkStillNeeded(ctx context.Context, tx pgx.Tx, tenant string, c Correction) error {
	var newer int64
	var listed bool
	err := tx.QueryRow(ctx, `
SELECT r.id, EXISTS (SELECT 1 FROM discrepancies d
                      WHERE d.tenant_id = r.tenant_id AND d.run_id = r.id AND d.correction_key = $4)
  FROM reconciliations r
 WHERE r.tenant_id = $1 AND r.source = $2 AND $3 BETWEEN r.period_from AND r.period_to
 ORDER BY r.id DESC LIMIT 1`, tenant, c.Source, c.ValueDate, c.Key).Scan(&newer, &listed)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("reconcile: check correction %d: %w", c.ID, err)
	}
	if err == nil && newer != c.ProposedByRun && !listed {
		return fmt.Errorf("%w: reconciliation run %d, newer than run %d that proposed correction %d, no longer shows %s for reference %s",
			ErrStale, newer, c.ProposedByRun, c.ID, c.Class, c.Reference)
	}
	var holder string
	switch c.Class {
	case "amount_mismatch":
		err = tx.QueryRow(ctx, `
SELECT p.posting_key
  FROM postings p JOIN statement_lines l ON l.tenant_id = p.tenant_id AND l.id = $3
 WHERE p.tenant_id = $1 AND p.id = $2
   AND (CASE p.direction WHEN 'C' THEN p.amount_minor ELSE -p.amount_minor END)
       + coalesce((SELECT sum(CASE a.direction WHEN 'C' THEN a.amount_minor ELSE -a.amount_minor END)
                     FROM postings a WHERE a.tenant_id = p.tenant_id AND a.refers_to = p.id AND a.kind = 'correction'), 0)
       = (CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END)`,
			tenant, c.refersTo, c.lineID).Scan(&holder)
	default:
		// missing_in_ledger, unbooked_fee: has the money arrived since? By
		// its key, or, for a correction keyed otherwise than the ledger's
		// records (a bank's statement), by reference, amount and direction
		// within the window in which ingest would take a record for it
		// (internal/ledger's settleWindowDays). A posting of the same kind
		// of key under another key is another payment, however alike:
		// trace numbers are reused.
		err = tx.QueryRow(ctx, `
SELECT p.posting_key FROM postings p
 WHERE p.tenant_id = $1 AND p.posting_key = $2
UNION ALL
SELECT p.posting_key FROM postings p
 WHERE p.tenant_id = $1 AND p.source = $3 AND p.reference = $4 AND p.currency = $5 AND p.kind IN ('clearing', 'correction')
   AND p.amount_minor = $6 AND p.direction = $7 AND abs(p.value_date - $8::date) <= 3
   AND split_part(p.posting_key, ':', 1) <> split_part($2, ':', 1)
 LIMIT 1`, tenant, c.PostingKey, c.Source, c.Reference, c.Currency, c.Amount, c.Direction, c.ValueDate).Scan(&holder)
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("reconcile: check correction %d: %w", c.ID, err)
	case c.Class == "amount_mismatch":
		return fmt.Errorf("%w: %s and the statement now agree", ErrStale, holder)
	}
	return fmt.Errorf("%w: the ledger now holds %s for reference %s", ErrStale, holder, c.Reference)
}
