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
// The ledger knows such a correction by its own row: the posting that
// clearing_post_correction (migration 00007), and nothing else, writes for
// it, of kind correction with the detail 'correction of missing_in_ledger'
// (missingInLedger). It reads no table of the corrections package
// (docs/decisions/late-arrivals-read-the-ledger.md).
//
// Most ingests meet no such correction, so the check costs one small query
// unless one exists for the source: a probe of the partial index
// postings_missing_in_ledger (migration 00013), which holds only these
// postings.
func settleLateArrivals(ctx context.Context, tx pgx.Tx, b *Batch, lo, hi int64) error {
	var any bool
	if err := tx.QueryRow(ctx, settleLate.Call(), b.Tenant, b.RunID, b.Source, lo, hi).Scan(&any); err != nil {
		return fmt.Errorf("ledger: match records to corrections %d-%d: %w", lo, hi, settleLate.Err(err))
	}
	if !any {
		return nil
	}
	if _, err := tx.Exec(ctx, postReclass.Call(), b.Tenant, b.RunID, lo, hi, b.Source); err != nil {
		return fmt.Errorf("ledger: reclassify settled records %d-%d: %w", lo, hi, postReclass.Err(err))
	}
	return nil
}

// settleLateStatement runs markSettled for the chunk $4..$5 of source $3
// when the source has a posted missing_in_ledger correction, and says
// whether it did.
const settleLateStatement = `
IF NOT EXISTS (SELECT 1 FROM postings WHERE tenant_id = $1 AND source = $3 AND ` + missingInLedger + `) THEN
        RETURN false;
    END IF;
    ` + markSettled + `;
    RETURN true`

// missingInLedger is the mark of a posted missing_in_ledger correction on
// its posting, the predicate of the partial index postings_missing_in_ledger
// (migration 00013), written the same way so that the planner can use the
// index. Only clearing_post_correction writes kind correction, with the
// detail 'correction of ' || class: no routine of the ingest path writes
// that kind, and no role but the schema's owner writes postings itself
// (migrations 00007 and 00010; ledger verify finds a correction posting
// that no correction posted). So a correction of this class is posted
// exactly when such a posting of its source exists.
const missingInLedger = `kind = 'correction' AND detail = 'correction of missing_in_ledger'`

// markSettled matches the chunk's clearing records to posted
// missing_in_ledger corrections of the source, found by their postings
// (missingInLedger).
//
// A record settles a correction by its key: the correction posted under the
// record's own key (the statement was the same kind of file), or an earlier
// record with this key already settled it. A record with another key is a
// payment of its own, however alike: ACH trace numbers are reused, and next
// week's entry with this week's trace and amount must post.
//
// Only a correction whose key is of another kind than the record's (a bank
// statement, keyed by the bank) can be matched otherwise, by reference: the
// same currency, amount and direction within settleWindowDays of its value
// date, and only while no record has settled it yet. When more than one
// record of the file could settle it, none does: they are
// ambiguous_settlement, for a person, rather than a guess that swallows one
// payment or posts one twice.
//
// A record whose key matched but whose money differs is a conflict. The
// matches are equality joins, each an index probe: one join on an OR of
// them would compare every record of the chunk with every correction.
const markSettled = `
WITH cp AS MATERIALIZED (
    SELECT p.id, p.posting_key, p.reference, p.currency, p.value_date, p.amount_minor, p.direction,
           split_part(p.posting_key, ':', 1) AS key_kind, st.own_key AS settled_key
      FROM postings p
      LEFT JOIN LATERAL (SELECT a.own_key FROM audit_events a
                          WHERE a.tenant_id = $1 AND a.existing_posting_id = p.id AND a.verdict = 'settled_by_correction'
                          ORDER BY a.id LIMIT 1) st ON true
     WHERE p.tenant_id = $1 AND p.source = $3 AND ` + missingInLedger + `
), open AS MATERIALIZED (
    SELECT * FROM cp WHERE settled_key IS NULL
), cand AS (
    -- Every record of the file, not only the chunk's, counts as a
    -- candidate: a correction is settled by the one record of the file
    -- that fits it, or by none.
    SELECT o.id, k.seq
      FROM open o
      JOIN record_stage k ON k.reference = o.reference AND k.currency = o.currency
     WHERE k.kind = 'clearing' AND split_part(k.own_key, ':', 1) <> o.key_kind
       AND k.amount_minor = o.amount_minor AND k.direction = o.direction
       AND abs(o.value_date - k.value_date) <= ` + settleWindowDays + `
), by_ref AS (
    SELECT id, count(*) AS n FROM cand GROUP BY id
), chunk AS (
    SELECT seq, own_key, amount_minor, currency, direction
      FROM record_stage WHERE seq BETWEEN $4 AND $5 AND kind = 'clearing' AND outcome IS NULL
), hit AS (
    SELECT k.seq, 0 AS rank, cp.id, k.amount_minor AS s_amount, k.currency AS s_currency, k.direction AS s_direction
      FROM chunk k JOIN cp ON cp.posting_key = k.own_key
    UNION ALL
    SELECT k.seq, 1, cp.id, k.amount_minor, k.currency, k.direction
      FROM chunk k JOIN cp ON cp.settled_key = k.own_key
    UNION ALL
    -- The one candidate settles the correction; several are all ambiguous.
    SELECT k.seq, CASE WHEN r.n = 1 THEN 2 ELSE 3 END, c.id, NULL, NULL, NULL
      FROM cand c
      JOIN by_ref r ON r.id = c.id
      JOIN chunk k ON k.seq = c.seq
), m AS (
    SELECT DISTINCT ON (h.seq) h.seq, h.id, h.rank,
           coalesce(h.s_amount = p.amount_minor AND h.s_currency = p.currency AND h.s_direction = p.direction, true) AS same,
           r.reclassed IS NOT NULL AS reclassed
      FROM hit h JOIN cp p ON p.id = h.id
      LEFT JOIN LATERAL (SELECT true AS reclassed FROM postings r
                          WHERE r.tenant_id = $1 AND r.refers_to = h.id AND r.kind = 'reclass' LIMIT 1) r ON true
     ORDER BY h.seq, h.rank, h.id
)
UPDATE record_stage s
   SET settles_id = CASE WHEN m.rank < 3 THEN m.id END,
       outcome = CASE WHEN m.rank = 3 THEN 'ambiguous_settlement'
                      WHEN NOT m.same THEN 'conflict'
                      WHEN m.reclassed THEN 'duplicate'
                      ELSE 'settled_by_correction' END
  FROM m
 WHERE s.seq = m.seq AND s.seq BETWEEN $4 AND $5`

// settleWindowDays bounds, in days either side of a correction's value
// date, the records a bank-keyed correction can be matched to by
// reference: reconciliation's default date window.
const settleWindowDays = "3"

// insertReclass moves a settled record's money from the suspense account
// the correction used to the customer account the record names: the
// suspense leg undoes the correction's, the customer leg is the record's.
// The settlement account is not touched again.
const insertReclass = `
WITH cand AS MATERIALIZED (
    SELECT DISTINCT ON (s.own_key) s.*, p.account AS suspense
      FROM record_stage s
     -- Only an approved missing_in_ledger correction of the source is
     -- reclassified, known by the mark on its posting: the stage is the
     -- caller's, and names whatever it likes.
     CROSS JOIN LATERAL (SELECT account FROM postings WHERE tenant_id = $1 AND id = s.settles_id
                            AND source = $5 AND ` + missingInLedger + ` LIMIT 1) p
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
 CROSS JOIN LATERAL (SELECT account FROM postings WHERE tenant_id = $1 AND id = ins.refers_to LIMIT 1) c
 CROSS JOIN LATERAL (VALUES
       (1::smallint, ins.account, ins.direction),
       (2::smallint, c.account, CASE ins.direction WHEN 'C' THEN 'D' ELSE 'C' END)
 ) AS l(leg_no, account, direction)`

// LockSource orders the ledger writes of one tenant and source that could
// otherwise race. Every ingest chunk takes the lock shared, so ingests run
// side by side; posting a correction, and every chunk of a file keyed by
// line positions, takes it exclusive. Without it, an approval that found
// the money still missing and an ingest of the original that found no
// posted correction could both commit, and move the money twice; so could
// a file and its shifted re-upload, each checked before the other
// committed. The lock is a row lock on ledger_locks, held until tx ends,
// taken in a routine: no reader has UPDATE on that table, so none can stall
// the writers.
func LockSource(ctx context.Context, tx pgx.Tx, b *Batch, exclusive bool) error {
	if _, err := tx.Exec(ctx, lockSource.Call(), b.Tenant, b.RunID, b.Source, exclusive); err != nil {
		return fmt.Errorf("ledger: lock source %s: %w", b.Source, lockSource.Err(err))
	}
	return nil
}

// lockSourceStatement locks source $3's row, exclusive when $4. The
// source's first write creates the row; a concurrent first write creates it
// too, ON CONFLICT waits for that one to commit, and the row can then be
// locked.
const lockSourceStatement = `
FOR try IN 1..3 LOOP
        IF try = 3 THEN
            RAISE EXCEPTION 'clearing: source % of tenant % has no row in ledger_locks', $3, $1;
        END IF;
        IF $4 THEN
            PERFORM FROM ledger_locks WHERE tenant_id = $1 AND source = $3 FOR UPDATE;
        ELSE
            PERFORM FROM ledger_locks WHERE tenant_id = $1 AND source = $3 FOR SHARE;
        END IF;
        EXIT WHEN FOUND;
        INSERT INTO ledger_locks (tenant_id, source) VALUES ($1, $3) ON CONFLICT DO NOTHING;
    END LOOP`
