package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/internal/ledger"
)

// Status is what reconciliation says about one key: the class it ended in
// in the newest run that compared it, and the corrections derived from it.
type Status struct {
	Discrepancies []KeyDiscrepancy `json:"discrepancies"`
	Corrections   []Correction     `json:"corrections"`
}

// KeyDiscrepancy is one run's verdict on a key.
type KeyDiscrepancy struct {
	RunID       int64     `json:"run_id"`
	RunAt       time.Time `json:"run_at"`
	Class       string    `json:"class"`
	Explanation string    `json:"explanation"`
}

// StatusOf returns the reconciliation status of key: the discrepancies of
// the newest run that lists the key on either side, and every correction
// whose key derives from it or that posts under it. A key compared and
// matched leaves no discrepancy; that is shown as nothing listed.
func StatusOf(ctx context.Context, q ledger.Querier, tenant, key string) (Status, error) {
	var s Status
	rows, err := q.Query(ctx, `
WITH hits AS (
    SELECT d.run_id, d.class, d.explanation FROM discrepancies d
     WHERE d.tenant_id = $1 AND d.posting_key = $2
    UNION ALL
    SELECT d.run_id, d.class, d.explanation FROM discrepancies d
     WHERE d.tenant_id = $1 AND d.line_key = $2
)
SELECT h.run_id, r.created_at, h.class, h.explanation
  FROM hits h JOIN reconciliations r ON r.tenant_id = $1 AND r.id = h.run_id
 WHERE h.run_id = (SELECT max(run_id) FROM hits)
 ORDER BY h.class`, tenant, key)
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
	rows, err = q.Query(ctx, selectCorrections+`
 WHERE c.tenant_id = $1 AND (c.posting_key = $2 OR (c.correction_key > $2 || ':' AND c.correction_key < $2 || ';'))
 ORDER BY c.id`, tenant, key)
	if err != nil {
		return s, fmt.Errorf("reconcile: corrections of %q: %w", key, err)
	}
	if s.Corrections, err = pgx.CollectRows(rows, scanCorrection); err != nil {
		return s, fmt.Errorf("reconcile: corrections of %q: %w", key, err)
	}
	return s, nil
}
