package ledger

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// settleLateArrivals handles records whose money a correction already
// posted. When reconciliation found money on the statement that the ledger
// lacked, an approved correction booked it against a suspense account. When
// the original record then arrives, its money must not post a second time:
// it is settled_by_correction, and if it names the customer account (which
// the statement did not know), only a reclassification from suspense to
// that account posts, under <key>:reclass. A record that matches the
// correction's key or reference but not its amount, currency or direction
// is a conflict. A second arrival after the reclassification is a
// duplicate.
//
// Most ingests meet no such correction, so the check costs one small query
// unless one exists for the source. Probes by id compare the tenant as an
// expression: see originsOf.
func settleLateArrivals(ctx context.Context, tx pgx.Tx, b Batch, lo, hi int64) error {
	var any bool
	if err := tx.QueryRow(ctx, `
SELECT EXISTS (SELECT 1 FROM corrections
                WHERE tenant_id = $1 AND source = $2 AND class = 'missing_in_ledger' AND status = 'posted')`,
		b.Tenant, b.Source).Scan(&any); err != nil {
		return fmt.Errorf("ledger: look for settling corrections: %w", err)
	}
	if !any {
		return nil
	}
	if _, err := tx.Exec(ctx, markSettled, b.Tenant, b.Source, lo, hi); err != nil {
		return fmt.Errorf("ledger: match records to corrections %d-%d: %w", lo, hi, err)
	}
	if _, err := tx.Exec(ctx, insertReclass, b.Tenant, b.RunID, lo, hi, b.Source); err != nil {
		return fmt.Errorf("ledger: reclassify settled records %d-%d: %w", lo, hi, err)
	}
	return nil
}

// markSettled matches the chunk's clearing records to posted
// missing_in_ledger corrections of the source: by key (the statement was
// the same kind of file) or by reference and currency within a week (the
// statement was a bank's, keyed otherwise), preferring a match by key. The
// two matches are two equality joins: one join on an OR of them would
// compare every record of the chunk with every correction.
const markSettled = `
WITH cp AS MATERIALIZED (
    SELECT p.id, p.posting_key, p.reference, p.currency, p.value_date, p.amount_minor, p.direction
      FROM corrections c
     CROSS JOIN LATERAL (SELECT * FROM postings WHERE tenant_id || '' = $1 AND id = c.posting_id LIMIT 1) p
     WHERE c.tenant_id = $1 AND c.source = $2 AND c.class = 'missing_in_ledger' AND c.status = 'posted'
), chunk AS (
    SELECT seq, own_key, reference, currency, value_date, amount_minor, direction
      FROM record_stage WHERE seq BETWEEN $3 AND $4 AND kind = 'clearing'
), hit AS (
    SELECT k.seq, true AS by_key, cp.*, k.amount_minor AS s_amount, k.currency AS s_currency, k.direction AS s_direction
      FROM chunk k JOIN cp ON cp.posting_key = k.own_key
    UNION ALL
    SELECT k.seq, false, cp.*, k.amount_minor, k.currency, k.direction
      FROM chunk k JOIN cp ON cp.reference = k.reference AND cp.currency = k.currency
     WHERE abs(cp.value_date - k.value_date) <= 7
)
UPDATE record_stage s
   SET settles_id = m.id,
       outcome = CASE WHEN NOT m.same THEN 'conflict'
                      WHEN m.reclassed THEN 'duplicate'
                      ELSE 'settled_by_correction' END
  FROM (
       SELECT DISTINCT ON (h.seq) h.seq, h.id,
              (h.amount_minor = h.s_amount AND h.currency = h.s_currency AND h.direction = h.s_direction) AS same,
              EXISTS (SELECT 1 FROM postings r
                       WHERE r.tenant_id || '' = $1 AND r.refers_to = h.id AND r.kind = 'reclass') AS reclassed
         FROM hit h
        ORDER BY h.seq, h.by_key DESC, h.id
  ) m
 WHERE s.seq = m.seq AND s.seq BETWEEN $3 AND $4`

// insertReclass moves a settled record's money from the suspense account
// the correction used to the customer account the record names: the
// suspense leg undoes the correction's, the customer leg is the record's.
// The settlement account is not touched again.
const insertReclass = `
WITH cand AS (
    SELECT DISTINCT ON (s.own_key) s.*, p.account AS suspense
      FROM record_stage s
     CROSS JOIN LATERAL (SELECT account FROM postings WHERE tenant_id || '' = $1 AND id = s.settles_id LIMIT 1) p
     WHERE s.seq BETWEEN $3 AND $4 AND s.outcome = 'settled_by_correction' AND s.account <> ''
     ORDER BY s.own_key, s.seq
), ins AS (
    INSERT INTO postings (tenant_id, posting_key, kind, source, reference, alt_reference, value_date,
                          amount_minor, currency, direction, account, account_last4, digest, refers_to,
                          run_id, record_no, line, detail)
    SELECT $1, own_key || ':reclass', 'reclass', $5, reference, alt_reference, value_date,
           amount_minor, currency, direction, account, account_last4, digest, settles_id,
           $2, seq, line, 'reclassified from ' || suspense
      FROM cand
     ORDER BY own_key
    ON CONFLICT (tenant_id, posting_key) DO NOTHING
    RETURNING id, account, direction, amount_minor, currency, value_date, refers_to
)
INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
SELECT $1, ins.id, l.leg_no, l.account, l.direction, ins.amount_minor, ins.currency, ins.value_date
  FROM ins
 CROSS JOIN LATERAL (SELECT account FROM postings WHERE tenant_id || '' = $1 AND id = ins.refers_to LIMIT 1) c
 CROSS JOIN LATERAL (VALUES
       (1::smallint, ins.account, ins.direction),
       (2::smallint, c.account, CASE ins.direction WHEN 'C' THEN 'D' ELSE 'C' END)
 ) AS l(leg_no, account, direction)`

// sourceLockClass namespaces the advisory locks that order corrections and
// ingests of one source.
const sourceLockClass = 7412

// LockSource orders the ledger writes of one tenant and source that a
// correction could otherwise race. Every ingest chunk takes the lock shared,
// so ingests run side by side; posting a correction takes it exclusive.
// Without it, an approval that found the money still missing and an ingest
// of the original that found no posted correction could both commit, and
// move the money twice. The lock is held until tx ends.
func LockSource(ctx context.Context, tx pgx.Tx, tenant, source string, exclusive bool) error {
	fn := "pg_advisory_xact_lock_shared"
	if exclusive {
		fn = "pg_advisory_xact_lock"
	}
	if _, err := tx.Exec(ctx, `SELECT `+fn+`($1, hashtext($2))`, sourceLockClass, tenant+"\x1f"+source); err != nil {
		return fmt.Errorf("ledger: lock source %s: %w", source, err)
	}
	return nil
}
