package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Querier is satisfied by *pgx.Conn, pgx.Tx and *pgxpool.Pool.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Posting is one posting with its legs, as lookup shows it.
type Posting struct {
	ID           int64     `json:"id"`
	Key          string    `json:"key"`
	Kind         string    `json:"kind"`
	Source       string    `json:"source"`
	Reference    string    `json:"reference"`
	ValueDate    time.Time `json:"value_date"`
	Amount       int64     `json:"amount"`
	Currency     string    `json:"currency"`
	Direction    string    `json:"direction"`
	Account      string    `json:"account"`
	AccountLast4 string    `json:"account_last4"`
	RefersTo     *string   `json:"refers_to"` // key of the posting this one undoes or adjusts
	RunID        *int64    `json:"run_id"`
	File         string    `json:"file"`
	Line         *int64    `json:"line"`
	Detail       string    `json:"detail"`
	CreatedAt    time.Time `json:"created_at"`
	Legs         []Leg     `json:"legs"`
}

// Leg is one side of a posting.
type Leg struct {
	No        int    `json:"leg_no"`
	Account   string `json:"account"`
	Direction string `json:"direction"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
}

// Notice is a non-monetary record.
type Notice struct {
	Key        string    `json:"key"`
	Source     string    `json:"source"`
	Reference  string    `json:"reference"`
	PostingKey *string   `json:"posting_key"` // the posting it is about, when found
	ValueDate  time.Time `json:"value_date"`
	Amount     int64     `json:"amount"`
	Currency   string    `json:"currency"`
	RunID      *int64    `json:"run_id"`
	File       string    `json:"file"`
	Line       *int64    `json:"line"`
	Detail     string    `json:"detail"`
}

// Event is one audit event: a record that arrived and was not posted.
type Event struct {
	Key             string    `json:"key"`
	OwnKey          string    `json:"own_key"`
	Verdict         string    `json:"verdict"`
	NeedsAttention  bool      `json:"needs_attention"`
	RunID           int64     `json:"run_id"`
	File            string    `json:"file"`
	Line            int64     `json:"line"`
	CollidedWith    *string   `json:"collided_with"` // key of the existing posting or notice
	CollidedRunID   *int64    `json:"collided_run_id"`
	DifferingFields []string  `json:"differing_fields"`
	Amount          int64     `json:"amount"`
	Currency        string    `json:"currency"`
	ValueDate       time.Time `json:"value_date"`
	Detail          string    `json:"detail"`
	At              time.Time `json:"at"`
}

// Lookup is everything the ledger knows about one key.
type Lookup struct {
	Key     string    `json:"key"`
	Posting *Posting  `json:"posting"`
	Related []Posting `json:"related"` // returns, reversals and corrections derived from the key
	Notices []Notice  `json:"notices"`
	Events  []Event   `json:"events"`
}

// Found reports whether anything at all is known about the key.
func (l Lookup) Found() bool {
	return l.Posting != nil || len(l.Related) > 0 || len(l.Notices) > 0 || len(l.Events) > 0
}

const selectPostings = `
SELECT p.id, p.posting_key, p.kind, p.source, coalesce(p.reference, ''), p.value_date, p.amount_minor, p.currency,
       p.direction, p.account, p.account_last4, r.posting_key, p.run_id, coalesce(ru.file_name, ''), p.line,
       p.detail, p.created_at
  FROM postings p
  LEFT JOIN postings r ON r.tenant_id = p.tenant_id AND r.id = p.refers_to
  LEFT JOIN runs ru ON ru.tenant_id = p.tenant_id AND ru.id = p.run_id`

func scanPosting(row pgx.CollectableRow) (Posting, error) {
	var p Posting
	err := row.Scan(&p.ID, &p.Key, &p.Kind, &p.Source, &p.Reference, &p.ValueDate, &p.Amount, &p.Currency,
		&p.Direction, &p.Account, &p.AccountLast4, &p.RefersTo, &p.RunID, &p.File, &p.Line, &p.Detail, &p.CreatedAt)
	return p, err
}

// LookupKey gathers the posting under key, the postings derived from it
// (key:return, key:reversal, ...), its notices and every audit event.
func LookupKey(ctx context.Context, q Querier, tenant, key string) (Lookup, error) {
	out := Lookup{Key: key}
	rows, err := q.Query(ctx, selectPostings+`
 WHERE p.tenant_id = $1 AND (p.posting_key = $2 OR (p.posting_key > $2 || ':' AND p.posting_key < $2 || ';'))
 ORDER BY p.posting_key`, tenant, key)
	if err != nil {
		return out, fmt.Errorf("ledger: lookup %q: %w", key, err)
	}
	ps, err := pgx.CollectRows(rows, scanPosting)
	if err != nil {
		return out, fmt.Errorf("ledger: lookup %q: %w", key, err)
	}
	for i := range ps {
		if ps[i].Legs, err = legsOf(ctx, q, tenant, ps[i].ID); err != nil {
			return out, err
		}
		if ps[i].Key == key {
			out.Posting = &ps[i]
		} else {
			out.Related = append(out.Related, ps[i])
		}
	}
	if out.Notices, err = noticesFor(ctx, q, tenant, key, out.Posting); err != nil {
		return out, err
	}
	out.Events, err = eventsFor(ctx, q, tenant, key, ps, out.Notices)
	return out, err
}

func legsOf(ctx context.Context, q Querier, tenant string, postingID int64) ([]Leg, error) {
	rows, err := q.Query(ctx, `
SELECT leg_no, account, direction, amount_minor, currency FROM legs
 WHERE tenant_id = $1 AND posting_id = $2 ORDER BY leg_no`, tenant, postingID)
	if err != nil {
		return nil, fmt.Errorf("ledger: legs of %d: %w", postingID, err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Leg, error) {
		var l Leg
		err := row.Scan(&l.No, &l.Account, &l.Direction, &l.Amount, &l.Currency)
		return l, err
	})
}

func noticesFor(ctx context.Context, q Querier, tenant, key string, p *Posting) ([]Notice, error) {
	postingID := int64(-1)
	if p != nil {
		postingID = p.ID
	}
	rows, err := q.Query(ctx, `
SELECT n.notice_key, n.source, coalesce(n.reference, ''), p.posting_key, n.value_date, n.amount_minor, n.currency,
       n.run_id, coalesce(r.file_name, ''), n.line, n.detail
  FROM notices n
  LEFT JOIN postings p ON p.tenant_id = n.tenant_id AND p.id = n.posting_id
  LEFT JOIN runs r ON r.tenant_id = n.tenant_id AND r.id = n.run_id
 WHERE n.tenant_id = $1 AND (n.notice_key = $2 OR n.posting_id = $3)
 ORDER BY n.id`, tenant, key, postingID)
	if err != nil {
		return nil, fmt.Errorf("ledger: notices of %q: %w", key, err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Notice, error) {
		var n Notice
		err := row.Scan(&n.Key, &n.Source, &n.Reference, &n.PostingKey, &n.ValueDate, &n.Amount, &n.Currency,
			&n.RunID, &n.File, &n.Line, &n.Detail)
		return n, err
	})
}

// eventsFor finds the events that collided with the postings and notices
// shown, and those under the key (or a key derived from it) that collided
// with nothing.
func eventsFor(ctx context.Context, q Querier, tenant, key string, ps []Posting, ns []Notice) ([]Event, error) {
	postingIDs := make([]int64, len(ps))
	for i, p := range ps {
		postingIDs[i] = p.ID
	}
	noticeKeys := make([]string, len(ns))
	for i, n := range ns {
		noticeKeys[i] = n.Key
	}
	rows, err := q.Query(ctx, selectEvents+`
 WHERE e.tenant_id = $1
   AND (e.existing_posting_id = ANY($3)
     OR e.existing_notice_id IN (SELECT id FROM notices WHERE tenant_id = $1 AND notice_key = ANY($4))
     OR (e.existing_posting_id IS NULL AND e.existing_notice_id IS NULL
         AND (e.record_key = $2 OR (e.record_key > $2 || ':' AND e.record_key < $2 || ';'))))
 ORDER BY e.id`, tenant, key, postingIDs, noticeKeys)
	if err != nil {
		return nil, fmt.Errorf("ledger: events of %q: %w", key, err)
	}
	return pgx.CollectRows(rows, scanEvent)
}

const selectEvents = `
SELECT e.record_key, e.own_key, e.verdict, e.needs_attention, e.run_id, coalesce(r.file_name, ''), e.line,
       coalesce(p.posting_key, n.notice_key), coalesce(p.run_id, n.run_id), e.differing_fields,
       coalesce(e.amount_minor, p.amount_minor, n.amount_minor, 0), coalesce(e.currency, p.currency, n.currency, ''),
       coalesce(e.value_date, p.value_date, n.value_date), coalesce(nullif(e.detail, ''), p.detail, n.detail, ''),
       e.created_at
  FROM audit_events e
  LEFT JOIN runs r ON r.tenant_id = e.tenant_id AND r.id = e.run_id
  LEFT JOIN postings p ON p.tenant_id = e.tenant_id AND p.id = e.existing_posting_id
  LEFT JOIN notices n ON n.tenant_id = e.tenant_id AND n.id = e.existing_notice_id`

func scanEvent(row pgx.CollectableRow) (Event, error) {
	var e Event
	err := row.Scan(&e.Key, &e.OwnKey, &e.Verdict, &e.NeedsAttention, &e.RunID, &e.File, &e.Line,
		&e.CollidedWith, &e.CollidedRunID, &e.DifferingFields, &e.Amount, &e.Currency, &e.ValueDate,
		&e.Detail, &e.At)
	return e, err
}

// RunEvents returns the audit events of one run, those that need attention
// first, at most limit of them.
func RunEvents(ctx context.Context, q Querier, tenant string, runID int64, limit int) ([]Event, error) {
	rows, err := q.Query(ctx, selectEvents+`
 WHERE e.tenant_id = $1 AND e.run_id = $2
 ORDER BY e.needs_attention DESC, e.id
 LIMIT $3`, tenant, runID, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger: events of run %d: %w", runID, err)
	}
	return pgx.CollectRows(rows, scanEvent)
}
