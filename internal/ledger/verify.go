package ledger

import (
	"context"
	"fmt"
)

// Check is one of the invariants Verify tests, with what it found.
type Check struct {
	Name     string   `json:"name"`
	OK       bool     `json:"ok"`
	Problems int64    `json:"problems"`
	Examples []string `json:"examples,omitempty"` // a few offending keys or names
}

// Verification is the outcome of Verify.
type Verification struct {
	OK       bool    `json:"ok"`
	Postings int64   `json:"postings"`
	Legs     int64   `json:"legs"`
	Checks   []Check `json:"checks"`
}

// appendOnlyTriggers must exist and be enabled for the ledger to be
// append-only.
var appendOnlyTriggers = []string{
	"postings_append_only", "postings_no_truncate",
	"legs_append_only", "legs_no_truncate", "legs_balance",
	"notices_append_only", "notices_no_truncate",
	"audit_events_append_only", "audit_events_no_truncate",
}

// verifyQueries each return the count of offenders and a few examples.
var verifyQueries = []struct{ name, sql string }{
	{"every posting balances per currency", `
SELECT count(*), (array_agg(key ORDER BY key))[1:5] FROM (
    SELECT p.posting_key AS key
      FROM postings p JOIN legs l ON l.tenant_id = p.tenant_id AND l.posting_id = p.id
     WHERE p.tenant_id = $1
     GROUP BY p.posting_key, l.currency
    HAVING sum(CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END) <> 0) x`},
	{"every posting has at least two legs", `
SELECT count(*), (array_agg(key ORDER BY key))[1:5] FROM (
    SELECT p.posting_key AS key
      FROM postings p LEFT JOIN legs l ON l.tenant_id = p.tenant_id AND l.posting_id = p.id
     WHERE p.tenant_id = $1
     GROUP BY p.posting_key
    HAVING count(l.posting_id) < 2) x`},
	{"every leg belongs to a posting", `
SELECT count(*), (array_agg(l.posting_id::text || '/' || l.leg_no::text))[1:5]
  FROM legs l
 WHERE l.tenant_id = $1
   AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.tenant_id = l.tenant_id AND p.id = l.posting_id)`},
	{"every return, reversal and correction refers to an existing posting", `
SELECT count(*), (array_agg(p.posting_key ORDER BY p.posting_key))[1:5]
  FROM postings p
 WHERE p.tenant_id = $1 AND p.kind IN ('return', 'reversal', 'reclass')
   AND NOT EXISTS (SELECT 1 FROM postings o WHERE o.tenant_id = p.tenant_id AND o.id = p.refers_to)`},
	{"every audit event's references resolve", `
SELECT count(*), (array_agg(e.record_key ORDER BY e.id))[1:5]
  FROM audit_events e
 WHERE e.tenant_id = $1
   AND ((e.existing_posting_id IS NOT NULL AND NOT EXISTS (
             SELECT 1 FROM postings p WHERE p.tenant_id = e.tenant_id AND p.id = e.existing_posting_id))
     OR (e.existing_notice_id IS NOT NULL AND NOT EXISTS (
             SELECT 1 FROM notices n WHERE n.tenant_id = e.tenant_id AND n.id = e.existing_notice_id))
     OR NOT EXISTS (SELECT 1 FROM runs r WHERE r.tenant_id = e.tenant_id AND r.id = e.run_id))`},
}

// Verify checks the ledger's invariants for one tenant: balance, legs,
// references, and that the database still enforces append-only.
func Verify(ctx context.Context, q Querier, tenant string) (Verification, error) {
	v := Verification{OK: true}
	err := q.QueryRow(ctx, `
SELECT (SELECT count(*) FROM postings WHERE tenant_id = $1), (SELECT count(*) FROM legs WHERE tenant_id = $1)`,
		tenant).Scan(&v.Postings, &v.Legs)
	if err != nil {
		return v, fmt.Errorf("ledger: verify: %w", err)
	}
	for _, vq := range verifyQueries {
		c := Check{Name: vq.name}
		if err := q.QueryRow(ctx, vq.sql, tenant).Scan(&c.Problems, &c.Examples); err != nil {
			return v, fmt.Errorf("ledger: verify %q: %w", vq.name, err)
		}
		v.add(c)
	}
	c := Check{Name: "append-only triggers are installed and enabled"}
	rows, err := q.Query(ctx, `
SELECT want.name
  FROM unnest($1::text[]) AS want(name)
 WHERE NOT EXISTS (SELECT 1 FROM pg_trigger t
                    WHERE t.tgname = want.name AND t.tgenabled IN ('O', 'A') AND NOT t.tgisinternal)
 ORDER BY 1`, appendOnlyTriggers)
	if err != nil {
		return v, fmt.Errorf("ledger: verify triggers: %w", err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return v, err
		}
		c.Problems++
		c.Examples = append(c.Examples, name)
	}
	if err := rows.Err(); err != nil {
		return v, fmt.Errorf("ledger: verify triggers: %w", err)
	}
	v.add(c)
	return v, nil
}

func (v *Verification) add(c Check) {
	c.OK = c.Problems == 0
	if !c.OK {
		v.OK = false
	}
	v.Checks = append(v.Checks, c)
}
