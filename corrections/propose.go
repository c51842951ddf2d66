package corrections

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Proposal names the reconciliation run whose breaks are to be proposed as
// corrections, and the accounts the corrections post against.
type Proposal struct {
	Tenant string
	// Run is the reconciliation run whose discrepancies were just stored.
	Run    int64
	Source string
	// AdjustmentsAccount is the counter account of amount_mismatch and
	// unbooked_fee corrections, SuspenseAccount that of missing_in_ledger
	// ones, whose customer account the statement does not know.
	AdjustmentsAccount string
	SuspenseAccount    string
}

// Propose proposes, in tx, the corrections of run p.Run: one for each of
// its discrepancies that names a correction key and differs by a non-zero
// amount. It returns how many it proposed that were not proposed before.
//
// tx is the reconciliation's own transaction, so the run, its
// discrepancies and its proposals commit together or not at all, and the
// proposals are read from the discrepancies by one set-based statement.
func Propose(ctx context.Context, tx pgx.Tx, p Proposal) (int64, error) {
	var n int64
	if err := tx.QueryRow(ctx, proposeCorrections, p.Tenant, p.Run, p.Source, p.AdjustmentsAccount, p.SuspenseAccount).Scan(&n); err != nil {
		return 0, fmt.Errorf("corrections: propose corrections: %w", err)
	}
	return n, nil
}

// proposeCorrections proposes, for each break that a posting can settle, a
// correction under a key derived from what it corrects. Proposing the same
// correction again (a re-run, a concurrent run) adds nothing, and a
// rejected correction is not proposed again. The proposals are counted
// from what the insert returns: on a distributed schema the command tag of
// an INSERT ... SELECT counts the rows selected, not those inserted.
const proposeCorrections = `
WITH ins AS (
INSERT INTO corrections (tenant_id, correction_key, posting_key, class, source, reference, refers_to, line_id,
                         amount_minor, currency, direction, counter_account, settlement_account, value_date,
                         explanation, proposed_by_run)
SELECT $1, d.correction_key, CASE d.class WHEN 'missing_in_ledger' THEN d.line_key ELSE d.correction_key END,
       d.class, $3, d.reference, d.posting_id, d.line_id, abs(d.delta), d.currency,
       CASE WHEN d.delta > 0 THEN 'C' ELSE 'D' END,
       CASE d.class WHEN 'missing_in_ledger' THEN $5 ELSE $4 END, 'settlement:' || $3,
       d.value_date, d.explanation, $2
  FROM (SELECT *, CASE class WHEN 'amount_mismatch' THEN statement_amount - ledger_amount ELSE statement_amount END AS delta,
               coalesce(ledger_currency, statement_currency) AS currency,
               coalesce(statement_date, ledger_date) AS value_date
          FROM discrepancies
         WHERE tenant_id = $1 AND run_id = $2 AND correction_key IS NOT NULL) d
 WHERE d.delta <> 0
 ORDER BY d.correction_key
ON CONFLICT (tenant_id, correction_key) DO NOTHING
RETURNING 1
)
SELECT count(*) FROM ins`
