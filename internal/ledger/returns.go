package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ReturnItem is one return, dishonored or contested return, or
// notification of change the ledger holds for a source, with the original
// it names.
type ReturnItem struct {
	Key         string    `json:"key"`
	Kind        string    `json:"kind"` // "return" (any of the three) or "noc"
	Detail      string    `json:"detail"`
	Original    string    `json:"original"` // the original's key; empty when none was found
	Amount      int64     `json:"amount"`
	Currency    string    `json:"currency"`
	ValueDate   time.Time `json:"value_date"`
	AccountLast string    `json:"account_last4"`
	File        string    `json:"file"`
}

// Returns lists the returns and notifications of change of source whose
// value date is within from..to, oldest first.
func Returns(ctx context.Context, q Querier, tenant, source string, from, to time.Time) ([]ReturnItem, error) {
	rows, err := q.Query(ctx, `
SELECT p.posting_key, 'return', p.detail, coalesce(o.posting_key, ''), p.amount_minor, p.currency::text, p.value_date,
       coalesce(nullif(p.account_last4, ''), o.account_last4, ''), coalesce(r.file_name, '')
  FROM postings p
  LEFT JOIN postings o ON o.tenant_id = p.tenant_id AND o.id = p.refers_to
  LEFT JOIN runs r ON r.tenant_id = p.tenant_id AND r.id = p.run_id
 WHERE p.tenant_id = $1 AND p.source = $2 AND p.kind = 'return' AND p.value_date BETWEEN $3 AND $4
UNION ALL
SELECT n.notice_key, 'noc', n.detail, coalesce(o.posting_key, ''), n.amount_minor, n.currency::text, n.value_date,
       coalesce(nullif(n.account_last4, ''), o.account_last4, ''), coalesce(r.file_name, '')
  FROM notices n
  LEFT JOIN postings o ON o.tenant_id = n.tenant_id AND o.id = n.posting_id
  LEFT JOIN runs r ON r.tenant_id = n.tenant_id AND r.id = n.run_id
 WHERE n.tenant_id = $1 AND n.source = $2 AND n.detail LIKE '%NOC %' AND n.value_date BETWEEN $3 AND $4
 ORDER BY 7, 1`, tenant, source, from, to)
	if err != nil {
		return nil, fmt.Errorf("ledger: returns: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ReturnItem])
	if err != nil {
		return nil, fmt.Errorf("ledger: returns: %w", err)
	}
	if out == nil {
		out = []ReturnItem{}
	}
	return out, nil
}
