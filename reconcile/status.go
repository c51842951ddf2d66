package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/corrections"
	"github.com/clearing-dev/clearing/internal/ledger"
)

// Status is what reconciliation says about one key: what the newest run
// that compared it listed for it (nothing when it matched there), and the
// corrections derived from it.
type Status struct {
	Discrepancies []KeyDiscrepancy         `json:"discrepancies"`
	Corrections   []corrections.Correction `json:"corrections"`
}

// KeyDiscrepancy is one run's verdict on a key.
type KeyDiscrepancy struct {
	RunID       int64     `json:"run_id"`
	RunAt       time.Time `json:"run_at"`
	Class       string    `json:"class"`
	Explanation string    `json:"explanation"`
}

// StatusOf returns the reconciliation status of key: the discrepancies of
// the newest run whose source and period take in the key's posting or
// statement line, and every correction whose key derives from it or that
// posts under it. A key that run matched has no discrepancy, even when an
// older run listed one.
func StatusOf(ctx context.Context, q ledger.Querier, tenant, key string) (Status, error) {
	var s Status
	rows, err := q.Query(ctx, `
WITH subject AS (
    SELECT source, value_date FROM postings WHERE tenant_id = $1 AND posting_key = $2
    UNION ALL
    SELECT source, value_date FROM statement_lines WHERE tenant_id = $1 AND line_key = $2
), newest AS (
    SELECT r.id, r.created_at FROM reconciliations r
      JOIN subject k ON r.source = k.source AND k.value_date BETWEEN r.period_from AND r.period_to
     WHERE r.tenant_id = $1
     ORDER BY r.id DESC LIMIT 1
)
SELECT d.run_id, n.created_at, d.class, d.explanation
  FROM newest n JOIN discrepancies d ON d.tenant_id = $1 AND d.run_id = n.id
 WHERE d.posting_key = $2 OR d.line_key = $2
 ORDER BY d.class`, tenant, key)
	if err != nil {
		return s, fmt.Errorf("reconcile: status of %q: %w", key, err)
	}
	if s.Discrepancies, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (KeyDiscrepancy, error) {
		var d KeyDiscrepancy
		err := row.Scan(&d.RunID, &d.RunAt, &d.Class, &d.Explanation)
		return d, err
	}); err != nil {
		return s, fmt.Errorf("reconcile: status of %q: %w", key, err)
	}
	s.Corrections, err = corrections.OfKey(ctx, q, tenant, key)
	return s, err
}
