package ledger

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/internal/db"
	"github.com/clearing-dev/clearing/internal/runs"
)

// The quarantine is an inventory (docs/decisions/quarantine-inventory.md):
// a record that cannot post is held once, under its key and digest, by the
// run that first met it (table quarantine, migration 00017), until a final
// decision closes it (quarantine_decisions): released when it posted, or
// dismissed by an operator. The statements below keep it as a chunk is
// applied, in the chunk's transaction:
//
//   - releaseLinked posts the held orphan returns and reversals whose
//     original the chunk's records may have brought, through the same
//     INSERT ... ON CONFLICT as a staged return (linkedInsert), and
//     records each release;
//   - closePosted closes what a staged record of the chunk posted itself
//     (the orphan's own file ingested again once its original is there, a
//     held re-send let through);
//   - markHeld gives a staged record that an earlier run holds already
//     the outcome already_quarantined, or quarantine_dismissed once an
//     operator dismissed it, so that it is audited as what it is and is
//     not held again;
//   - holdQuarantined holds what this chunk audited as needing a person.
var (
	holdQuarantine = db.Routine{Name: "clearing_hold_quarantined", Args: "text, bigint, bigint, bigint", Returns: "SETOF bigint", Body: insertQuarantine}
	releaseLinked  = db.Routine{Name: "clearing_release_linked", Args: "text, bigint, bigint, bigint, integer", Returns: "SETOF bigint",
		Body: releaseStatement(`q.link_reference IN (
                   SELECT r.ref FROM record_stage s
                    CROSS JOIN LATERAL (VALUES (s.reference), (s.alt_reference), (s.link_reference)) r(ref)
                    WHERE s.seq BETWEEN $3 AND $4 AND r.ref IS NOT NULL)
               AND q.link_depth = $5`, `'its original was posted by run ' || $2`)}
	releaseKeys = db.Routine{Name: "clearing_release_keys", Args: "text, bigint, text[], integer, text", Returns: "SETOF bigint",
		Body: releaseStatement(`(q.record_key = ANY ($3) OR q.own_key = ANY ($3)) AND q.link_depth = $4`, `$5`)}
	closeHeld = db.Routine{Name: "clearing_close_posted", Args: "text, bigint, bigint, bigint", Returns: "SETOF bigint", Body: closePostedStatement}
	markHeld  = db.Routine{Name: "clearing_mark_held", Args: "text, bigint, bigint, bigint", Returns: "void", Body: markHeldStatement}
	// heldState says whether the tenant holds any record, and any open one.
	heldState = db.Routine{Name: "clearing_held_state", Args: "text, bigint", Returns: "TABLE (any_held boolean, any_open boolean)", Body: `
SELECT EXISTS (SELECT 1 FROM quarantine q WHERE q.tenant_id = $1),
       EXISTS (SELECT 1 FROM quarantine q WHERE q.tenant_id = $1 AND ` + openHeld + `)`}
	settleSuspense = db.Routine{Name: "clearing_settle_suspense", Args: "text, bigint, bigint, bigint", Returns: "void", Body: settleSuspenseStatement}
)

// openHeld is a held record no decision has closed. Held records are few
// (a person looks at each), so a scan of a tenant's is cheap.
const openHeld = `NOT EXISTS (SELECT 1 FROM quarantine_decisions d
                    WHERE d.tenant_id = $1 AND d.record_key = q.record_key AND d.digest = q.digest)`

// insertQuarantine holds every record this run audited in the chunk as
// needing a person, except conflicts (which are a conflict's own business)
// and records held already: one row per key and digest, the first event.
const insertQuarantine = `
WITH src AS MATERIALIZED (
    SELECT DISTINCT ON (e.record_key, e.digest) $1::text, e.record_key, e.digest, e.verdict, e.kind, r.source, e.own_key, $2::bigint, e.id,
           e.record_no, e.line, e.reference, s.alt_reference, e.amount_minor, e.currency, e.direction, e.account,
           e.account_last4, e.value_date, e.detail, s.link_reference, s.link_by_alt, s.link_prefix, s.link_suffix,
           s.link_parent_suffix, s.link_depth, s.link_fallback, s.link_fallback_prefix, s.settle_amount, s.settle_currency, s.settle_group
      FROM audit_events e
      JOIN record_stage s ON s.seq = e.record_no AND s.seq BETWEEN $3 AND $4
     CROSS JOIN (SELECT source FROM runs WHERE tenant_id = $1 AND id = $2) r
     WHERE e.tenant_id = $1 AND e.run_id = $2 AND e.record_no BETWEEN $3 AND $4
       AND e.needs_attention AND e.verdict NOT IN ('conflict', 'already_quarantined')
     ORDER BY e.record_key, e.digest, e.id
), ins AS (
    INSERT INTO quarantine (tenant_id, record_key, digest, verdict, kind, source, own_key, first_run_id, first_event_id,
                            record_no, line, reference, alt_reference, amount_minor, currency, direction, account,
                            account_last4, value_date, detail, link_reference, link_by_alt, link_prefix, link_suffix,
                            link_parent_suffix, link_depth, link_fallback, link_fallback_prefix, settle_amount, settle_currency, settle_group)
    SELECT * FROM src
    ON CONFLICT (tenant_id, record_key, digest) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM ins`

// releaseStatement posts the open orphan returns and reversals that which
// selects and that now resolve to exactly one original, as resolveLinks
// would resolve them had they arrived now, and records their release with
// reason. A record whose derived key is posted already with its digest (it
// posted some other way) is released without posting; one whose key is
// posted with other content stays held. The posting names the run and
// line where the record arrived, as a staged one does.
func releaseStatement(which, reason string) string {
	cand := `
    SELECT DISTINCT ON (x.posting_key) x.*
      FROM (
        SELECT q.*, q.first_run_id AS run_id, q.record_no AS seq, o.base_key || q.link_suffix AS posting_key,
               par.id AS parent_id, par.amount_minor AS parent_amount, par.direction AS parent_direction,
               par.account AS parent_account, par.kind AS parent_kind, par.currency AS parent_currency,
               o.base_direction
          FROM quarantine q
         CROSS JOIN LATERAL (SELECT count(DISTINCT p.id) AS n, min(p.id) AS base_id, min(p.posting_key) AS base_key,
                                    min(p.direction) AS base_direction
                               FROM (` + originsOf("q") + `) p) o
          LEFT JOIN LATERAL (SELECT * FROM postings
                              WHERE o.n = 1 AND tenant_id = $1 AND posting_key = o.base_key || q.link_parent_suffix
                              LIMIT 1) pk ON true
          LEFT JOIN LATERAL (SELECT * FROM postings
                              WHERE o.n = 1 AND pk.id IS NULL AND q.link_parent_suffix = ''
                                AND tenant_id = $1 AND id = o.base_id
                              LIMIT 1) pi ON true
         CROSS JOIN LATERAL (SELECT coalesce(pk.id, pi.id) AS id, coalesce(pk.currency, pi.currency) AS currency,
                                    coalesce(pk.amount_minor, pi.amount_minor) AS amount_minor,
                                    coalesce(pk.direction, pi.direction) AS direction,
                                    coalesce(pk.account, pi.account) AS account, coalesce(pk.kind, pi.kind) AS kind) par
         WHERE q.tenant_id = $1 AND q.verdict = 'orphan_return' AND q.kind IN ('return', 'reversal')
           AND ` + which + `
           AND ` + openHeld + `
      ) x
     WHERE x.parent_id IS NOT NULL AND x.currency = x.parent_currency AND x.direction = x.base_direction
       AND x.amount_minor > 0 AND x.amount_minor <= x.parent_amount
     ORDER BY x.posting_key, x.record_key, x.digest`
	more := `, pre AS (
    SELECT c.record_key, c.digest, p.id FROM cand c
     CROSS JOIN LATERAL (SELECT id, digest FROM postings WHERE tenant_id = $1 AND posting_key = c.posting_key LIMIT 1) p
     WHERE p.digest = c.digest
), dec AS (
    INSERT INTO quarantine_decisions (tenant_id, record_key, digest, decision, run_id, posting_id, reason)
    SELECT $1, c.record_key, c.digest, 'released', $2, i.id, ` + reason + `
      FROM ins i JOIN cand c ON c.posting_key = i.posting_key
    UNION ALL
    SELECT $1, pre.record_key, pre.digest, 'released', $2, pre.id, ` + reason + ` FROM pre
    ON CONFLICT DO NOTHING
)`
	return linkedInsert(cand, more)
}

// closePostedStatement releases the open held records that a staged record
// of the chunk carries, once the record's key is posted with its digest:
// the record posted (now, or before) after all. An in-file duplicate is
// the exception: the posting that matches it is the other record of its
// file, and whether it was a second payment is a person's to say.
const closePostedStatement = `
WITH src AS MATERIALIZED (
    SELECT DISTINCT ON (q.record_key, q.digest) $1::text, q.record_key, q.digest, 'released', $2::bigint, p.id,
           'posted by run ' || $2 || ', where the record arrived again'
      FROM record_stage s
     CROSS JOIN LATERAL (SELECT q.record_key, q.digest FROM quarantine q
                          WHERE q.tenant_id = $1 AND q.record_key = s.own_key AND q.digest = s.digest
                            AND q.verdict <> 'in_file_duplicate' LIMIT 1) q
     CROSS JOIN LATERAL (SELECT id, digest FROM postings
                          WHERE tenant_id = $1 AND posting_key = coalesce(s.posting_key, s.own_key) LIMIT 1) p
     WHERE s.seq BETWEEN $3 AND $4 AND s.outcome IS NULL AND p.digest = s.digest AND ` + openHeld + `
     ORDER BY q.record_key, q.digest
), dec AS (
    INSERT INTO quarantine_decisions (tenant_id, record_key, digest, decision, run_id, posting_id, reason)
    SELECT * FROM src
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM dec`

// markHeldStatement gives the chunk's records that could not post, and
// that an earlier run holds under the same key and digest, the outcome the
// audit then records: already_quarantined while the held record is open,
// quarantine_dismissed once an operator dismissed it. A released one is
// left alone: it posted, so a record that meets it is audited as usual.
const markHeldStatement = `
WITH x AS (
       SELECT s2.seq, d.decision
         FROM record_stage s2
        CROSS JOIN LATERAL (SELECT q.record_key, q.digest FROM quarantine q
                             WHERE q.tenant_id = $1 AND q.record_key = coalesce(s2.posting_key, s2.own_key)
                               AND q.digest = s2.digest AND q.first_run_id <> $2 LIMIT 1) q
         LEFT JOIN LATERAL (SELECT d.decision FROM quarantine_decisions d
                             WHERE d.tenant_id = $1 AND d.record_key = q.record_key AND d.digest = q.digest
                             LIMIT 1) d ON true
        WHERE s2.seq BETWEEN $3 AND $4 AND s2.outcome IS NOT NULL AND s2.outcome <> 'settled_by_correction'
          AND d.decision IS DISTINCT FROM 'released'
)
UPDATE record_stage s
   SET outcome = CASE WHEN x.decision IS NULL THEN 'already_quarantined' ELSE 'quarantine_dismissed' END
  FROM x
 WHERE s.seq = x.seq AND s.seq BETWEEN $3 AND $4`

// applyQuarantine runs the release, close and mark steps for the chunk
// lo..hi of b after its records posted, adding the records it released to
// c.Released. A tenant with nothing held is spared all three.
func applyQuarantine(ctx context.Context, tx pgx.Tx, b *Batch, lo, hi int64, c *runs.Counts) error {
	var held, open bool
	if err := tx.QueryRow(ctx, heldState.Call(), b.Tenant, b.RunID).Scan(&held, &open); err != nil {
		return fmt.Errorf("ledger: look for held records: %w", heldState.Err(err))
	}
	if open {
		for depth := 1; depth <= maxLinkDepth; depth++ {
			var n int64
			if err := tx.QueryRow(ctx, releaseLinked.Call(), b.Tenant, b.RunID, lo, hi, depth).Scan(&n); err != nil {
				return fmt.Errorf("ledger: release held records %d-%d: %w", lo, hi, releaseLinked.Err(err))
			}
			c.Released += n
		}
		if _, err := tx.Exec(ctx, closeHeld.Call(), b.Tenant, b.RunID, lo, hi); err != nil {
			return fmt.Errorf("ledger: close held records %d-%d: %w", lo, hi, closeHeld.Err(err))
		}
	}
	if held {
		if _, err := tx.Exec(ctx, markHeld.Call(), b.Tenant, b.RunID, lo, hi); err != nil {
			return fmt.Errorf("ledger: find held records %d-%d: %w", lo, hi, markHeld.Err(err))
		}
	}
	return nil
}

// holdAudited holds the records of lo..hi that the chunk's audit found
// needing a person.
func holdAudited(ctx context.Context, tx pgx.Tx, b *Batch, lo, hi int64) error {
	if _, err := tx.Exec(ctx, holdQuarantine.Call(), b.Tenant, b.RunID, lo, hi); err != nil {
		return fmt.Errorf("ledger: hold records %d-%d: %w", lo, hi, holdQuarantine.Err(err))
	}
	return nil
}

// settledBySuspense marks the chunk's records that an approved correction
// already posted against suspense while they were held (a quarantined
// correction, migration 00019): the same record, by its own key and
// digest, arriving again, now perhaps with its original in the ledger. Its
// money is in the ledger once already, so it is settled_by_correction and
// does not post a second time under the key its original would give it.
const settledBySuspense = `
WITH x AS (
       SELECT s2.seq, d.posting_id
         FROM record_stage s2
        CROSS JOIN LATERAL (SELECT d.posting_id FROM quarantine q
                              JOIN quarantine_decisions d ON d.tenant_id = q.tenant_id AND d.record_key = q.record_key
                                                         AND d.digest = q.digest
                             WHERE q.tenant_id = $1 AND q.own_key = s2.own_key AND q.digest = s2.digest
                               AND d.tenant_id = $1 AND d.decision = 'posted_to_suspense' LIMIT 1) d
        WHERE s2.seq BETWEEN $3 AND $4 AND s2.outcome IS NULL AND s2.kind IN ('return', 'reversal')
)
UPDATE record_stage s
   SET outcome = 'settled_by_correction', settles_id = x.posting_id
  FROM x
 WHERE s.seq = x.seq AND s.seq BETWEEN $3 AND $4`

// settleSuspended runs settledBySuspense for the chunk lo..hi, when the
// tenant has posted any held record against suspense.
func settleSuspended(ctx context.Context, tx pgx.Tx, b *Batch, lo, hi int64) error {
	if _, err := tx.Exec(ctx, settleSuspense.Call(), b.Tenant, b.RunID, lo, hi); err != nil {
		return fmt.Errorf("ledger: match records to their suspense postings %d-%d: %w", lo, hi, settleSuspense.Err(err))
	}
	return nil
}

// settleSuspenseStatement runs settledBySuspense for the chunk $3..$4 when
// the tenant has posted any held record against suspense.
const settleSuspenseStatement = `
IF EXISTS (SELECT 1 FROM quarantine_decisions WHERE tenant_id = $1 AND decision = 'posted_to_suspense') THEN
        ` + settledBySuspense + `;
    END IF`

// HeldBy returns the runs that first held the records run audited as
// already_quarantined, oldest first.
func HeldBy(ctx context.Context, q Querier, tenant string, run int64) ([]int64, error) {
	rows, err := q.Query(ctx, `
SELECT DISTINCT h.first_run_id
  FROM audit_events e
 CROSS JOIN LATERAL (SELECT q.first_run_id FROM quarantine q
                      WHERE q.tenant_id = $1 AND q.record_key = e.record_key AND q.digest = e.digest LIMIT 1) h
 WHERE e.tenant_id = $1 AND e.run_id = $2 AND e.verdict = 'already_quarantined'
 ORDER BY 1`, tenant, run)
	if err != nil {
		return nil, fmt.Errorf("ledger: runs that held run %d's records: %w", run, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("ledger: runs that held run %d's records: %w", run, err)
	}
	return ids, nil
}
