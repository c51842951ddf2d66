package main

import "slices"

// snapshotQueries render what the ledger holds for one tenant, without ids
// or times, so that two ledgers built different ways can be compared by
// content: a crashed and resumed run against a clean one, a shuffled
// ingest against an ordered one.
var snapshotQueries = []struct{ name, sql string }{
	{"postings", `
SELECT p.posting_key, p.kind, p.source, coalesce(p.reference, ''), p.value_date::text, p.amount_minor, p.currency,
       p.direction, p.account, p.account_last4, encode(p.digest, 'hex'), coalesce(o.posting_key, ''),
       coalesce(r.file_name, ''), coalesce(p.line, 0), p.detail
  FROM postings p
  LEFT JOIN postings o ON o.tenant_id = p.tenant_id AND o.id = p.refers_to
  LEFT JOIN runs r ON r.tenant_id = p.tenant_id AND r.id = p.run_id
 WHERE p.tenant_id = $1 ORDER BY p.posting_key`},
	{"legs", `
SELECT p.posting_key, l.leg_no, l.account, l.direction, l.amount_minor, l.currency, l.value_date::text
  FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
 WHERE l.tenant_id = $1 ORDER BY p.posting_key, l.leg_no`},
	{"notices", `
SELECT n.notice_key, coalesce(n.reference, ''), coalesce(p.posting_key, ''), n.value_date::text, n.amount_minor,
       coalesce(r.file_name, ''), coalesce(n.line, 0), n.detail
  FROM notices n
  LEFT JOIN postings p ON p.tenant_id = n.tenant_id AND p.id = n.posting_id
  LEFT JOIN runs r ON r.tenant_id = n.tenant_id AND r.id = n.run_id
 WHERE n.tenant_id = $1 ORDER BY n.notice_key`},
	{"audit", `
SELECT e.record_key, e.own_key, e.verdict, e.needs_attention, coalesce(r.file_name, ''), e.line,
       coalesce(p.posting_key, n.notice_key, ''), array_to_string(e.differing_fields, ','), e.amount_minor
  FROM audit_events e
  LEFT JOIN runs r ON r.tenant_id = e.tenant_id AND r.id = e.run_id
  LEFT JOIN postings p ON p.tenant_id = e.tenant_id AND p.id = e.existing_posting_id
  LEFT JOIN notices n ON n.tenant_id = e.tenant_id AND n.id = e.existing_notice_id
 WHERE e.tenant_id = $1 ORDER BY 1, 5, 6, 3`},
	// Rejected runs are left out: they record files that wrote nothing
	// else, and TestRejectedFilesLeaveARunAndNothingElse checks them.
	{"runs", `
SELECT kind, format, source, file_name, file_bytes, encode(file_sha256, 'hex'), status, progress, records,
       posted, duplicates, conflicts, quarantined, notices, skipped
  FROM runs WHERE tenant_id = $1 AND status <> 'rejected' ORDER BY id`},
	{"statement_lines", `
SELECT source, line_key, occurrence, reference, amount_minor, currency, direction, value_date::text, line_type
  FROM statement_lines WHERE tenant_id = $1 ORDER BY source, line_key, occurrence`},
}

// snapshot renders the tenant's postings, legs, notices, audit events, runs
// and statement lines as text. Tables can be left out by name.
func (c *cli) snapshot(skip ...string) string {
	c.t.Helper()
	return c.render(slices.DeleteFunc(slices.Clone(snapshotQueries), func(q struct{ name, sql string }) bool {
		return slices.Contains(skip, q.name)
	}))
}
