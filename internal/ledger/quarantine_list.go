package ledger

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Sentinel errors of the quarantine.
var (
	// ErrNotHeld means nothing is quarantined under the key asked for.
	ErrNotHeld = errors.New("ledger: nothing is quarantined under that key")
	// ErrNotPermitted means the connection's login may not resolve held
	// records: it is not in clearing_approver, or it can act as the owner
	// of the schema.
	ErrNotPermitted = errors.New("ledger: this database role may not resolve quarantined records")
)

// sqlstateNotHeld is what clearing_quarantine_release raises for a key
// nothing is held under (migration 00017).
const sqlstateNotHeld = "CA010"

// Held is one quarantined record: what arrived, where, why it was held and
// what became of it. Its JSON form is part of the command line's contract.
type Held struct {
	Key           string    `json:"key"`
	OwnKey        string    `json:"own_key"`
	Digest        string    `json:"digest"`
	Verdict       string    `json:"verdict"`
	Kind          string    `json:"kind"`
	Source        string    `json:"source"`
	Status        string    `json:"status"`
	AgeDays       int64     `json:"age_days"`
	HeldAt        time.Time `json:"held_at"`
	FirstRunID    int64     `json:"first_run_id"`
	File          string    `json:"file"`
	Line          int64     `json:"line"`
	Reference     string    `json:"reference"`
	AmountMinor   int64     `json:"amount_minor"`
	Currency      string    `json:"currency"`
	Direction     string    `json:"direction"`
	AccountLast4  string    `json:"account_last4"`
	ValueDate     time.Time `json:"value_date"`
	LinkReference string    `json:"link_reference"`
	Detail        string    `json:"detail"`
	// SeenInRuns are the runs whose audit trail has the record, the first
	// included; filled by GetHeld only.
	SeenInRuns []int64       `json:"seen_in_runs,omitempty"`
	Decision   *HeldDecision `json:"decision"`
}

// HeldDecision closes a held record, for good.
type HeldDecision struct {
	Decision  string    `json:"decision"`
	RunID     *int64    `json:"run_id"`
	PostingID *int64    `json:"posting_id"`
	Login     string    `json:"login"`
	Reason    string    `json:"reason"`
	DecidedAt time.Time `json:"decided_at"`
}

const selectHeld = `
SELECT q.record_key, q.own_key, q.digest, q.verdict, q.kind, q.source,
       CASE WHEN d.decision IS NULL THEN 'open' ELSE d.decision END,
       (coalesce(d.decided_at, now())::date - q.created_at::date)::bigint,
       q.created_at, q.first_run_id, coalesce(r.file_name, ''), q.line, coalesce(q.reference, ''), q.amount_minor,
       q.currency, q.direction, q.account_last4, q.value_date, coalesce(q.link_reference, ''), q.detail,
       d.decision, d.run_id, d.posting_id, d.login, d.reason, d.decided_at
  FROM quarantine q
  LEFT JOIN quarantine_decisions d ON d.tenant_id = q.tenant_id AND d.record_key = q.record_key AND d.digest = q.digest
  LEFT JOIN runs r ON r.tenant_id = q.tenant_id AND r.id = q.first_run_id
 WHERE q.tenant_id = $1`

func scanHeld(row pgx.CollectableRow) (Held, error) {
	var h Held
	var digest []byte
	var decision, login, reason *string
	var decidedAt *time.Time
	var d HeldDecision
	err := row.Scan(&h.Key, &h.OwnKey, &digest, &h.Verdict, &h.Kind, &h.Source, &h.Status, &h.AgeDays, &h.HeldAt,
		&h.FirstRunID, &h.File, &h.Line, &h.Reference, &h.AmountMinor, &h.Currency, &h.Direction, &h.AccountLast4,
		&h.ValueDate, &h.LinkReference, &h.Detail, &decision, &d.RunID, &d.PostingID, &login, &reason, &decidedAt)
	if err != nil {
		return h, err
	}
	h.Digest = hex.EncodeToString(digest)
	if decision != nil {
		d.Decision, d.Login, d.Reason, d.DecidedAt = *decision, *login, *reason, *decidedAt
		h.Decision = &d
	}
	return h, nil
}

// HeldFilter narrows ListHeld: a status (open, released, dismissed) and a
// verdict, each empty for any.
type HeldFilter struct {
	Status, Verdict string
	Limit           int
}

// ListHeld returns the tenant's held records that f selects, oldest first.
func ListHeld(ctx context.Context, q Querier, tenant string, f HeldFilter) ([]Held, error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	rows, err := q.Query(ctx, selectHeld+`
   AND ($2 = '' OR CASE WHEN d.decision IS NULL THEN 'open' ELSE d.decision END = $2)
   AND ($3 = '' OR q.verdict = $3)
 ORDER BY q.created_at, q.record_key, q.digest
 LIMIT $4`, tenant, f.Status, f.Verdict, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("ledger: list quarantine: %w", err)
	}
	hs, err := pgx.CollectRows(rows, scanHeld)
	if err != nil {
		return nil, fmt.Errorf("ledger: list quarantine: %w", err)
	}
	return hs, nil
}

// GetHeld returns the records held under key (its key, own key, or the key
// its release posted under), with the runs that saw each.
func GetHeld(ctx context.Context, q Querier, tenant, key string) ([]Held, error) {
	rows, err := q.Query(ctx, selectHeld+`
   AND (q.record_key = $2 OR q.own_key = $2
        OR d.posting_id = (SELECT p.id FROM postings p WHERE p.tenant_id = $1 AND p.posting_key = $2))
 ORDER BY q.created_at, q.record_key, q.digest`, tenant, key)
	if err != nil {
		return nil, fmt.Errorf("ledger: show quarantine %s: %w", key, err)
	}
	hs, err := pgx.CollectRows(rows, scanHeld)
	if err != nil {
		return nil, fmt.Errorf("ledger: show quarantine %s: %w", key, err)
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotHeld, key)
	}
	for i := range hs {
		digest, _ := hex.DecodeString(hs[i].Digest)
		rows, err := q.Query(ctx, `
SELECT DISTINCT run_id FROM audit_events
 WHERE tenant_id = $1 AND record_key = $2 AND digest = $3 AND existing_posting_id IS NULL AND existing_notice_id IS NULL
 ORDER BY run_id`, tenant, hs[i].Key, digest)
		if err != nil {
			return nil, fmt.Errorf("ledger: show quarantine %s: %w", key, err)
		}
		if hs[i].SeenInRuns, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			return nil, fmt.Errorf("ledger: show quarantine %s: %w", key, err)
		}
	}
	return hs, nil
}

// Resolution is what a dismissal or release did to one held record.
type Resolution struct {
	Key    string `json:"key"`
	Digest string `json:"digest"`
	// Outcome is dismissed, released, still_held (its original is still
	// not in the ledger), or already_dismissed / already_released.
	Outcome string `json:"outcome"`
	// RunID is the run of kind quarantine a release started; 0 for a
	// dismissal.
	RunID int64 `json:"run_id"`
}

// Dismiss closes the open records held under key as dismissed, with the
// connection's login (recorded by the database) and reason. A dismissal
// is final; dismissing again says already_dismissed.
func Dismiss(ctx context.Context, q Querier, tenant, key, reason string) ([]Resolution, error) {
	return resolve(ctx, q, `SELECT 0::bigint, record_key, digest, outcome FROM clearing_quarantine_dismiss($1, $2, $3)`,
		tenant, key, reason)
}

// Release is an operator's word that the original of the records held
// under key is now in the ledger: the database starts a run of kind
// quarantine for the connection's login and posts each one that now
// resolves to exactly one original, through the ledger's routine and
// unique key (clearing_quarantine_release, migration 00017), recording the
// release with the login and reason. What still finds no original stays
// held (still_held).
func Release(ctx context.Context, q Querier, tenant, key, reason string) ([]Resolution, error) {
	return resolve(ctx, q, `SELECT run_id, record_key, digest, outcome FROM clearing_quarantine_release($1, $2, $3)`,
		tenant, key, reason)
}

func resolve(ctx context.Context, q Querier, sql, tenant, key, reason string) ([]Resolution, error) {
	rows, err := q.Query(ctx, sql, tenant, key, reason)
	if err != nil {
		return nil, resolveErr(key, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Resolution, error) {
		var r Resolution
		var digest []byte
		err := row.Scan(&r.RunID, &r.Key, &digest, &r.Outcome)
		r.Digest = hex.EncodeToString(digest)
		return r, err
	})
	if err != nil {
		return nil, resolveErr(key, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotHeld, key)
	}
	return out, nil
}

func resolveErr(key string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case pgerrcode.InsufficientPrivilege:
			return fmt.Errorf("%w: %s", ErrNotPermitted, pgErr.Message)
		case sqlstateNotHeld:
			return fmt.Errorf("%w: %s", ErrNotHeld, key)
		}
	}
	return fmt.Errorf("ledger: resolve %s: %w", key, err)
}
