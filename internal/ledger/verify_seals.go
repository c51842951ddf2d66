package ledger

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Names of the checks against the seals (migrations/00006_seals.sql).
const (
	checkSealChain = "the seal chain is intact"
	checkSealed    = "every row is sealed and unchanged since"
	checkHeads     = "the recorded chain heads are still in the chain"
)

// Seals summarises a tenant's seal chain. Head is the hash of its latest
// seal: recorded somewhere the database's owner cannot write (a nightly
// job's log, a ticket), it shows later whether seals were rewritten.
type Seals struct {
	Count int64  `json:"count"`
	Head  string `json:"head"`
}

// sealChainQuery finds seals whose hash is not the hash of their content
// chained to their predecessor, and seals whose predecessor is gone (a
// seal deleted, or edited, while the triggers were off).
const sealChainQuery = `
SELECT 'seals', 'seal ' || s.id::text || ' (' || s.table_name || coalesce(' of run ' || s.run_id::text, '') || ')',
       CASE WHEN s.hash <> clearing_seal_link(s.prev_hash, s.tenant_id, s.table_name, s.run_id, s.row_count,
                                                s.amount_minor, s.row_hash)
            THEN 'its hash does not match its content: the seal was changed'
            ELSE 'the seal it follows is gone: a seal was deleted or changed' END
  FROM seals s
 WHERE s.tenant_id = $1
   AND (s.hash <> clearing_seal_link(s.prev_hash, s.tenant_id, s.table_name, s.run_id, s.row_count, s.amount_minor, s.row_hash)
        OR (s.prev_hash IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM seals b WHERE b.tenant_id = $1 AND b.hash = s.prev_hash AND b.id < s.id)))
 ORDER BY s.id`

// sealedQuery recomputes, per table and run, the count, amount and row
// hash of the rows as they are now and compares them with the sum of their
// seals. Row hashes are summed mod 2^63 like the seals sum them, so the
// grouping of rows into statements does not matter.
const sealedQuery = `
WITH now AS (
    SELECT 'postings'::text AS tbl, p.run_id, count(*) AS n, sum(p.amount_minor) AS amount,
           sum(clearing_seal_hash_postings(ROW(p.*)::postings)) % 9223372036854775808 AS h
      FROM postings p WHERE p.tenant_id = $1 GROUP BY p.run_id
    UNION ALL
    SELECT 'legs', NULL::bigint, count(*), sum(l.amount_minor), sum(clearing_seal_hash_legs(ROW(l.*)::legs)) % 9223372036854775808
      FROM legs l WHERE l.tenant_id = $1 HAVING count(*) > 0
    UNION ALL
    SELECT 'notices', n.run_id, count(*), sum(n.amount_minor), sum(clearing_seal_hash_notices(ROW(n.*)::notices)) % 9223372036854775808
      FROM notices n WHERE n.tenant_id = $1 GROUP BY n.run_id
    UNION ALL
    SELECT 'audit_events', e.run_id, count(*), coalesce(sum(e.amount_minor), 0),
           sum(clearing_seal_hash_audit_events(ROW(e.*)::audit_events)) % 9223372036854775808
      FROM audit_events e WHERE e.tenant_id = $1 GROUP BY e.run_id
), sealed AS (
    SELECT s.table_name AS tbl, s.run_id, sum(s.row_count) AS n, sum(s.amount_minor) AS amount,
           sum(s.row_hash) % 9223372036854775808 AS h
      FROM seals s WHERE s.tenant_id = $1 GROUP BY s.table_name, s.run_id
)
SELECT coalesce(a.tbl, s.tbl),
       CASE WHEN coalesce(a.tbl, s.tbl) = 'legs' THEN 'all legs (sealed by tenant, not by run)'
            ELSE coalesce('run ' || coalesce(a.run_id, s.run_id)::text, 'rows of no run (corrections)') END,
       CASE WHEN coalesce(a.n, 0) < coalesce(s.n, 0)
                THEN format('%s rows were sealed, %s remain: rows were deleted', coalesce(s.n, 0), coalesce(a.n, 0))
            WHEN coalesce(a.n, 0) > coalesce(s.n, 0)
                THEN format('%s rows are not sealed: they were written while the seal trigger was off',
                            coalesce(a.n, 0) - coalesce(s.n, 0))
            WHEN a.amount IS DISTINCT FROM s.amount
                THEN format('amounts were sealed at %s in total and are now %s: rows were changed', s.amount, a.amount)
            ELSE 'the rows differ from what was sealed: rows were changed'
       END
  FROM now a FULL JOIN sealed s ON s.tbl = a.tbl AND coalesce(s.run_id, -1) = coalesce(a.run_id, -1)
 WHERE (a.n, a.amount, a.h) IS DISTINCT FROM (s.n, s.amount, s.h)
 ORDER BY 1, 2`

// verifySeals checks the chain and the rows against it, and that each of
// heads (recorded earlier) is still a seal, and returns the chain's
// summary. Without the seal table or its functions (dropped), the checks
// are findings, not errors.
func verifySeals(ctx context.Context, q Querier, tenant string, heads []string, v *Verification) error {
	chain := Check{Name: checkSealChain}
	sealed := Check{Name: checkSealed}
	anchored := Check{Name: checkHeads}
	defer func() {
		v.add(chain)
		v.add(sealed)
		if len(heads) > 0 {
			v.add(anchored)
		}
	}()
	var present bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('seals') IS NOT NULL`).Scan(&present); err != nil {
		return fmt.Errorf("ledger: verify seals: %w", err)
	}
	if !present {
		chain.found("seals", "", "the seal table is missing")
		sealed.found("seals", "", "the seal table is missing: nothing can be compared")
		for _, h := range heads {
			anchored.found("seals", h, "the seal table is missing")
		}
		return nil
	}
	var head []byte
	err := q.QueryRow(ctx, `
SELECT (SELECT count(*) FROM seals WHERE tenant_id = $1),
       (SELECT hash FROM seals WHERE tenant_id = $1 ORDER BY id DESC LIMIT 1)`, tenant).Scan(&v.Seals.Count, &head)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("ledger: verify seals: %w", err)
	}
	v.Seals.Head = hex.EncodeToString(head)
	for _, h := range heads {
		var n int64
		if err := q.QueryRow(ctx, `SELECT count(*) FROM seals WHERE tenant_id = $1 AND hash = decode($2, 'hex')`,
			tenant, h).Scan(&n); err != nil {
			return fmt.Errorf("ledger: verify seals: %w", err)
		}
		if n == 0 {
			anchored.found("seals", h, "no seal has this hash any more: seals were deleted or rewritten since it was recorded")
		}
	}
	if err := collect(ctx, q, &chain, sealChainQuery, tenant); err != nil {
		return err
	}
	return collect(ctx, q, &sealed, sealedQuery, tenant)
}
