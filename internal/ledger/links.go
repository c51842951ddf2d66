package ledger

// originsOf is the postings a staged record's link can name: by reference,
// or by alternative reference, each an index probe (one join with an OR of
// the two would compare every link with every posting), and by the link's
// fallback, an alternative reference, only when its reference names none. A record's money is
// carried by its clearing posting, or, when reconciliation found it
// missing, by the correction an operator approved under the record's own
// key: a missing_in_ledger correction, which refers to no posting and whose
// key is the record's, not one derived with ":correction:".
//
// A planner whose statistics knew tenants could take a tenant they do not
// know yet for a handful of rows, and walk all of its postings through the
// primary key once per probe; postings keep no statistics on the tenant
// (migration 00021), so each probe enters the index of the column it looks
// up. The key prefix is tested with left() rather than starts_with(), which
// the primary key could serve. docs/decisions/tenant-unknown-to-the-planner.md
// has the figures.
func originsOf(stage string) string {
	return `
    SELECT ` + origin + ` FROM postings p
     WHERE ` + stage + `.link_reference IS NOT NULL AND NOT ` + stage + `.link_by_alt
       AND p.tenant_id = $1 AND p.reference = ` + stage + `.link_reference
       AND ` + carriesMoney("p") + ` AND left(p.posting_key, length(` + stage + `.link_prefix)) = ` + stage + `.link_prefix
    UNION ALL
    SELECT ` + origin + ` FROM postings p
     WHERE ` + stage + `.link_reference IS NOT NULL AND ` + stage + `.link_by_alt
       AND p.tenant_id = $1 AND p.alt_reference = ` + stage + `.link_reference
       AND ` + carriesMoney("p") + ` AND left(p.posting_key, length(` + stage + `.link_prefix)) = ` + stage + `.link_prefix
    UNION ALL
    SELECT ` + origin + ` FROM postings p
     WHERE ` + stage + `.link_fallback IS NOT NULL AND NOT ` + stage + `.link_by_alt
       AND p.tenant_id = $1 AND p.alt_reference = ` + stage + `.link_fallback
       AND ` + carriesMoney("p") + ` AND left(p.posting_key, length(` + stage + `.link_fallback_prefix)) = ` + stage + `.link_fallback_prefix
       AND NOT EXISTS (SELECT 1 FROM postings by_ref
                        WHERE by_ref.tenant_id = $1 AND by_ref.reference = ` + stage + `.link_reference
                          AND ` + carriesMoney("by_ref") + `
                          AND left(by_ref.posting_key, length(` + stage + `.link_prefix)) = ` + stage + `.link_prefix)`
}

// carriesMoney is the condition that the posting named p is one that
// carries a record's money under its key: its clearing posting; a
// missing_in_ledger correction posted under the key; or, when the
// correction was keyed by a bank's statement, the reclassification the
// record's late arrival posted under <key>:reclass.
func carriesMoney(p string) string {
	return `(` + p + `.kind = 'clearing'
            OR (` + p + `.kind = 'correction' AND ` + p + `.refers_to IS NULL AND strpos(` + p + `.posting_key, ':correction:') = 0)
            OR (` + p + `.kind = 'reclass' AND right(` + p + `.posting_key, 8) = ':reclass'))`
}

// origin names a posting that carries money by the record's key and the
// posting that holds it: a reclassification stands for its correction,
// under the record's own key. A correction and its reclassification are
// then one origin, not two.
const origin = `CASE p.kind WHEN 'reclass' THEN p.refers_to ELSE p.id END AS id,
           CASE p.kind WHEN 'reclass' THEN left(p.posting_key, length(p.posting_key) - 8) ELSE p.posting_key END AS posting_key,
           p.direction`

// resolveLinks finds, for each return or reversal of one link depth, the
// clearing posting it descends from and the posting it undoes (the derived
// key without its last segment), and marks the record with an outcome when
// it must not post: no original, more than one, or an original it does not
// fit. The originals are found in a query of its own (r), from which the
// stage is updated: the stage is the session's own table, which a
// distributed planner joins to the tenant's shard in a query, not in an
// UPDATE. The updated rows are bounded to the chunk as well as joined to it:
// the stage's seq index is a BRIN, which cannot serve the join, and without
// the bound the join hashed the whole stage once per chunk.
var resolveLinks = `
WITH r AS (
    SELECT r.seq, r.n, r.base_key, r.base_direction, par.id, par.currency, par.amount_minor
      FROM (
           SELECT s2.seq, s2.link_parent_suffix, count(DISTINCT p.id) AS n, min(p.id) AS base_id,
                  min(p.posting_key) AS base_key, min(p.direction) AS base_direction
             FROM record_stage s2
             LEFT JOIN LATERAL (` + originsOf("s2") + `) p ON true
            WHERE s2.seq BETWEEN $3 AND $4 AND s2.kind IN ('return', 'reversal') AND s2.link_depth = $5
            GROUP BY s2.seq, s2.link_parent_suffix
      ) r
      LEFT JOIN LATERAL (SELECT * FROM postings
                         WHERE r.n = 1 AND tenant_id = $1 AND posting_key = r.base_key || r.link_parent_suffix
                         LIMIT 1) pk ON true
      -- What a first return undoes is its origin itself, which need not be
      -- posted under the record's key (a bank-keyed correction).
      LEFT JOIN LATERAL (SELECT * FROM postings
                         WHERE r.n = 1 AND pk.id IS NULL AND r.link_parent_suffix = ''
                           AND tenant_id = $1 AND id = r.base_id
                         LIMIT 1) pi ON true
     CROSS JOIN LATERAL (SELECT coalesce(pk.id, pi.id) AS id, coalesce(pk.currency, pi.currency) AS currency,
                                coalesce(pk.amount_minor, pi.amount_minor) AS amount_minor) par
)
UPDATE record_stage s
   SET posting_key    = CASE WHEN r.n = 1 THEN r.base_key || s.link_suffix END,
       base_direction = r.base_direction,
       parent_id      = r.id,
       outcome = CASE
           WHEN s.outcome IS NOT NULL THEN s.outcome -- settled by a suspense posting (settledBySuspense)
           WHEN r.n = 0 THEN 'orphan_return'
           WHEN r.n > 1 THEN 'ambiguous_original'
           WHEN r.id IS NULL THEN 'orphan_return'
           WHEN s.currency <> r.currency OR s.direction <> r.base_direction THEN 'link_mismatch'
           WHEN s.amount_minor > r.amount_minor OR s.amount_minor <= 0 THEN 'exceeds_original'
       END
  FROM r
 WHERE s.seq = r.seq AND s.seq BETWEEN $3 AND $4`

// The lookups of single postings and legs below are LATERAL subqueries with
// LIMIT or OFFSET, which keeps each one an index probe per staged record. As
// plain joins the planner may hash every posting (or leg) of the tenant, once
// per chunk, and ingest slows with the size of the ledger.

// insertLinked posts the resolved returns and reversals of one link depth:
// the legs of the posting they undo, each in the opposite direction. A
// partial reversal moves its own amount on every leg, which balances because
// the postings it can undo have one leg per side. When what it undoes is a
// correction whose money a reclassification has since moved from suspense
// to the customer account, the return takes it back from the customer.
var insertLinked = linkedInsert(`
    SELECT DISTINCT ON (s.posting_key) s.*, $2::bigint AS run_id, $5::text AS source, par.amount_minor AS parent_amount,
           par.direction AS parent_direction, par.account AS parent_account, par.kind AS parent_kind
      FROM record_stage s
     CROSS JOIN LATERAL (SELECT * FROM postings WHERE tenant_id = $1 AND id = s.parent_id LIMIT 1) par
     WHERE s.seq BETWEEN $3 AND $4 AND s.kind IN ('return', 'reversal')
       AND s.link_depth = $6 AND s.outcome IS NULL
     ORDER BY s.posting_key, s.seq`, "")

// linkedInsert is the statement that posts returns and reversals: cand
// selects them, one row per posting key, with the columns of a staged
// record plus run_id and source (those the posting names) and the parent_* columns
// of the posting each undoes; more adds common table expressions after
// ins and leg (see release.go). The statement's value is how many postings
// it inserted.
func linkedInsert(cand, more string) string {
	return `
WITH cand AS MATERIALIZED (` + cand + `
), ins AS (
    INSERT INTO postings (tenant_id, posting_key, kind, source, reference, alt_reference, value_date,
                          amount_minor, currency, direction, account, account_last4, digest, refers_to,
                          run_id, record_no, line, detail, settle_amount, settle_currency, settle_group)
    SELECT $1, posting_key, kind, source, reference, alt_reference, value_date,
           amount_minor, currency, CASE parent_direction WHEN 'C' THEN 'D' ELSE 'C' END,
           coalesce(nullif(account, ''), parent_account), account_last4, digest, parent_id,
           run_id, seq, line, detail, settle_amount, settle_currency, settle_group
      FROM cand
     ORDER BY posting_key
    ON CONFLICT (tenant_id, posting_key) DO NOTHING
    RETURNING id, posting_key, refers_to, amount_minor, value_date
), leg AS (
    INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
    SELECT $1, ins.id, pl.leg_no, coalesce(rc.account, pl.account), CASE pl.direction WHEN 'C' THEN 'D' ELSE 'C' END,
           ins.amount_minor, pl.currency, ins.value_date
      FROM ins
      JOIN cand c ON c.posting_key = ins.posting_key
     CROSS JOIN LATERAL (SELECT * FROM legs WHERE tenant_id = $1 AND posting_id = ins.refers_to OFFSET 0) pl
      LEFT JOIN LATERAL (SELECT r.account FROM postings r
                          WHERE c.parent_kind = 'correction' AND pl.account = c.parent_account
                            AND r.refers_to = ins.refers_to AND r.tenant_id = $1 AND r.kind = 'reclass'
                          LIMIT 1) rc ON true
)` + more + `
SELECT count(*) FROM ins`
}
