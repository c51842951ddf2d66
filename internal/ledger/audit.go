package ledger

import "strings"

// auditPostings writes an audit event for every staged posting record of
// the chunk that this run did not post, and counts them by verdict. It runs
// as its own statement so that its snapshot sees postings that concurrent
// ingests committed while this chunk's INSERT waited for them. The events
// are read first (src), and inserted from what was read: the stage is the
// session's own table, which a distributed planner can join to the tenant's
// shard in a query, not in an INSERT into a distributed table.
var auditPostings = `
WITH src AS MATERIALIZED (
    SELECT $1::text, coalesce(s.posting_key, s.own_key), s.own_key, v.verdict,
           v.verdict NOT IN ('duplicate', 'settled_by_correction', 'quarantine_dismissed'), $2::bigint, s.seq, s.line,
           p.id, CASE WHEN v.verdict = 'conflict' THEN clearing_differing_fields(p.amount_minor, p.currency, p.direction,
                      p.account, p.value_date, s.amount_minor, s.currency,
                      CASE WHEN s.kind = 'clearing' THEN s.direction ELSE p.direction END,
                      coalesce(nullif(s.account, ''), p.account), s.value_date) ELSE '{}' END,
           s.kind, ` + auditContent + `
      FROM record_stage s
      -- LIMIT keeps each lateral an index probe per staged record; a plain
      -- join lets the planner hash every posting of the tenant, once per
      -- chunk.
      LEFT JOIN LATERAL (SELECT * FROM postings WHERE tenant_id = $1 AND posting_key = s.posting_key LIMIT 1) k ON true
      -- Only a record that met a correction has settles_id: the test on it
      -- spares every other record the probe.
      LEFT JOIN LATERAL (SELECT * FROM postings WHERE s.settles_id IS NOT NULL AND tenant_id = $1
                                                  AND id = s.settles_id LIMIT 1) c ON true
      CROSS JOIN LATERAL (SELECT coalesce(c.id, k.id) AS id, coalesce(c.run_id, k.run_id) AS run_id,
                                 coalesce(c.record_no, k.record_no) AS record_no,
                                 coalesce(c.digest, k.digest) AS digest, coalesce(c.amount_minor, k.amount_minor) AS amount_minor,
                                 coalesce(c.currency, k.currency) AS currency, coalesce(c.direction, k.direction) AS direction,
                                 coalesce(c.account, k.account) AS account, coalesce(c.value_date, k.value_date) AS value_date) p
      CROSS JOIN LATERAL (SELECT CASE
           WHEN s.outcome IS NOT NULL THEN s.outcome
           WHEN p.run_id = $2 AND NOT (s.is_repeat AND p.digest = s.digest) THEN 'in_file_duplicate'
           WHEN p.digest = s.digest THEN 'duplicate'
           ELSE 'conflict' END AS verdict) v
     WHERE s.seq BETWEEN $3 AND $4 AND s.kind IN ('clearing', 'return', 'reversal')
       AND (s.outcome IS NOT NULL OR (p.run_id = $2 AND p.record_no = s.seq) IS NOT TRUE)
), ev AS (
    INSERT INTO audit_events (tenant_id, record_key, own_key, verdict, needs_attention, run_id, record_no, line,
                              existing_posting_id, differing_fields, kind, reference, amount_minor, currency,
                              direction, account, account_last4, value_date, digest,
                              link_reference, link_prefix, link_suffix, detail)
    SELECT * FROM src
    RETURNING verdict
)
SELECT verdict, count(*) FROM ev GROUP BY verdict`

// auditNotices is auditPostings for notices.
var auditNotices = `
WITH src AS MATERIALIZED (
    SELECT $1::text, s.own_key, s.own_key, v.verdict, v.verdict <> 'duplicate', $2::bigint, s.seq, s.line,
           n.id, CASE WHEN v.verdict = 'conflict' THEN clearing_differing_fields(n.amount_minor, n.currency, n.direction,
                      n.account, n.value_date, s.amount_minor, s.currency, s.direction, s.account, s.value_date)
                 ELSE '{}' END,
           s.kind, ` + auditContent + `
      FROM record_stage s
      CROSS JOIN LATERAL (SELECT * FROM notices WHERE tenant_id = $1 AND notice_key = s.own_key LIMIT 1) n
      CROSS JOIN LATERAL (SELECT CASE
           WHEN n.run_id = $2 AND NOT (s.is_repeat AND n.digest = s.digest) THEN 'in_file_duplicate'
           WHEN n.digest = s.digest THEN 'duplicate'
           ELSE 'conflict' END AS verdict) v
     WHERE s.seq BETWEEN $3 AND $4 AND s.kind = 'notice'
       AND (n.run_id = $2 AND n.record_no = s.seq) IS NOT TRUE
), ev AS (
    INSERT INTO audit_events (tenant_id, record_key, own_key, verdict, needs_attention, run_id, record_no, line,
                              existing_notice_id, differing_fields, kind, reference, amount_minor, currency,
                              direction, account, account_last4, value_date, digest,
                              link_reference, link_prefix, link_suffix, detail)
    SELECT * FROM src
    RETURNING verdict
)
SELECT verdict, count(*) FROM ev GROUP BY verdict`

// auditContent is the part of a staged record that its audit event keeps
// when it is not a plain duplicate (a duplicate's content is its
// posting's: only where it arrived is kept). Each column is a CASE of its
// own rather than a lateral subquery on the verdict, which a distributed
// planner (Citus) answered with nulls.
var auditContent = strings.Join([]string{kept("s.reference"), kept("s.amount_minor"), kept("s.currency"),
	kept("s.direction"), "coalesce(" + kept("s.account") + ", '')", "coalesce(" + kept("s.account_last4") + ", '')",
	kept("s.value_date"), kept("s.digest"), kept("s.link_reference"), kept("s.link_prefix"), kept("s.link_suffix"),
	"coalesce(" + kept("s.detail") + ", '')"}, ",\n           ")

// kept is column unless the record is a plain duplicate.
func kept(column string) string { return "CASE WHEN v.verdict <> 'duplicate' THEN " + column + " END" }
