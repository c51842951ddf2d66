// Package statement is the only code that writes statement lines and their
// audit events: the other side's view of the money, imported from a
// statement's staged records, never posted. Lines are deduplicated on their
// own keys: importing a statement again adds nothing, and a line that
// restates a key with other content is a conflict, audited, never changed.
package statement

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/internal/db"
	"github.com/clearing-dev/clearing/internal/runs"
	"github.com/clearing-dev/clearing/internal/stage"
)

// The perspectives a statement's directions can be written from.
const (
	// Counterparty statements say what happened to the other party's
	// account, as clearing files do: a credit pays the counterparty.
	Counterparty = "counterparty"
	// Holder statements say what happened to our own account at the bank,
	// as a BAI2 statement does: a credit is money in, which is a debit of
	// the counterparty.
	Holder = "holder"
)

// Batch names where a statement's lines go.
type Batch struct {
	Tenant string
	Source string
	RunID  int64
	// Holder says the statement is the account holder's: its directions
	// are turned round, as lines are stored from the counterparty's side,
	// like postings.
	Holder bool
}

// Import adds every staged record of st, which lives on tx's connection, as
// a statement line of b's source, in tx, and audits the ones an earlier
// import holds. The counts account for every staged record: lines added
// (Posted), duplicates, conflicts, and notices (zero amounts, prenotes),
// which are no lines and count as Skipped.
func Import(ctx context.Context, tx pgx.Tx, st *stage.Stage, b Batch) (runs.Counts, error) {
	var c runs.Counts
	if err := tx.QueryRow(ctx, addLines.Call(), b.Tenant, b.RunID, b.Source, b.Holder).Scan(&c.Posted, &c.Skipped); err != nil {
		return c, fmt.Errorf("statement: add lines: %w", addLines.Err(err))
	}
	rows, err := tx.Query(ctx, auditLines.Call(), b.Tenant, b.RunID, b.Source, b.Holder)
	if err != nil {
		return c, fmt.Errorf("statement: audit lines: %w", auditLines.Err(err))
	}
	var verdict string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&verdict, &n}, func() error {
		if verdict == "duplicate" {
			c.Duplicates += n
		} else {
			c.Conflicts += n
		}
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("statement: audit lines: %w", auditLines.Err(err))
	}
	if c.Total() != st.Len() {
		return c, fmt.Errorf("statement: %d staged records, %d accounted for", st.Len(), c.Total())
	}
	return c, nil
}

// insertLines adds the staged records as statement lines. A key repeated in
// the statement gets occurrence 2, 3, ...: both lines are kept, so that a
// double charge on the other side is visible, and importing the same
// statement again collides on (key, occurrence) and adds nothing. Notices
// (zero amounts, prenotes) are not lines.
const insertLines = `
WITH numbered AS (
    SELECT s.*, row_number() OVER (PARTITION BY own_key ORDER BY seq) AS occurrence
      FROM record_stage s
     WHERE kind <> 'notice'
), ins AS (
    INSERT INTO statement_lines (tenant_id, source, line_key, occurrence, reference, alt_reference, amount_minor,
                                 currency, direction, value_date, line_type, account, account_last4, digest,
                                 run_id, record_no, line, detail, settle_group)
    SELECT $1, $3, own_key, occurrence, coalesce(reference, ''), coalesce(alt_reference, ''), amount_minor,
           currency, CASE WHEN $4 THEN (CASE direction WHEN 'C' THEN 'D' ELSE 'C' END) ELSE direction END,
           value_date, line_type, account, account_last4, digest, $2, seq, line, detail, settle_group
      FROM numbered
     ORDER BY own_key, occurrence
    ON CONFLICT (tenant_id, source, line_key, occurrence) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM record_stage WHERE kind = 'notice')`

// auditLines records every staged statement line that an earlier import
// already holds: a duplicate when the content is the same, a conflict
// otherwise. $1 tenant, $2 run, $3 source, $4 whether the statement is the
// account holder's (its directions are turned round).
var auditLines = db.Routine{Name: "clearing_audit_lines", Args: "text, bigint, text, boolean",
	Returns: "TABLE (verdict text, n bigint)", Body: auditStatementLines}

// addLines adds the staged lines (insertLines), with the same arguments as
// auditLines; it returns how many were added and how many staged records
// were notices.
var addLines = db.Routine{Name: "clearing_add_lines", Args: "text, bigint, text, boolean",
	Returns: "TABLE (added bigint, notices bigint)", Body: insertLines}

// Routines are the statement side's routines, which `clearing migrate`
// installs. Every statement of an import reaches the tenant's tables
// through one of them, so that its transaction does so as one role
// (db.Routine).
var Routines = []db.Routine{addLines, auditLines, addBalances, storedBalances}

const auditStatementLines = `
WITH numbered AS (
    SELECT s.*, row_number() OVER (PARTITION BY own_key ORDER BY seq) AS occurrence
      FROM record_stage s
     WHERE kind <> 'notice'
), ev AS (
    INSERT INTO audit_events (tenant_id, record_key, own_key, verdict, needs_attention, run_id, record_no, line,
                              existing_line_id, differing_fields, kind, reference, amount_minor, currency,
                              direction, account, account_last4, value_date, digest, detail)
    SELECT $1, s.own_key, s.own_key, v.verdict, v.verdict = 'conflict', $2, s.seq, s.line,
           l.id, CASE WHEN v.verdict = 'conflict' THEN clearing_differing_fields(
                l.amount_minor, l.currency, l.direction, l.account, l.value_date, s.amount_minor, s.currency,
                CASE WHEN $4 THEN (CASE s.direction WHEN 'C' THEN 'D' ELSE 'C' END) ELSE s.direction END,
                s.account, s.value_date) ELSE '{}' END,
           'statement', s.reference, s.amount_minor, s.currency, s.direction, s.account, s.account_last4,
           s.value_date, s.digest, s.detail
      FROM numbered s
      JOIN statement_lines l ON l.tenant_id = $1 AND l.source = $3 AND l.line_key = s.own_key
                            AND l.occurrence = s.occurrence AND l.run_id <> $2
      CROSS JOIN LATERAL (SELECT CASE WHEN l.digest = s.digest THEN 'duplicate' ELSE 'conflict' END AS verdict) v
    RETURNING verdict
)
SELECT verdict, count(*) FROM ev GROUP BY verdict`
