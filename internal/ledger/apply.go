// Package ledger is the only code that writes postings, legs, notices,
// their audit events and the ledger's source locks (ledger_locks). Records
// staged by package stage are applied in chunks by set-based statements,
// each chunk in the caller's transaction. The unique index on the key is
// the arbiter of what posts: a chunk of new keys is a plain INSERT in a
// savepoint, which falls back to INSERT ... ON CONFLICT DO NOTHING when the
// index refuses a key, and every record that does not post is written to
// the audit trail in the same transaction. It also reads the ledger back:
// lookups, balances and verify.
package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clearing-dev/clearing/internal/db"
	"github.com/clearing-dev/clearing/internal/runs"
	"github.com/clearing-dev/clearing/internal/stage"
)

// Batch names where staged records go: the tenant, the source whose
// settlement account they move, and the run that posts them.
type Batch struct {
	Tenant string
	Source string
	RunID  int64
	// Holds names the checks that may hold the whole file (see Holds).
	Holds Holds
	// Held is set by Apply when a check held the file: the reason, a
	// verdict such as "possible_resend", for the caller to report.
	Held string
	// AllPosted is set by Apply when the check for a re-sent file found
	// every clearing record from the first chunk on already posted under
	// its key (the same file again): keys are never removed, so no later
	// chunk has a clearing record to post, and none tries. The caller
	// keeps it for the chunks that follow.
	AllPosted bool
	// KeysTaken is set by Apply when a chunk met a key already posted
	// (see postClearingRecords); Fallbacks counts those chunks. The caller
	// keeps both for the chunks that follow.
	KeysTaken bool
	Fallbacks int64
}

// maxLinkDepth bounds the chain return → dishonored → contested.
const maxLinkDepth = 4

// Apply posts the records lo..hi (inclusive) of st, which lives on tx's
// connection, in tx. Clearing records post first, then returns and
// reversals by link depth, so that a return finds an original posted earlier
// in the same chunk. Records that do not post are
// audited with their verdict. Apply writes nothing outside tx, so the caller
// commits the chunk, its audit trail and its run progress together, or none
// of them.
//
// first says that lo is the first record this ingest applies (the file's
// first, or where an interrupted run resumes): the checks of b.Holds then
// look at every record from lo to the end of the stage; later chunks check
// their own records only (see holdIfShifted). When a check holds the file,
// b.Held names why.
func Apply(ctx context.Context, tx pgx.Tx, st *stage.Stage, b *Batch, lo, hi int64, first bool) (runs.Counts, error) {
	var c runs.Counts
	if lo < 1 || lo > hi || hi > st.Len() {
		return c, fmt.Errorf("ledger: records %d-%d are not in a stage of %d", lo, hi, st.Len())
	}
	// A chunk's sorts fit in memory with room to spare; the server's
	// default (4 MB) spills them to disk.
	if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '64MB'`); err != nil {
		return c, fmt.Errorf("ledger: %w", err)
	}
	// A file keyed by line positions takes the source alone: its check for
	// shifted lines and its postings are one decision.
	if err := LockSource(ctx, tx, b, b.Holds.Positional); err != nil {
		return c, err
	}
	if err := applyHolds(ctx, tx, b, lo, hi, st.Len(), first); err != nil {
		return c, err
	}
	p, err := profile(ctx, tx, lo, hi)
	if err != nil {
		return c, err
	}
	if err := settleLateArrivals(ctx, tx, b, lo, hi); err != nil {
		return c, err
	}
	if err := settleSuspended(ctx, tx, b, lo, hi); err != nil {
		return c, err
	}
	var clearingPosted, noticesAdded int64
	if p.clearing > 0 && !b.AllPosted {
		if clearingPosted, err = postClearingRecords(ctx, tx, b, lo, hi); err != nil {
			return c, err
		}
	}
	if p.notices > 0 {
		if err := tx.QueryRow(ctx, postNotices.Call(), b.Tenant, b.RunID, lo, hi, b.Source).Scan(&noticesAdded); err != nil {
			return c, fmt.Errorf("ledger: record notices %d-%d: %w", lo, hi, postNotices.Err(err))
		}
	}
	c.Posted, c.Notices = clearingPosted, noticesAdded
	for depth := 1; depth <= maxLinkDepth; depth++ {
		if p.links[depth] == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, findOriginals.Call(), b.Tenant, b.RunID, lo, hi, depth); err != nil {
			return c, fmt.Errorf("ledger: find originals %d-%d: %w", lo, hi, findOriginals.Err(err))
		}
		var n int64
		if err := tx.QueryRow(ctx, postLinked.Call(), b.Tenant, b.RunID, lo, hi, b.Source, depth).Scan(&n); err != nil {
			return c, fmt.Errorf("ledger: post returns and reversals %d-%d: %w", lo, hi, postLinked.Err(err))
		}
		c.Posted += n
	}
	if err := applyQuarantine(ctx, tx, b, lo, hi, &c); err != nil {
		return c, err
	}
	// When every record that could post did, there is nothing to audit: an
	// ordinary new file skips both audit statements.
	if c.Posted < p.clearing+p.linked() {
		if err := audit(ctx, tx, auditStaged, b, lo, hi, &c); err != nil {
			return c, err
		}
	}
	if noticesAdded < p.notices {
		if err := audit(ctx, tx, auditNotice, b, lo, hi, &c); err != nil {
			return c, err
		}
	}
	if c.Quarantined > 0 {
		if err := holdAudited(ctx, tx, b, lo, hi); err != nil {
			return c, err
		}
	}
	return c, nil
}

// postClearingRecords posts the chunk's clearing records. Until a chunk of
// the run meets a key already posted, it tries a plain INSERT of them in a
// savepoint: in a new file every key is new, and an insert that need not
// prepare for a conflict is cheaper (docs/decisions/write-path.md). When
// the unique index refuses a key, the savepoint is rolled back, the chunk
// posts with INSERT ... ON CONFLICT DO NOTHING, which decides what posts
// and what is a duplicate as it always has, and every later chunk of the
// run goes to it directly.
func postClearingRecords(ctx context.Context, tx pgx.Tx, b *Batch, lo, hi int64) (int64, error) {
	var n int64
	if !b.KeysTaken {
		err := pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
			return sp.QueryRow(ctx, postNewClearing.Call(), b.Tenant, b.RunID, lo, hi, b.Source).Scan(&n)
		})
		if err == nil {
			return n, nil
		}
		if !keyRefused(err) {
			return 0, fmt.Errorf("ledger: post new clearing records %d-%d: %w", lo, hi, postNewClearing.Err(err))
		}
		b.KeysTaken = true
		b.Fallbacks++
	}
	if err := tx.QueryRow(ctx, postClearing.Call(), b.Tenant, b.RunID, lo, hi, b.Source).Scan(&n); err != nil {
		return 0, fmt.Errorf("ledger: post clearing records %d-%d: %w", lo, hi, postClearing.Err(err))
	}
	return n, nil
}

// keyRefused reports whether err is a unique index refusing a row. The
// plain INSERT writes postings and their legs, and only the postings' key
// can be taken; Citus does not pass on which shard's index refused, so
// the index is not checked by name. Were it another index, the ON
// CONFLICT statement that follows, whose only arbiter is the postings'
// key, would be refused by it too, and that error reaches the command.
func keyRefused(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UniqueViolation
}

// chunkProfile counts a chunk's staged records by kind, so that statements
// with nothing to do are not sent.
type chunkProfile struct {
	clearing, notices int64
	links             [maxLinkDepth + 1]int64 // by link depth
}

func (p chunkProfile) linked() int64 {
	var n int64
	for _, l := range p.links {
		n += l
	}
	return n
}

func profile(ctx context.Context, tx pgx.Tx, lo, hi int64) (chunkProfile, error) {
	var p chunkProfile
	rows, err := tx.Query(ctx, `
SELECT kind, link_depth, count(*) FROM record_stage WHERE seq BETWEEN $1 AND $2 GROUP BY kind, link_depth`, lo, hi)
	if err != nil {
		return p, fmt.Errorf("ledger: profile records %d-%d: %w", lo, hi, err)
	}
	var kind string
	var depth int
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&kind, &depth, &n}, func() error {
		switch {
		case kind == "clearing":
			p.clearing += n
		case kind == "notice":
			p.notices += n
		case depth >= 1 && depth <= maxLinkDepth:
			p.links[depth] += n
		default:
			return fmt.Errorf("a %s record with link depth %d", kind, depth)
		}
		return nil
	})
	if err != nil {
		return p, fmt.Errorf("ledger: profile records %d-%d: %w", lo, hi, err)
	}
	return p, nil
}

// audit runs one audit statement and adds its counts by verdict.
func audit(ctx context.Context, tx pgx.Tx, r db.Routine, b *Batch, lo, hi int64, c *runs.Counts) error {
	rows, err := tx.Query(ctx, r.Call(), b.Tenant, b.RunID, lo, hi)
	if err != nil {
		return fmt.Errorf("ledger: audit %d-%d: %w", lo, hi, r.Err(err))
	}
	var verdict string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&verdict, &n}, func() error {
		switch verdict {
		case "duplicate":
			c.Duplicates += n
		case "conflict":
			c.Conflicts += n
		case "settled_by_correction":
			c.Settled += n
		case "already_quarantined":
			c.AlreadyQuarantined += n
		case "quarantine_dismissed":
			c.Dismissed += n
		default:
			c.Quarantined += n
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledger: audit %d-%d: %w", lo, hi, err)
	}
	return nil
}

// insertClearing posts the chunk's clearing records with INSERT ... ON
// CONFLICT DO NOTHING, the arbiter of what posts. DISTINCT ON keeps the
// first of several records sharing a key in the chunk; the audit pass then
// finds the others colliding with a posting of this same run and quarantines
// them as in-file duplicates. Rows are inserted in key order so that
// concurrent ingests of overlapping files wait for each other instead of
// deadlocking. A record that names no account is booked against the
// source's counterparty account, or its fee account when it is a fee (an
// IPM fee collection, a PSP's fee row).
var insertClearing = clearingInsert("ON CONFLICT (tenant_id, posting_key) DO NOTHING")

// insertNewClearing is insertClearing for a chunk whose keys are expected
// to be new: a plain INSERT, which the unique index refuses at the first
// key already taken (see postClearingRecords).
var insertNewClearing = clearingInsert("")

func clearingInsert(onConflict string) string {
	return `
WITH cand AS (
    SELECT DISTINCT ON (own_key) own_key, reference, alt_reference, value_date, amount_minor, currency,
           direction, account, account_last4, digest, seq, line, detail, line_type, settle_amount, settle_currency, settle_group
      FROM record_stage
     WHERE seq BETWEEN $3 AND $4 AND kind = 'clearing' AND outcome IS NULL
     ORDER BY own_key, seq
), ins AS (
    INSERT INTO postings (tenant_id, posting_key, kind, source, reference, alt_reference, value_date,
                          amount_minor, currency, direction, account, account_last4, digest,
                          run_id, record_no, line, detail, settle_amount, settle_currency, settle_group)
    SELECT $1, own_key, 'clearing', $5, reference, alt_reference, value_date,
           amount_minor, currency, direction,
           coalesce(nullif(account, ''), CASE line_type WHEN 'fee' THEN 'fees:' ELSE 'counterparty:' END || $5),
           account_last4, digest, $2, seq, line, detail, settle_amount, settle_currency, settle_group
      FROM cand
     ORDER BY own_key
    ` + onConflict + `
    RETURNING id, account, direction, amount_minor, currency, value_date
), leg AS (
    INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
    SELECT $1, ins.id, l.leg_no, l.account, l.direction, ins.amount_minor, ins.currency, ins.value_date
      FROM ins CROSS JOIN LATERAL (VALUES
           (1::smallint, ins.account, ins.direction),
           (2::smallint, 'settlement:' || $5, CASE ins.direction WHEN 'C' THEN 'D' ELSE 'C' END)
      ) AS l(leg_no, account, direction)
)
SELECT count(*) FROM ins`
}

// insertNotices records the chunk's notices, attached to the posting they
// are about when exactly one matches their link.
var insertNotices = `
WITH cand AS (
    SELECT DISTINCT ON (own_key) *
      FROM record_stage
     WHERE seq BETWEEN $3 AND $4 AND kind = 'notice'
     ORDER BY own_key, seq
), src AS MATERIALIZED (
    SELECT $1::text, c.own_key, $5::text, c.reference, o.id, c.value_date, c.amount_minor,
           c.currency, c.direction, c.account, c.account_last4, c.digest, $2::bigint, c.seq, c.line, c.detail
      FROM cand c
      LEFT JOIN LATERAL (
           SELECT min(p.id) AS id
             FROM (` + originsOf("c") + `) p
           HAVING count(DISTINCT p.id) = 1
      ) o ON true
), ins AS (
    INSERT INTO notices (tenant_id, notice_key, source, reference, posting_id, value_date, amount_minor,
                         currency, direction, account, account_last4, digest, run_id, record_no, line, detail)
    SELECT * FROM src
     ORDER BY own_key
    ON CONFLICT (tenant_id, notice_key) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM ins`
