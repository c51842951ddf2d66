package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clearing-dev/clearing/internal/db"
)

// Check is one of the invariants Verify tests, with what it found.
type Check struct {
	Name     string    `json:"name"`
	OK       bool      `json:"ok"`
	Problems int64     `json:"problems"`
	Examples []string  `json:"examples,omitempty"` // a few offending keys or names
	Findings []Finding `json:"findings,omitempty"` // the first maxFindings problems
}

// Finding is one problem a check found: the table it is in, the key, id or
// name that identifies it there, and what is wrong.
type Finding struct {
	Table   string `json:"table"`
	Key     string `json:"key"`
	Problem string `json:"problem"`
}

// Limits on what one check reports: it counts every problem, and lists
// the first of them.
const (
	maxFindings = 50
	maxExamples = 5
)

// found records one problem.
func (c *Check) found(table, key, problem string) {
	c.Problems++
	if len(c.Findings) < maxFindings {
		c.Findings = append(c.Findings, Finding{Table: table, Key: key, Problem: problem})
	}
	if len(c.Examples) < maxExamples && key != "" {
		c.Examples = append(c.Examples, key)
	}
}

// Verification is the outcome of Verify.
type Verification struct {
	OK       bool    `json:"ok"`
	Postings int64   `json:"postings"`
	Legs     int64   `json:"legs"`
	Seals    Seals   `json:"seals"`
	Checks   []Check `json:"checks"`
}

// verifyQueries each return one row per problem: table, key, what is wrong.
var verifyQueries = []struct{ name, sql string }{
	{"every posting balances per currency", `
SELECT 'legs', p.posting_key, format('debits and credits in %s differ by %s', l.currency,
       abs(sum(CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END)))
  FROM postings p JOIN legs l ON l.tenant_id = p.tenant_id AND l.posting_id = p.id
 WHERE p.tenant_id = $1
 GROUP BY p.posting_key, l.currency
HAVING sum(CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END) <> 0
 ORDER BY 2, l.currency`},
	{"every posting has at least two legs", `
SELECT 'postings', p.posting_key, format('has %s leg(s)', count(l.posting_id))
  FROM postings p LEFT JOIN legs l ON l.tenant_id = p.tenant_id AND l.posting_id = p.id
 WHERE p.tenant_id = $1
 GROUP BY p.posting_key
HAVING count(l.posting_id) < 2
 ORDER BY 2`},
	{"every leg belongs to a posting", `
SELECT 'legs', l.posting_id::text || '/' || l.leg_no::text, 'its posting does not exist'
  FROM legs l
 WHERE l.tenant_id = $1
   AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.tenant_id = l.tenant_id AND p.id = l.posting_id)
 ORDER BY l.posting_id, l.leg_no`},
	{"every return, reversal and correction refers to an existing posting", `
SELECT 'postings', p.posting_key, format('refers to posting %s, which does not exist', p.refers_to)
  FROM postings p
 WHERE p.tenant_id = $1 AND p.kind IN ('return', 'reversal', 'reclass')
   AND NOT EXISTS (SELECT 1 FROM postings o WHERE o.tenant_id = p.tenant_id AND o.id = p.refers_to)
 ORDER BY 2`},
	{"every audit event's references resolve", `
SELECT 'audit_events', e.record_key, format('event %s names a posting, notice or run that does not exist', e.id)
  FROM audit_events e
 WHERE e.tenant_id = $1
   AND ((e.existing_posting_id IS NOT NULL AND NOT EXISTS (
             SELECT 1 FROM postings p WHERE p.tenant_id = e.tenant_id AND p.id = e.existing_posting_id))
     OR (e.existing_notice_id IS NOT NULL AND NOT EXISTS (
             SELECT 1 FROM notices n WHERE n.tenant_id = e.tenant_id AND n.id = e.existing_notice_id))
     OR NOT EXISTS (SELECT 1 FROM runs r WHERE r.tenant_id = e.tenant_id AND r.id = e.run_id))
 ORDER BY e.id`},
	{checkLegShape, legShapeQuery},
	{checkCorrected, correctionQuery},
}

// Verify checks the ledger's invariants for one tenant: balance, legs and
// their shape, references, corrections backed by approvals, that the
// database still enforces append-only with the triggers and functions the
// migrations created, and that every row is as it was sealed when written.
// Each check is one statement, so each sees one consistent snapshot while
// ingests go on. rs are the routines that must be installed as this binary
// installs them (schema.Routines). Each of heads, a seal chain head
// recorded earlier (hex), must still be a seal of the tenant.
func Verify(ctx context.Context, q Querier, tenant string, rs []db.Routine, heads ...string) (Verification, error) {
	v := Verification{OK: true}
	m, err := loadManifest()
	if err != nil {
		return v, fmt.Errorf("ledger: verify: %w", err)
	}
	err = q.QueryRow(ctx, `
SELECT (SELECT count(*) FROM postings WHERE tenant_id = $1), (SELECT count(*) FROM legs WHERE tenant_id = $1)`,
		tenant).Scan(&v.Postings, &v.Legs)
	if err != nil {
		return v, fmt.Errorf("ledger: verify: %w", err)
	}
	for _, vq := range verifyQueries {
		c := Check{Name: vq.name}
		if err := collect(ctx, q, &c, vq.sql, tenant); err != nil {
			return v, err
		}
		v.add(c)
	}
	guards, err := verifyGuards(ctx, q, m)
	if err != nil {
		return v, err
	}
	for _, c := range guards {
		v.add(c)
	}
	routines, err := checkRoutines(ctx, q, rs)
	if err != nil {
		return v, err
	}
	v.add(routines)
	if err := verifySeals(ctx, q, tenant, heads, &v); err != nil {
		return v, err
	}
	if err := verifyDistribution(ctx, q, &v); err != nil {
		return v, err
	}
	return v, nil
}

// collect runs a check's query, whose rows are table, key and problem, and
// records each row as a finding. A query that cannot run because a table,
// column or function it needs is gone (SQLSTATE class 42: dropped, or
// replaced by something else) is itself a finding, not an error: it is
// what tampering looks like.
func collect(ctx context.Context, q Querier, c *Check, sql string, args ...any) error {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return missingObject(c, err)
	}
	var table, key, problem string
	_, err = pgx.ForEachRow(rows, []any{&table, &key, &problem}, func() error {
		c.found(table, key, problem)
		return nil
	})
	if err != nil {
		return missingObject(c, err)
	}
	return nil
}

func missingObject(c *Check, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "42") {
		c.found("", "", "cannot be checked: "+pgErr.Message)
		return nil
	}
	return fmt.Errorf("ledger: verify %q: %w", c.Name, err)
}

func (v *Verification) add(c Check) {
	c.OK = c.Problems == 0
	if !c.OK {
		v.OK = false
	}
	v.Checks = append(v.Checks, c)
}
