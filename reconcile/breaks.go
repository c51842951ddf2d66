package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/money"
)

// The break inventory (migration 00018): a break, by source, class and the
// key of its item, keeps its identity across runs. Every run that proposes
// corrections (both sides have items) records the breaks it shows, and
// closes the breaks of its period that it no longer shows. A one-sided run
// records nothing: every item of the other side would be a break, and none
// of them would be news.

// The break statuses.
const (
	BreakOpen         = "open"
	BreakAcknowledged = "acknowledged"
	BreakClosed       = "closed"
)

// trackBreaks records the run's breaks: $1 tenant, $2 run, $3 source, $4
// and $5 the period. A break seen again keeps its identity and, when it was
// acknowledged at the same amount, its acknowledgement; with another amount,
// or after it was closed, it is open again. The open breaks of the period
// that the run did not see are closed; they are told by NOT IN, which
// PostgreSQL answers from a hash of the run's breaks, where NOT EXISTS was
// planned as a nested loop, once per break for every break (1,921 breaks:
// 286 ms). Both live in one statement: Citus plans an INSERT ... SELECT of a
// distributed table that stands alone on the coordinator, where the caller
// may not use the table's id sequence.
const trackBreaks = `
WITH cur AS (
    SELECT d.class, coalesce(d.posting_key, d.line_key, d.reference) AS item_key,
           min(coalesce(d.ledger_currency, d.statement_currency)) AS currency,
           min(coalesce(d.ledger_date, d.statement_date)) AS value_date,
           sum(CASE d.class
                 WHEN 'settlement_total_mismatch' THEN coalesce(d.ledger_net, 0) - coalesce(d.statement_amount, 0)
                 WHEN 'currency_mismatch' THEN 0
                 WHEN 'statement_unbalanced' THEN coalesce(d.statement_difference, 0)
                 ELSE coalesce(d.ledger_amount, 0) - coalesce(d.statement_amount, 0) END) AS amount
      FROM discrepancies d
     WHERE d.tenant_id = $1 AND d.run_id = $2 AND d.is_break
     GROUP BY 1, 2
), seen AS (
    INSERT INTO breaks AS b (tenant_id, source, class, item_key, currency, value_date, amount, first_run, last_run, last_seen)
    SELECT $1, $3, class, item_key, currency, value_date, amount, $2, $2, now() FROM cur
     ORDER BY class, item_key
    ON CONFLICT (tenant_id, source, class, item_key) DO UPDATE
       SET last_run = EXCLUDED.last_run, last_seen = EXCLUDED.last_seen, seen_in_runs = b.seen_in_runs + 1,
           amount = EXCLUDED.amount, currency = EXCLUDED.currency, value_date = EXCLUDED.value_date,
           status = CASE WHEN b.status = 'acknowledged' AND b.acked_amount = EXCLUDED.amount THEN 'acknowledged' ELSE 'open' END,
           acked_amount = CASE WHEN b.status = 'acknowledged' AND b.acked_amount = EXCLUDED.amount THEN b.acked_amount END,
           closed_run = NULL
    RETURNING 1
)
UPDATE breaks b
   SET status = 'closed', closed_run = $2, acked_amount = NULL
 WHERE b.tenant_id = $1 AND b.source = $3 AND b.status <> 'closed' AND b.value_date BETWEEN $4 AND $5
   AND (b.class, b.item_key) NOT IN (SELECT c.class, c.item_key FROM cur c)`

// Break is one break of the inventory.
type Break struct {
	ID         int64       `json:"break_id"`
	Source     string      `json:"source"`
	Class      string      `json:"class"`
	Key        string      `json:"key"`
	Currency   string      `json:"currency"`
	ValueDate  string      `json:"value_date"`
	Amount     money.Total `json:"amount"`
	Status     string      `json:"status"`
	FirstRun   int64       `json:"first_run"`
	FirstSeen  time.Time   `json:"first_seen"`
	LastRun    int64       `json:"last_run"`
	LastSeen   time.Time   `json:"last_seen"`
	SeenInRuns int         `json:"seen_in_runs"`
	AgeDays    int         `json:"age_days"`
	ClosedRun  *int64      `json:"closed_run"`
	Acks       []BreakAck  `json:"acknowledgements"`
}

// BreakAck is one acknowledgement of a break.
type BreakAck struct {
	At     time.Time   `json:"at"`
	Login  string      `json:"login"`
	Reason string      `json:"reason"`
	Amount money.Total `json:"amount"`
	RunID  int64       `json:"run_id"`
}

// Errors of Acknowledge.
var (
	// ErrNoBreak means no break has the id asked for.
	ErrNoBreak = errors.New("reconcile: no such break")
	// ErrBreakClosed means a later run closed the break: there is nothing
	// to acknowledge.
	ErrBreakClosed = errors.New("reconcile: the break is closed")
)

const selectBreak = `
SELECT id, source, class, item_key, currency, value_date, amount, status, first_run, first_seen, last_run, last_seen,
       seen_in_runs, (current_date - first_seen::date)::int, closed_run
  FROM breaks`

func scanBreak(row pgx.CollectableRow) (Break, error) {
	var b Break
	var d time.Time
	err := row.Scan(&b.ID, &b.Source, &b.Class, &b.Key, &b.Currency, &d, &b.Amount, &b.Status, &b.FirstRun, &b.FirstSeen,
		&b.LastRun, &b.LastSeen, &b.SeenInRuns, &b.AgeDays, &b.ClosedRun)
	b.ValueDate = d.Format(time.DateOnly)
	b.Acks = []BreakAck{}
	return b, err
}

// ListBreaks returns the tenant's breaks with status (any when empty),
// oldest first.
func ListBreaks(ctx context.Context, q ledger.Querier, tenant, status string) ([]Break, error) {
	rows, err := q.Query(ctx, selectBreak+` WHERE tenant_id = $1 AND ($2 = '' OR status = $2) ORDER BY first_seen, id`, tenant, status)
	if err != nil {
		return nil, fmt.Errorf("reconcile: list breaks: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanBreak)
	if err != nil {
		return nil, fmt.Errorf("reconcile: list breaks: %w", err)
	}
	if out == nil {
		out = []Break{}
	}
	return out, nil
}

// BreaksOf returns every break whose item has key, in any class and
// source, with its acknowledgements; arg may also be a break's id.
func BreaksOf(ctx context.Context, q ledger.Querier, tenant, arg string) ([]Break, error) {
	rows, err := q.Query(ctx, selectBreak+` WHERE tenant_id = $1 AND (item_key = $2 OR id::text = $2) ORDER BY id`, tenant, arg)
	if err != nil {
		return nil, fmt.Errorf("reconcile: breaks of %s: %w", arg, err)
	}
	out, err := pgx.CollectRows(rows, scanBreak)
	if err != nil {
		return nil, fmt.Errorf("reconcile: breaks of %s: %w", arg, err)
	}
	// A key names its breaks; an id names its break only when no key is
	// the same text.
	if len(out) > 1 {
		keyed := out[:0]
		for _, b := range out {
			if b.Key == arg {
				keyed = append(keyed, b)
			}
		}
		out = keyed
	}
	if len(out) == 0 {
		return []Break{}, nil
	}
	ids := make([]int64, len(out))
	at := map[int64]int{}
	for i, b := range out {
		ids[i], at[b.ID] = b.ID, i
	}
	rows, err = q.Query(ctx, `
SELECT break_id, acked_at, login, reason, amount, run_id FROM break_acks
 WHERE tenant_id = $1 AND break_id = ANY ($2) ORDER BY break_id, acked_at`, tenant, ids)
	if err != nil {
		return nil, fmt.Errorf("reconcile: acknowledgements of the breaks of %s: %w", arg, err)
	}
	var id int64
	var a BreakAck
	_, err = pgx.ForEachRow(rows, []any{&id, &a.At, &a.Login, &a.Reason, &a.Amount, &a.RunID}, func() error {
		out[at[id]].Acks = append(out[at[id]].Acks, a)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile: acknowledgements of the breaks of %s: %w", arg, err)
	}
	return out, nil
}

// Acknowledge records the calling login's acknowledgement of break id with
// reason (clearing_ack_break). The break needs no person until a run shows
// it with another amount.
func Acknowledge(ctx context.Context, q ledger.Querier, tenant string, id int64, reason string) error {
	_, err := q.Exec(ctx, `SELECT clearing_ack_break($1, $2, $3)`, tenant, id, reason)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "CA011":
			return fmt.Errorf("%w: %s", ErrNoBreak, pgErr.Message)
		case "CA012":
			return fmt.Errorf("%w: %s", ErrBreakClosed, pgErr.Message)
		}
	}
	if err != nil {
		return fmt.Errorf("reconcile: acknowledge break %d: %w", id, err)
	}
	return nil
}
